"""Import-time folding (`frontend/onnx/fold.py`): nodes whose inputs are all known are evaluated by
ONNX's reference evaluator, whatever their op type; only the run-time rest reaches the module."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnx_models import model, run_onnxruntime

from xrelay.frontend import from_onnx
from xrelay.frontend.onnx import OnnxImportError
from xrelay.frontend.onnx.fold import HAND_WRITTEN, implemented
from xrelay.frontend.onnx.model import MAX_OPSET, MIN_OPSET
from xrelay.frontend.onnx.registry import supported
from xrelay.runtime import run


def const(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(array), name))


def nn_ops(module):
    return [op.name for op in module.walk() if op.name.startswith("nn.") and op.name != "nn.constant"]


def test_a_shifted_window_mask_folds_to_one_constant():
    """Swin's attention mask, built from shapes with ScatterND, Equal, Not and Where, is known at
    import: only the run-time Add remains."""
    x = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("ConstantOfShape", ["shape"], ["zeros"],
                         value=helper.make_tensor("v", TensorProto.INT64, [1], [0])),
        const("indices", np.array([[1], [3]], np.int64)),
        const("updates", np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.int64)),
        helper.make_node("ScatterND", ["zeros", "indices", "updates"], ["ids"]),
        const("two", np.array(2, np.int64)),
        helper.make_node("Equal", ["ids", "two"], ["is_two"]),
        helper.make_node("Not", ["is_two"], ["not_two"]),
        const("minus", np.array(-100.0, np.float32)),
        const("zero", np.array(0.0, np.float32)),
        helper.make_node("Where", ["not_two", "minus", "zero"], ["mask"]),
        helper.make_node("Add", ["x", "mask"], ["y"]),
    ]
    proto = model(nodes, {"x": x.shape}, ["y"])
    module, _ = from_onnx(proto)
    assert nn_ops(module) == ["nn.add"]
    ids = np.zeros((4, 4), np.int64)
    ids[1], ids[3] = [1, 2, 3, 4], [5, 6, 7, 8]
    expected = x + np.where(ids != 2, -100.0, 0.0).astype(np.float32)
    np.testing.assert_array_equal(run(module, {"x": x}), expected)
    np.testing.assert_array_equal(run_onnxruntime(proto, {"x": x})[0], expected)


def test_sequences_fold_and_ops_with_function_bodies_expand():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    nodes = [const("c", np.array([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]], np.float32)),
             helper.make_node("SplitToSequence", ["c"], ["seq"], axis=0),
             const("one", np.array(1, np.int64)),
             helper.make_node("SequenceAt", ["seq", "one"], ["row"]),
             helper.make_node("Mish", ["row"], ["soft"]),  # a function op of opset 18
             helper.make_node("Add", ["x", "soft"], ["y"])]
    module, _ = from_onnx(model(nodes, {"x": x.shape}, ["y"], opset=18))
    assert nn_ops(module) == ["nn.add"]
    row = np.array([0.5, 0.0, -1.0])
    mish = row * np.tanh(np.log1p(np.exp(row)))
    np.testing.assert_allclose(run(module, {"x": x}), x + mish.astype(np.float32), rtol=1e-6)


def test_random_ops_are_not_folded_and_a_bad_value_names_the_node():
    nodes = [helper.make_node("RandomNormal", [], ["r"], shape=[3]), helper.make_node("Add", ["x", "r"], ["y"])]
    with pytest.raises(OnnxImportError, match=r"not supported for frontend ONNX: RandomNormal \(1\)"):
        from_onnx(model(nodes, {"x": (3,)}, ["y"]))
    nodes = [const("c", np.zeros(6, np.float32)), const("s", np.array([4, 4], np.int64)),
             helper.make_node("Reshape", ["c", "s"], ["r"], name="bad_reshape"),
             helper.make_node("Add", ["x", "r"], ["y"])]
    with pytest.raises(OnnxImportError, match=r"node 'bad_reshape' \(Reshape\): cannot evaluate at import time"):
        from_onnx(model(nodes, {"x": (4, 4)}, ["y"]))
    nodes = [const("c", np.zeros((2, 3), np.float32)), helper.make_node("SplitToSequence", ["c"], ["seq"]),
             helper.make_node("Identity", ["seq"], ["y"])]
    with pytest.raises(OnnxImportError, match="value 'y' is a sequence of tensors"):
        from_onnx(model(nodes, {}, ["y"]))


@pytest.mark.parametrize("node, opset, arrays", [
    (helper.make_node("ConstantOfShape", ["s"], ["y"]), 13, [np.array([2, 3])]),
    (helper.make_node("ConstantOfShape", ["s"], ["y"], value=helper.make_tensor("v", TensorProto.INT32, [1], [7])),
     9, [np.array([4])]),
    (helper.make_node("Unsqueeze", ["x", "a"], ["y"]), 13, [np.ones((3, 4), np.float32), np.array([-1, 0])]),
    (helper.make_node("Unsqueeze", ["x"], ["y"], axes=[1, 3]), 11, [np.ones((3, 4), np.float32)]),
])
def test_hand_written_evaluations_equal_the_reference_evaluator(node, opset, arrays):
    feeds = dict(zip(node.input, arrays))
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(
        a.dtype), a.shape) for n, a in feeds.items()], [helper.make_empty_tensor_value_info("y")])
    (expected,) = ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
                                     ).run(None, feeds)
    (got,) = HAND_WRITTEN[node.op_type](node, *arrays)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


# --- every op type of ONNX's node tests that has no run-time converter ------------------------------------

UNFOLDED = {
    "Bernoulli": "draws random numbers (fold.NOT_FOLDED)",
    "If": "has subgraphs, which may read values of the enclosing graph",
    "Loop": "has subgraphs, which may read values of the enclosing graph",
    "Scan": "has subgraphs, which may read values of the enclosing graph",
    "SequenceMap": "has subgraphs, which may read values of the enclosing graph",
    "Scatter": "deprecated since opset 11: the reference evaluator has no implementation",
    "ImageDecoder": "the reference evaluator needs Pillow, which xrelay does not depend on",
    "StringConcat": "string tensors: nn has numeric element types only",
    "StringNormalizer": "string tensors: nn has numeric element types only",
    "StringSplit": "string tensors: nn has numeric element types only",
    "RegexFullMatch": "string tensors: nn has numeric element types only",
}
"""Op types of the node tests that are not folded, with the reason."""

_ELEMENT_TYPES = {np.dtype(t) for t in ("float16", "float32", "float64", "int8", "int16", "int32", "int64",
                                        "uint8", "uint16", "uint32", "bool")}


def _representable(value) -> bool:
    if isinstance(value, list):
        return all(_representable(v) for v in value)
    return isinstance(value, np.ndarray | np.generic) and np.asarray(value).dtype in _ELEMENT_TYPES


def _as_constants(case, opset):
    """The case's model with its inputs as Constant (or SequenceConstruct) nodes, at `opset`."""
    graph = case.model.graph
    inputs = case.data_sets[0][0]
    nodes = []
    for info, value in zip(graph.input, inputs):
        if isinstance(value, list):
            names = [f"{info.name}_{i}" for i in range(len(value))]
            nodes += [const(n, v) for n, v in zip(names, value)]
            nodes.append(helper.make_node("SequenceConstruct", names, [info.name]))
        else:
            nodes.append(const(info.name, value))
    folded = helper.make_graph(nodes + list(graph.node), "folded", [], list(graph.output), list(graph.initializer))
    return helper.make_model(folded, opset_imports=[helper.make_opsetid("", opset)], ir_version=8,
                             functions=case.model.functions)


def _node_cases():
    from onnx.backend.test.case import node

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return node.collect_testcases(None)


@pytest.mark.slow
def test_every_node_test_op_without_a_converter_folds_like_the_reference_evaluator():
    """Each node test (inputs turned into constants) of an op type with no run-time converter folds at
    import to the reference evaluator's own outputs, at its opset clamped into xrelay's range."""
    results: dict[str, list[str]] = collections.defaultdict(list)
    for case in _node_cases():
        graph = case.model.graph
        if case.kind != "node" or len(graph.node) != 1 or graph.node[0].domain not in ("", "ai.onnx"):
            continue
        op_type = graph.node[0].op_type
        inputs, _ = case.data_sets[0]
        if supported(op_type) or not all(_representable(v) for v in inputs):
            continue
        opset = min(max(case.model.opset_import[0].version, MIN_OPSET), MAX_OPSET)
        if not implemented(op_type, opset):
            continue  # a standard op only after opset 21: listed in the report, not here
        proto = _as_constants(case, opset)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                expected = ReferenceEvaluator(proto).run(None, {})
            except Exception:  # noqa: BLE001 - the case is invalid at the clamped opset
                continue
            if not all(isinstance(e, np.ndarray) and _representable(e) for e in expected):
                continue  # a sequence, or an element type nn lacks, as a graph output
            try:
                module, params = from_onnx(proto)
                got = run(module, {}, params)
            except OnnxImportError as err:
                results[op_type].append(f"{case.name}: {err}")
                continue
        got = got if isinstance(got, list) else [got]
        for g, e in zip(got, expected, strict=True):
            e = np.asarray(e)
            assert g.shape == e.shape, case.name
            if e.dtype.kind == "f":
                np.testing.assert_allclose(g, e, rtol=1e-6, atol=0, equal_nan=True, err_msg=case.name)
            else:
                np.testing.assert_array_equal(g, e.astype(g.dtype), err_msg=case.name)
        results[op_type].append("ok")
    failed = {op: [r for r in rs if r != "ok"] for op, rs in results.items() if any(r != "ok" for r in rs)}
    assert set(failed) <= set(UNFOLDED), {op: rs[:2] for op, rs in failed.items() if op not in UNFOLDED}
    folded = [op for op, rs in results.items() if all(r == "ok" for r in rs)]
    assert len(folded) > 60, folded
    print(f"folded {len(folded)} op types:", " ".join(sorted(folded)))
