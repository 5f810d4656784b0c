"""nn.argmax / nn.argmin (ties, NaN, integers, select_last_index), nn.cumsum (exclusive, reverse) and
nn.topk (ties, ascending, integers) against references written here at every level, and ONNX ArgMax /
ArgMin / CumSum / TopK against ONNX Runtime at the nn, linalg, memref and loops levels and through IREE."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_models import imported_at_every_level, iree_against_onnxruntime, model, run_onnxruntime
from op_levels import LEVELS, run_lowered, run_nn, single_op_module

from xrelay.lowering import lower
from xrelay.runtime import run
from xrelay.runtime.iree import backend as iree_backend
from xrelay.runtime.executor.linalg_exec import run_linalg
from xrelay.runtime.reference.loops_exec import run_loops

RNG = np.random.default_rng(55)
TIES = RNG.integers(-2, 3, (3, 4, 5)).astype(np.float32)  # few values: many ties
WITH_NAN = TIES.copy()
WITH_NAN[1, 2, [1, 3]] = np.nan
INTEGERS = TIES.astype(np.int32)


def _last(fn, data, axis, keepdims=False):
    """numpy's first position from the end, counted from the start."""
    return data.shape[axis] - 1 - fn(np.flip(data, axis), axis=axis, keepdims=keepdims)


NN_CASES = [(op, fn, data, attrs, expected)
            for op, fn in (("nn.argmax", np.argmax), ("nn.argmin", np.argmin))
            for data in (TIES, WITH_NAN, INTEGERS)
            for attrs, expected in (({"axis": [1]}, fn(data, axis=1)),
                                    ({"axis": [-1], "keepdims": True}, fn(data, axis=-1, keepdims=True)),
                                    ({"axis": [2], "select_last_index": True}, _last(fn, data, 2)))]


@pytest.mark.parametrize("level", ("nn",) + LEVELS)
@pytest.mark.parametrize("case", range(len(NN_CASES)))
def test_nn_arg_reductions_match_numpy(case, level):
    op_name, _, data, attrs, expected = NN_CASES[case]
    got = run_nn(op_name, [data], attrs) if level == "nn" else run_lowered(op_name, [data], attrs, level)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, expected)


def _cumsum(data, axis, exclusive, reverse):
    """Running sums written out: element i adds the elements before it (and itself)."""
    data = np.moveaxis(data, axis, -1)
    n = data.shape[-1]
    out = np.zeros_like(data)
    for i in range(n):
        ks = [k for k in range(n) if (k > i if exclusive else k >= i)] if reverse else \
            [k for k in range(n) if (k < i if exclusive else k <= i)]
        for k in ks:
            out[..., i] += data[..., k]
    return np.moveaxis(out, -1, axis)


CUMSUM_CASES = [(data, axis, exclusive, reverse) for data in (TIES + 0.25, INTEGERS.astype(np.int64))
                for axis in (0, -1) for exclusive in (False, True) for reverse in (False, True)]


@pytest.mark.parametrize("level", ("nn",) + LEVELS)
@pytest.mark.parametrize("case", range(len(CUMSUM_CASES)))
def test_nn_cumsum_matches_numpy(case, level):
    data, axis, exclusive, reverse = CUMSUM_CASES[case]
    attrs = {"axis": axis, "exclusive": exclusive, "reverse": reverse}
    got = run_nn("nn.cumsum", [data], attrs) if level == "nn" else run_lowered("nn.cumsum", [data], attrs, level)
    assert got.dtype == data.dtype
    np.testing.assert_allclose(got, _cumsum(data, axis, exclusive, reverse), rtol=1e-6, atol=1e-6)


def _topk(data, k, axis, ascend):
    """Python's sort of (value, position) pairs along the axis: ties in position order."""
    moved = np.moveaxis(data, axis, -1)
    values, positions = np.empty(moved.shape[:-1] + (k,), data.dtype), np.empty(moved.shape[:-1] + (k,), np.int64)
    for where in np.ndindex(moved.shape[:-1]):
        row = moved[where].tolist()
        order = sorted(range(len(row)), key=lambda i: (row[i] if ascend else -row[i], i))[:k]
        values[where], positions[where] = [row[i] for i in order], order
    return np.moveaxis(values, -1, axis), np.moveaxis(positions, -1, axis)


TOPK_CASES = [(data, attrs) for data in (TIES, INTEGERS.astype(np.int64))
              for attrs in ({"k": 3, "axis": 1}, {"k": 2, "axis": 0, "is_ascend": True}, {"k": 5})]


@pytest.mark.parametrize("level", ("nn",) + LEVELS)
@pytest.mark.parametrize("case", range(len(TOPK_CASES)))
def test_nn_topk_matches_a_sort(case, level):
    data, attrs = TOPK_CASES[case]
    if level == "nn":
        got = run(single_op_module("nn.topk", [data], attrs), {"a0": data})
    else:
        lowered = lower(single_op_module("nn.topk", [data], attrs), to=level)
        got = (run_loops if level == "loops" else run_linalg)(lowered, {"a0": data})
    expected = _topk(data, attrs["k"], attrs.get("axis", -1), attrs.get("is_ascend", False))
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)


def test_more_than_one_axis_is_refused():
    with pytest.raises(Exception, match=r"nn.argmax: folds 2 axes of 'data' \[3, 4, 5\]; it takes exactly one"):
        run_nn("nn.argmax", [TIES], {"axis": [0, 1]})


CASES = {
    "argmax_default_axis": ("ArgMax", {}, TIES),
    "argmax_axis_keepdims0": ("ArgMax", {"axis": -1, "keepdims": 0}, TIES),
    "argmax_last_index": ("ArgMax", {"axis": 1, "select_last_index": 1}, TIES),
    "argmin_axis": ("ArgMin", {"axis": 2}, TIES),
    "argmin_int64_last": ("ArgMin", {"axis": 0, "select_last_index": 1}, TIES.astype(np.int64)),
    "topk_largest": ("TopK", {"axis": 1}, TIES),
    "topk_smallest": ("TopK", {"largest": 0}, TIES.astype(np.int64)),
    "cumsum": ("CumSum", {}, TIES),
    "cumsum_exclusive_reverse": ("CumSum", {"exclusive": 1, "reverse": 1}, TIES),
}


def _case(name):
    op_type, attrs, data = CASES[name]
    inputs = ["x", "axis"] if op_type == "CumSum" else ["x", "k"] if op_type == "TopK" else ["x"]
    extra = {"axis": np.array(-2 if attrs else 1, np.int64)} if op_type == "CumSum" else \
        {"k": np.array([3], np.int64)} if op_type == "TopK" else None
    outputs = ["y", "i"] if op_type == "TopK" else ["y"]
    proto = model([helper.make_node(op_type, inputs, outputs, **attrs)], {"x": data.shape}, outputs, extra)
    for out in proto.graph.output:
        if op_type in ("ArgMax", "ArgMin") or out.name == "i" or data.dtype == np.int64:
            out.type.tensor_type.elem_type = TensorProto.INT64
    if data.dtype == np.int64:
        proto.graph.input[0].type.tensor_type.elem_type = TensorProto.INT64
    return proto, {"x": data}


@pytest.mark.parametrize("name", sorted(CASES))
def test_onnx_cases_match_onnxruntime_at_every_level(name):
    proto, inputs = _case(name)
    expected = run_onnxruntime(proto, inputs)
    for level, got in imported_at_every_level(proto, inputs):
        for g, e in zip(got if isinstance(got, list) else [got], expected, strict=True):
            assert g.dtype == e.dtype and g.shape == e.shape, level
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5, err_msg=level)


@pytest.mark.slow  # one IREE compilation: several seconds on the shared machine
@pytest.mark.skipif(not iree_backend.available(), reason="IREE is not installed (the 'iree' extra)")
def test_onnx_cases_through_iree_match_onnxruntime():
    cases = {name: _case(name) for name in sorted(CASES)}
    for name, g, e in iree_against_onnxruntime(cases):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5, err_msg=name)
