"""Reductions (sum, mean, max with axis/keepdims/exclude) and the normalisations added for ONNX
models (log_softmax, layer_norm, lrn): each kernel against numpy written here (LRN as ONNX
defines its window), every lowering level against the same reference, FoldConstant folding
them, verifier messages and ConvertLayout renumbering their axes after a converted convolution."""

from __future__ import annotations

import math

import numpy as np
import pytest

from xrelay.dialects import nn

import op_levels
from op_levels import LEVELS, fold, run_lowered, run_nn

RNG = np.random.default_rng(5)
X = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
X64 = X.astype(np.float64)
GAMMA3, BETA3 = RNG.standard_normal(3).astype(np.float32), RNG.standard_normal(3).astype(np.float32)
GAMMA5, BETA5 = RNG.standard_normal(5).astype(np.float32), RNG.standard_normal(5).astype(np.float32)


def log_softmax_reference(x, axis):
    x = x.astype(np.float64)
    return x - np.log(np.sum(np.exp(x), axis=axis, keepdims=True))


def layer_norm_reference(x, gamma, beta, axis, eps=1e-5, center=True, scale=True):
    x = x.astype(np.float64)
    shape = [1] * x.ndim
    shape[axis] = -1
    y = (x - x.mean(axis=axis, keepdims=True)) / np.sqrt(x.var(axis=axis, keepdims=True) + eps)
    if scale:
        y = y * gamma.reshape(shape)
    if center:
        y = y + beta.reshape(shape)
    return y


def lrn_reference(x, size, axis=1, bias=2.0, alpha=1e-4, beta=0.75):
    """ONNX's LRN: index c sums the squares over [c - floor((size-1)/2), c + ceil((size-1)/2)]."""
    x = np.moveaxis(x.astype(np.float64), axis, 0)
    out = np.empty_like(x)
    before, after = math.floor((size - 1) / 2), math.ceil((size - 1) / 2)
    for c in range(x.shape[0]):
        window = x[max(0, c - before):min(x.shape[0], c + after + 1)]
        out[c] = x[c] / (bias + alpha / size * np.sum(window * window, axis=0)) ** beta
    return np.moveaxis(out, 0, axis)


# (id, op, operands, attrs, reference in float64 with its shape written out)
CASES = [
    ("sum_axis1", "nn.sum", [X], {"axis": (1,)}, lambda: X64.sum(axis=1), (2, 4, 5)),
    ("sum_all", "nn.sum", [X], {}, lambda: X64.sum(), ()),
    ("sum_all_keepdims", "nn.sum", [X], {"keepdims": True}, lambda: X64.sum().reshape(1, 1, 1, 1), (1, 1, 1, 1)),
    ("sum_empty_axis_list_is_all", "nn.sum", [X], {"axis": ()}, lambda: X64.sum(), ()),
    ("sum_negative_axes_keepdims", "nn.sum", [X], {"axis": (-1, 0), "keepdims": True},
     lambda: X64.sum(axis=(0, 3)).reshape(1, 3, 4, 1), (1, 3, 4, 1)),
    ("mean_spatial_keepdims", "nn.mean", [X], {"axis": (2, 3), "keepdims": True},
     lambda: X64.mean(axis=(2, 3)).reshape(2, 3, 1, 1), (2, 3, 1, 1)),
    ("mean_exclude", "nn.mean", [X], {"axis": (1,), "exclude": True}, lambda: X64.mean(axis=(0, 2, 3)), (3,)),
    ("mean_exclude_keepdims", "nn.mean", [X], {"axis": (0, 3), "exclude": True, "keepdims": True},
     lambda: X64.mean(axis=(1, 2)).reshape(2, 1, 1, 5), (2, 1, 1, 5)),
    ("max_last", "nn.max", [X], {"axis": (-1,)}, lambda: X64.max(axis=3), (2, 3, 4)),
    ("max_exclude_everything_listed", "nn.max", [X], {"axis": (0, 1, 2, 3), "exclude": True}, lambda: X64,
     (2, 3, 4, 5)),
    ("max_middle_keepdims", "nn.max", [X], {"axis": (1, 2), "keepdims": True},
     lambda: X64.max(axis=(1, 2)).reshape(2, 1, 1, 5), (2, 1, 1, 5)),
    ("log_softmax_last", "nn.log_softmax", [X], {}, lambda: log_softmax_reference(X, -1), X.shape),
    ("log_softmax_axis1", "nn.log_softmax", [X * 30], {"axis": 1}, lambda: log_softmax_reference(X * 30, 1), X.shape),
    ("layer_norm_last", "nn.layer_norm", [X, GAMMA5, BETA5], {}, lambda: layer_norm_reference(X, GAMMA5, BETA5, 3),
     X.shape),
    ("layer_norm_axis1_eps", "nn.layer_norm", [X, GAMMA3, BETA3], {"axis": 1, "epsilon": 0.1},
     lambda: layer_norm_reference(X, GAMMA3, BETA3, 1, eps=0.1), X.shape),
    ("layer_norm_no_center", "nn.layer_norm", [X, GAMMA5, BETA5], {"center": False},
     lambda: layer_norm_reference(X, GAMMA5, BETA5, 3, center=False), X.shape),
    ("layer_norm_no_scale", "nn.layer_norm", [X, GAMMA5, BETA5], {"scale": False},
     lambda: layer_norm_reference(X, GAMMA5, BETA5, 3, scale=False), X.shape),
    ("lrn_default", "nn.lrn", [X * 40], {}, lambda: lrn_reference(X * 40, 5), X.shape),
    ("lrn_size3", "nn.lrn", [X], {"size": 3, "alpha": 0.5, "beta": 0.6, "bias": 1.0},
     lambda: lrn_reference(X, 3, bias=1.0, alpha=0.5, beta=0.6), X.shape),
    ("lrn_even_size", "nn.lrn", [X], {"size": 4, "alpha": 0.5, "bias": 1.0},
     lambda: lrn_reference(X, 4, bias=1.0, alpha=0.5), X.shape),
    ("lrn_size2_last_axis", "nn.lrn", [X], {"size": 2, "axis": -1, "alpha": 0.5, "bias": 1.0},
     lambda: lrn_reference(X, 2, axis=3, bias=1.0, alpha=0.5), X.shape),
    ("lrn_size1", "nn.lrn", [X], {"size": 1, "alpha": 0.5, "bias": 1.0}, lambda: lrn_reference(X, 1, bias=1.0, alpha=0.5),
     X.shape),
]
IDS = [c[0] for c in CASES]
PARAMS = [c[1:] for c in CASES]


@pytest.mark.parametrize(("op_name", "arrays", "attrs", "reference", "shape"), PARAMS, ids=IDS)
def test_kernel_matches_reference(op_name, arrays, attrs, reference, shape):
    got = run_nn(op_name, arrays, attrs)
    assert got.shape == shape and got.dtype == np.float32
    np.testing.assert_allclose(got, reference(), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(("op_name", "arrays", "attrs", "reference", "shape"), PARAMS, ids=IDS)
def test_lowered_levels_match_reference(op_name, arrays, attrs, reference, shape, level):
    got = run_lowered(op_name, arrays, attrs, level)
    assert got.shape == shape and got.dtype == np.float32
    np.testing.assert_allclose(got, reference(), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize(("op_name", "arrays", "attrs", "reference", "shape"), PARAMS, ids=IDS)
def test_fold_constant_folds_it(op_name, arrays, attrs, reference, shape):
    names, value = fold(op_name, arrays, attrs)
    assert names == ["nn.constant"]
    assert value.shape == shape
    np.testing.assert_allclose(value, reference(), rtol=2e-6, atol=2e-6)


# --- values worked by hand ------------------------------------------------------------------------

HAND_CASES = [
    ("sum_i32", "nn.sum", [np.arange(6, dtype=np.int32).reshape(2, 3)], {"axis": (1,)}, np.array([3, 12], np.int32)),
    ("max_i32_lowest", "nn.max", [np.array([[-2147483647, -5], [-9, -2147483648]], np.int32)], {"axis": (0,)},
     np.array([-9, -5], np.int32)),
    ("max_nan_wins", "nn.max", [np.array([[1, np.nan], [np.inf, 2]], np.float32)], {"axis": (1,)},
     np.array([np.nan, np.inf], np.float32)),
    ("mean_keepdims", "nn.mean", [np.array([[1, 2], [3, 6]], np.float32)], {"axis": (0,), "keepdims": True},
     np.array([[2, 4]], np.float32)),
    # log_softmax of (0, ln 3): log(1/4), log(3/4); large inputs do not overflow.
    ("log_softmax", "nn.log_softmax", [np.array([[0, math.log(3)], [1000, 1000]], np.float32)], {},
     np.array([[math.log(0.25), math.log(0.75)], [math.log(0.5), math.log(0.5)]], np.float32)),
    # layer_norm of (1, 3): mean 2, variance 1 -> (-1, 1) / sqrt(1 + eps), times gamma, plus beta.
    ("layer_norm", "nn.layer_norm", [np.array([[1, 3]], np.float32), np.array([2, 3], np.float32),
                                     np.array([0.5, 0], np.float32)], {"epsilon": 0.21},
     np.array([[-2 / 1.1 + 0.5, 3 / 1.1]], np.float32)),
    # Channels (1, 2, 3), size 2 (window c..c+1 in ONNX), alpha 2, bias 1, beta 1:
    # 1 / (1 + 1 + 4), 2 / (1 + 4 + 9), 3 / (1 + 9).
    ("lrn_size2", "nn.lrn", [np.array([1, 2, 3], np.float32).reshape(1, 3, 1, 1)],
     {"size": 2, "alpha": 2.0, "bias": 1.0, "beta": 1.0}, np.array([1 / 6, 2 / 14, 3 / 10], np.float32).reshape(1, 3, 1, 1)),
]


@pytest.mark.parametrize("level", ("nn", *LEVELS))
@pytest.mark.parametrize(("op_name", "arrays", "attrs", "expected"), [c[1:] for c in HAND_CASES],
                         ids=[c[0] for c in HAND_CASES])
def test_values_worked_by_hand(op_name, arrays, attrs, expected, level):
    got = run_nn(op_name, arrays, attrs) if level == "nn" else run_lowered(op_name, arrays, attrs, level)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-6)


# --- verifier ----------------------------------------------------------------------------------

ERRORS = [
    ("nn.sum", [X], {"axis": (1, -3)}, r"nn.sum: axis \(1, -3\) names an axis of 'data' \[2, 3, 4, 5\] twice"),
    ("nn.mean", [X], {"axis": (4,)}, r"nn.mean: axis 4 out of range for operand 'data' \[2, 3, 4, 5\]"),
    ("nn.mean", [X.astype(np.int32)], {}, "nn.mean: operand 'data' must have a float element type, got i32"),
    ("nn.max", [np.zeros((2, 0), np.float32)], {"axis": (1,)},
     r"nn.max: axis 1 of 'data' \[2, 0\] is empty: its max is undefined"),
    ("nn.log_softmax", [X], {"axis": -5}, r"nn.log_softmax: axis -5 out of range for operand 'data' \[2, 3, 4, 5\]"),
    ("nn.layer_norm", [X, GAMMA3, BETA5], {}, r"nn.layer_norm: 'gamma' \[3\] must be 1-D of size 5 \(axis -1 of 'data' \[2, 3, 4, 5\]\)"),
    ("nn.layer_norm", [X, GAMMA3, BETA5], {"axis": 1}, r"nn.layer_norm: 'beta' \[5\] must be 1-D of size 3 \(axis 1 of 'data'"),
    ("nn.lrn", [X], {"size": 0}, "nn.lrn: size must be at least 1, got 0"),
    ("nn.lrn", [X.astype(np.float16)[0, 0]], {"axis": 2}, r"nn.lrn: axis 2 out of range for operand 'data' \[4, 5\]"),
]


@pytest.mark.parametrize(("op_name", "arrays", "attrs", "message"), ERRORS)
def test_verifier_messages_name_op_operand_and_shapes(op_name, arrays, attrs, message):
    with pytest.raises(nn.ShapeError, match=message):
        run_nn(op_name, arrays, attrs)


# --- ConvertLayout -----------------------------------------------------------------------------


FOUR = RNG.standard_normal(4).astype(np.float32)
# (op, extra operands, attrs, attrs after conversion to NHWC, whether a transform back follows)
LAYOUT_CASES = [
    ("nn.sum", [], {"axis": (1,)}, {"axis": (3,)}, False),  # NHW is left: no transform needed
    ("nn.mean", [], {"axis": (2, 3), "keepdims": True}, {"axis": (1, 2)}, True),  # N11C back to NC11
    ("nn.mean", [], {"axis": (2, 3)}, {"axis": (1, 2)}, False),  # NC either way
    ("nn.max", [], {"axis": (1,), "exclude": True}, {"axis": (3,), "exclude": True}, False),  # C
    ("nn.max", [], {"axis": (1, 3)}, {"axis": (2, 3)}, False),  # NH either way
    ("nn.sum", [], {}, {"axis": None}, False),  # a scalar
    ("nn.log_softmax", [], {"axis": 1}, {"axis": 3}, True),
    ("nn.layer_norm", [FOUR, FOUR], {"axis": 1}, {"axis": 3}, True),
    ("nn.lrn", [], {"size": 3}, {"axis": 3}, True),
]


@pytest.mark.parametrize(("op_name", "extra", "attrs", "new_attrs", "transform_back"), LAYOUT_CASES)
def test_convert_layout_renumbers_axes(op_name, extra, attrs, new_attrs, transform_back):
    follower = op_levels.conv_then_converted_to_nhwc(op_name, extra, attrs, RNG, (1, 3, 5, 6))
    assert {k: follower.attrs()[k] for k in new_attrs} == new_attrs
    users = [use.operation.name for use in follower.results[0].uses]
    assert users == (["nn.layout_transform"] if transform_back else ["func.return"])
