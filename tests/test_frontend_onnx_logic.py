"""Comparisons, logic and Where at run time: the nn ops against numpy written here at every level, and
the ONNX converters against ONNX Runtime at the nn, linalg, memref and loops levels and through IREE.
Truth values are i64 0/1 tensors (ONNX's booleans compare equal to them)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_models import close, imported_at_every_level, iree_against_onnxruntime, model, run_onnxruntime
from op_levels import LEVELS, run_lowered, run_nn, single_op_module

from xrelay.runtime.iree import backend as iree_backend

RNG = np.random.default_rng(33)


def small_ints(*shape, dtype=np.float32):
    """Values in -2..2, so that equal elements occur."""
    return RNG.integers(-2, 3, shape).astype(dtype)


# --- nn ops against numpy ----------------------------------------------------------------------------------

_x = small_ints(2, 3)
_x[0, 1] = np.nan
_y = small_ints(3)
_i, _j = small_ints(2, 3, dtype=np.int32), small_ints(1, 3, dtype=np.int32)
_a, _b = RNG.integers(0, 3, (2, 3)), RNG.integers(0, 2, (3,))

NN_CASES = [
    ("nn.equal", [_x, _y], (_x == _y).astype(np.int64)),
    ("nn.less", [_x, _y], (_x < _y).astype(np.int64)),
    ("nn.less_equal", [_i, _j], (_i <= _j).astype(np.int64)),
    ("nn.greater", [_x, _y], (_x > _y).astype(np.int64)),
    ("nn.greater_equal", [_i, _j], (_i >= _j).astype(np.int64)),
    ("nn.logical_and", [_a, _b], ((_a != 0) & (_b != 0)).astype(np.int64)),
    ("nn.logical_or", [_a, _b], ((_a != 0) | (_b != 0)).astype(np.int64)),
    ("nn.logical_xor", [_a, _b], ((_a != 0) ^ (_b != 0)).astype(np.int64)),
    ("nn.logical_not", [_a], (_a == 0).astype(np.int64)),
    ("nn.where", [_b.reshape(1, 3), _x, np.full((2, 1), 7.0, np.float32)],
     np.array([[7.0 if c == 0 else v for c, v in zip(_b, row)] for row in _x], np.float32)),
]


@pytest.mark.parametrize("level", ("nn",) + LEVELS)
@pytest.mark.parametrize("op_name, arrays, expected", NN_CASES, ids=[c[0] for c in NN_CASES])
def test_nn_op_matches_numpy(op_name, arrays, expected, level):
    got = run_nn(op_name, arrays, {}) if level == "nn" else run_lowered(op_name, arrays, {}, level)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_logical_ops_reject_float_truth_values():
    with pytest.raises(Exception, match="operand 'condition' must hold integer truth values, got f32"):
        single_op_module("nn.where", [(2,), (2,), (2,)], {})
    with pytest.raises(Exception, match="operand 'lhs' must hold integer truth values, got f32"):
        single_op_module("nn.logical_or", [(2,), (2,)], {})


# --- ONNX converters against ONNX Runtime ------------------------------------------------------------------


def _model(nodes, inputs, outputs):
    """`outputs` maps names to ONNX element types."""
    proto = model(nodes, {n: v.shape for n, v in inputs.items()}, list(outputs))
    for out in proto.graph.output:
        out.type.tensor_type.elem_type = outputs[out.name]
    return proto, inputs


def _compare(op_type):
    return lambda: _model([helper.make_node(op_type, ["x", "y"], ["z"])], {"x": small_ints(2, 3), "y": small_ints(3)},
                          {"z": TensorProto.BOOL})


def _logic(op_type):
    nodes = [helper.make_node("Less", ["x", "zero"], ["neg"]), helper.make_node("Greater", ["y", "zero"], ["pos"]),
             helper.make_node(op_type, ["neg", "pos"], ["z"])]
    zero = helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("c", TensorProto.FLOAT, [], [0.0]))
    return lambda: _model([zero] + nodes, {"x": small_ints(2, 3), "y": small_ints(2, 1)}, {"z": TensorProto.BOOL})


CASES = {
    "equal": _compare("Equal"),
    "less": _compare("Less"),
    "less_or_equal": _compare("LessOrEqual"),
    "greater": _compare("Greater"),
    "greater_or_equal": _compare("GreaterOrEqual"),
    "and": _logic("And"),
    "or": _logic("Or"),
    "xor": _logic("Xor"),
    "not_where": lambda: _model(
        [helper.make_node("Equal", ["x", "y"], ["same"]), helper.make_node("Not", ["same"], ["differ"]),
         helper.make_node("Where", ["differ", "x", "y"], ["z"])],
        {"x": small_ints(2, 3), "y": small_ints(2, 3)}, {"z": TensorProto.FLOAT, "differ": TensorProto.BOOL}),
    "where_known_condition_int": lambda: _model(
        [helper.make_node("Constant", [], ["c"], value=helper.make_tensor("c", TensorProto.BOOL, [3], [1, 0, 1])),
         helper.make_node("Where", ["c", "x", "y"], ["z"])],
        {"x": small_ints(2, 3, dtype=np.int64), "y": small_ints(2, 1, dtype=np.int64)}, {"z": TensorProto.INT64}),
}


def _inputs_typed(proto, inputs):
    for value in proto.graph.input:
        if inputs[value.name].dtype == np.int64:
            value.type.tensor_type.elem_type = TensorProto.INT64
    return proto


def _case(name):
    proto, inputs = CASES[name]()
    return _inputs_typed(proto, inputs), inputs


@pytest.mark.parametrize("name", sorted(CASES))
def test_conversion_matches_onnxruntime_at_every_level(name):
    proto, inputs = _case(name)
    expected = run_onnxruntime(proto, inputs)
    for level, got in imported_at_every_level(proto, inputs):
        got = got if isinstance(got, list) else [got]
        for g, e in zip(got, expected, strict=True):
            assert g.shape == e.shape and close(g, e.astype(g.dtype)), f"{level}: {g} != {e}"


@pytest.mark.slow  # one IREE compilation: 9-50 s on the shared machine
@pytest.mark.skipif(not iree_backend.available(), reason="IREE is not installed (the 'iree' extra)")
def test_every_conversion_through_iree_matches_onnxruntime():
    cases = {name: _case(name) for name in sorted(CASES)}
    for name, g, e in iree_against_onnxruntime(cases):
        assert g.shape == e.shape and close(g, e.astype(g.dtype)), name
