"""The elementwise math ops added for ONNX models: tanh, erf, exp, log, abs, clip, leaky_relu,
prelu, power, maximum, minimum. Each kernel against Python's math or numpy written here, every
lowering level against the nn level, FoldConstant folding them, integer and IEEE special cases,
verifier messages and ConvertLayout letting them follow a converted convolution."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32
from xdsl.utils.exceptions import VerifyException

from xrelay.dialects import nn

import op_levels
from op_levels import LEVELS, fold, run_lowered, run_nn


def elementwise(fn, *arrays) -> np.ndarray:
    """Python scalar function `fn` on every element (numpy-broadcast operands), in double precision."""
    broadcast = np.broadcast_arrays(*arrays)
    flat = [fn(*(float(a[i]) for a in broadcast)) for i in np.ndindex(broadcast[0].shape)]
    return np.array(flat, dtype=np.float64).reshape(broadcast[0].shape)


def prelu_reference(x, alpha, axis):
    out = np.empty(x.shape, np.float64)
    for index in np.ndindex(*x.shape):
        v = float(x[index])
        out[index] = v if v > 0 else float(alpha[index[axis]]) * v
    return out


RNG = np.random.default_rng(11)
X = (RNG.standard_normal((2, 3, 4, 5)) * 2).astype(np.float32)
POSITIVE = RNG.uniform(0.01, 20.0, (2, 3, 4, 5)).astype(np.float32)
EXPONENT = RNG.uniform(-2.0, 2.0, (3, 1, 5)).astype(np.float32)
ROW = RNG.standard_normal(5).astype(np.float32)
ALPHA3 = RNG.uniform(-0.5, 0.5, 3).astype(np.float32)
ALPHA5 = RNG.uniform(-0.5, 0.5, 5).astype(np.float32)

# (id, op, operands, attrs, reference computed here in double precision)
CASES = [
    ("tanh", "nn.tanh", [X], {}, lambda: elementwise(math.tanh, X)),
    ("erf", "nn.erf", [X], {}, lambda: elementwise(math.erf, X)),
    ("exp", "nn.exp", [X], {}, lambda: elementwise(math.exp, X)),
    ("log", "nn.log", [POSITIVE], {}, lambda: elementwise(math.log, POSITIVE)),
    ("abs", "nn.abs", [X], {}, lambda: elementwise(abs, X)),
    ("clip", "nn.clip", [X], {"a_min": -0.5, "a_max": 1.25}, lambda: elementwise(lambda v: min(max(v, -0.5), 1.25), X)),
    ("clip_relu6", "nn.clip", [X], {"a_min": 0.0, "a_max": 6.0}, lambda: elementwise(lambda v: min(max(v, 0.0), 6.0), X)),
    ("leaky_relu_default", "nn.leaky_relu", [X], {}, lambda: elementwise(lambda v: v if v > 0 else 0.01 * v, X)),
    ("leaky_relu", "nn.leaky_relu", [X], {"alpha": 0.3}, lambda: elementwise(lambda v: v if v > 0 else 0.3 * v, X)),
    ("prelu_axis1", "nn.prelu", [X, ALPHA3], {}, lambda: prelu_reference(X, ALPHA3, 1)),
    ("prelu_last", "nn.prelu", [X, ALPHA5], {"axis": -1}, lambda: prelu_reference(X, ALPHA5, 3)),
    ("power_broadcast", "nn.power", [POSITIVE, EXPONENT], {}, lambda: elementwise(math.pow, POSITIVE, EXPONENT)),
    ("power_square", "nn.power", [X, np.array([2.0], np.float32)], {}, lambda: elementwise(lambda v: v * v, X)),
    ("maximum", "nn.maximum", [X, ROW], {}, lambda: elementwise(max, X, ROW)),
    ("minimum", "nn.minimum", [ROW.reshape(5, 1), ROW], {}, lambda: elementwise(min, ROW.reshape(5, 1), ROW)),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize(("op_name", "arrays", "attrs", "reference"), [c[1:] for c in CASES], ids=IDS)
def test_kernel_matches_reference(op_name, arrays, attrs, reference):
    got = run_nn(op_name, arrays, attrs)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, reference(), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(("op_name", "arrays", "attrs", "reference"), [c[1:] for c in CASES], ids=IDS)
def test_lowered_levels_match_reference(op_name, arrays, attrs, reference, level):
    got = run_lowered(op_name, arrays, attrs, level)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, reference(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("op_name", "arrays", "attrs", "reference"), [c[1:] for c in CASES], ids=IDS)
def test_fold_constant_folds_it(op_name, arrays, attrs, reference):
    names, value = fold(op_name, arrays, attrs)
    assert names == ["nn.constant"]
    np.testing.assert_allclose(value, reference(), rtol=2e-6, atol=1e-7)


# --- integers and special values -------------------------------------------------------------

INTS = np.array([-2147483647, -7, -2, -1, 0, 1, 2, 3, 7, 2147483647], np.int32)
INT_CASES = [
    # Bounds between integers: the integers inside [a_min, a_max] are the bounds (-1 and 2).
    ("clip_fractional", "nn.clip", [INTS], {"a_min": -1.5, "a_max": 2.7}, [-1, -1, -1, -1, 0, 1, 2, 2, 2, 2]),
    ("clip_beyond_int32", "nn.clip", [INTS], {"a_min": -1e30, "a_max": 5e9},
     [-2147483647, -7, -2, -1, 0, 1, 2, 3, 7, 2147483647]),
    ("clip_unbounded_below", "nn.clip", [INTS], {"a_min": -math.inf, "a_max": 0.0}, [-2147483647, -7, -2, -1, 0, 0, 0, 0, 0, 0]),
    ("clip_above_the_range", "nn.clip", [INTS], {"a_min": 1e10, "a_max": math.inf}, [2147483647] * 10),
    ("abs", "nn.abs", [INTS], {}, [2147483647, 7, 2, 1, 0, 1, 2, 3, 7, 2147483647]),
    ("maximum", "nn.maximum", [INTS, np.array([0], np.int32)], {}, [0, 0, 0, 0, 0, 1, 2, 3, 7, 2147483647]),
    ("minimum", "nn.minimum", [INTS, INTS[::-1].copy()], {},
     [-2147483647, -7, -2, -1, 0, 0, -1, -2, -7, -2147483647]),
]


@pytest.mark.parametrize("level", ("nn", *LEVELS))
@pytest.mark.parametrize(("op_name", "arrays", "attrs", "expected"), [c[1:] for c in INT_CASES],
                         ids=[c[0] for c in INT_CASES])
def test_integer_tensors(op_name, arrays, attrs, expected, level):
    got = run_nn(op_name, arrays, attrs) if level == "nn" else run_lowered(op_name, arrays, attrs, level)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, expected)


NAN = np.float32("nan")
SPECIAL_CASES = [
    # NaN propagates through maximum/minimum/clip (numpy's maximum, arith.maximumf) and leaky_relu.
    ("maximum_nan", "nn.maximum", [np.array([NAN, 1, NAN], np.float32), np.array([0, NAN, NAN], np.float32)], {},
     [NAN, NAN, NAN]),
    ("minimum_nan", "nn.minimum", [np.array([NAN, 1, -np.inf], np.float32), np.array([0, NAN, 0], np.float32)], {},
     [NAN, NAN, -np.inf]),
    ("clip_nan_inf", "nn.clip", [np.array([NAN, np.inf, -np.inf, 0.5], np.float32)], {"a_min": 0.0, "a_max": 1.0},
     [NAN, 1, 0, 0.5]),
    # a_min > a_max: min(max(x, a_min), a_max) is a_max everywhere, as in Relay and numpy.
    ("clip_crossed_bounds", "nn.clip", [np.array([-5, 0, 5], np.float32)], {"a_min": 2.0, "a_max": 1.0}, [1, 1, 1]),
    ("leaky_relu_specials", "nn.leaky_relu", [np.array([NAN, -np.inf, np.inf, -0.0], np.float32)], {"alpha": 0.5},
     [NAN, -np.inf, np.inf, -0.0]),
    # C's pow: negative bases keep their sign for odd integer exponents, give NaN for fractional ones.
    ("power_negative_bases", "nn.power",
     [np.array([-2, -2, -8, -3, 0, -0.0, -2], np.float32), np.array([3, 2, 1 / 3, -1, -1, -1, 0.5], np.float32)], {},
     [-8, 4, NAN, -1 / 3, np.inf, -np.inf, NAN]),
    ("log_specials", "nn.log", [np.array([0, -1, np.inf, 1], np.float32)], {}, [-np.inf, NAN, np.inf, 0]),
    ("exp_overflow", "nn.exp", [np.array([100, -200, -np.inf], np.float32)], {}, [np.inf, 0, 0]),
    ("erf_tails", "nn.erf", [np.array([-np.inf, -10, 10, np.inf, -0.0], np.float32)], {}, [-1, -1, 1, 1, -0.0]),
]


@pytest.mark.parametrize("level", ("nn", *LEVELS))
@pytest.mark.parametrize(("op_name", "arrays", "attrs", "expected"), [c[1:] for c in SPECIAL_CASES],
                         ids=[c[0] for c in SPECIAL_CASES])
def test_special_values(op_name, arrays, attrs, expected, level):
    with np.errstate(all="ignore"):  # the infinities and NaNs are the point
        got = run_nn(op_name, arrays, attrs) if level == "nn" else run_lowered(op_name, arrays, attrs, level)
    expected = np.array(expected, np.float32)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert np.array_equal(np.signbit(got[got == 0]), np.signbit(expected[expected == 0]))


# --- verifier ----------------------------------------------------------------------------------


def test_verifier_messages_name_op_operand_and_shapes():
    i32_data = np.zeros((2, 3), np.int32)
    with pytest.raises(nn.ShapeError, match="nn.tanh: operand 'data' must have a float element type, got i32"):
        run_nn("nn.tanh", [i32_data], {})
    with pytest.raises(nn.ShapeError, match="nn.power: operand 'lhs' must have a float element type, got i32"):
        run_nn("nn.power", [i32_data, i32_data], {})
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(nn.ShapeError, match=r"nn.prelu: 'alpha' \[4\] must be 1-D of size 3 \(axis 1 of 'data' \[2, 3, 4\]\)"):
        run_nn("nn.prelu", [x, np.zeros(4, np.float32)], {})
    with pytest.raises(nn.ShapeError, match=r"nn.prelu: axis 3 out of range for operand 'data' \[2, 3, 4\]"):
        run_nn("nn.prelu", [x, np.zeros(4, np.float32)], {"axis": 3})
    with pytest.raises(nn.ShapeError, match=r"nn.maximum: 'lhs' \[2, 3, 4\] and 'rhs' \[3\] do not broadcast"):
        run_nn("nn.maximum", [x, np.zeros(3, np.float32)], {})
    with pytest.raises(nn.ShapeError, match=r"nn.clip: a_min \(nan\) and a_max \(1.0\) must be numbers, not NaN"):
        run_nn("nn.clip", [x], {"a_min": math.nan, "a_max": 1.0})
    with pytest.raises(TypeError, match="nn.clip: required attribute 'a_max' is missing"):
        run_nn("nn.clip", [x], {"a_min": 0.0})
    # A stored result type that the shape rule does not give is a verify error naming both.
    op = nn.LeakyReluOp.create(operands=[nn.ConstantOp(x).result], result_types=[TensorType(f32, [2, 3])])
    with pytest.raises(VerifyException, match=r"nn.leaky_relu: result types \(tensor<2x3xf32>\) differ from the inferred"):
        op.verify()


# --- ConvertLayout -----------------------------------------------------------------------------


@pytest.mark.parametrize(("op_name", "extra", "attrs", "new_attrs"), [
    ("nn.tanh", [], {}, {}),
    ("nn.erf", [], {}, {}),
    ("nn.clip", [], {"a_min": -0.5, "a_max": 0.5}, {"a_min": -0.5, "a_max": 0.5}),
    ("nn.leaky_relu", [], {"alpha": 0.2}, {"alpha": 0.2}),
    ("nn.prelu", [ALPHA3[:1].repeat(4) + np.arange(4, dtype=np.float32)], {}, {"axis": 3}),
    ("nn.maximum", [RNG.standard_normal((4, 1, 1)).astype(np.float32)], {}, {}),
    ("nn.power", [np.array([2.0], np.float32)], {}, {}),
], ids=["tanh", "erf", "clip", "leaky_relu", "prelu", "maximum", "power"])
def test_convert_layout_lets_them_follow_the_conv(op_name, extra, attrs, new_attrs):
    # The op reads the NHWC conv result directly (no transform back in between), with its
    # attributes renumbered for NHWC, and one transform back to NCHW follows it.
    follower = op_levels.conv_then_converted_to_nhwc(op_name, extra, attrs, RNG, (1, 3, 5, 5))
    assert {k: follower.attrs()[k] for k in new_attrs} == new_attrs
    (user,) = [use.operation for use in follower.results[0].uses]
    assert user.name == "nn.layout_transform" and user.attrs()["dst_layout"] == "NCHW"
