"""Kernels of the elementwise ops (dialects/ops/elementwise.py)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xrelay.dialects import nn
from xrelay.dialects.infer import normalize_axis
from xrelay.dialects.ops.elementwise import integer_clip_bounds
from xrelay.runtime.reference.nn_kernels.base import Kernel, along_axis, kernel
from xrelay.runtime.math_functions import erf as erf_function


def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray], name: str) -> Kernel:
    def binary(attrs: dict, lhs, rhs):
        try:
            out = fn(lhs, rhs)
        except ValueError as err:
            raise ValueError(f"{name}: shapes {lhs.shape} and {rhs.shape} do not broadcast") from err
        return np.asarray(out).astype(np.result_type(lhs.dtype, rhs.dtype), copy=False)

    binary.__doc__ = f"``{name}`` with numpy broadcasting."
    return binary


def _divide(lhs, rhs):
    if np.issubdtype(lhs.dtype, np.integer) and np.issubdtype(rhs.dtype, np.integer):
        # Relay's integer division truncates toward zero, like C.
        quotient = np.abs(lhs) // np.abs(rhs)
        return np.where((lhs < 0) != (rhs < 0), -quotient, quotient)
    return np.divide(lhs, rhs)


for _op, _fn in ((nn.AddOp, np.add), (nn.SubtractOp, np.subtract), (nn.MultiplyOp, np.multiply), (nn.DivideOp, _divide),
                 (nn.PowerOp, np.power), (nn.MaximumOp, np.maximum), (nn.MinimumOp, np.minimum)):
    kernel(_op)(_binary(_fn, _op.name))


@kernel(nn.ReluOp)
def relu(attrs: dict, data):
    """``max(data, 0)``."""
    return np.maximum(data, data.dtype.type(0))


@kernel(nn.SqrtOp)
def sqrt(attrs: dict, data):
    """Elementwise square root."""
    return np.sqrt(data)


@kernel(nn.NegativeOp)
def negative(attrs: dict, data):
    """Elementwise negation."""
    return np.negative(data)


@kernel(nn.SigmoidOp)
def sigmoid(attrs: dict, data):
    """``1 / (1 + exp(-x))``; with ``z = exp(-|x|)`` (never overflows) it is ``1 / (1 + z)`` for
    ``x >= 0`` and ``z / (1 + z)`` below, accurate to the last bits at both tails."""
    z = np.exp(-np.abs(data))
    return np.where(data >= 0, 1 / (1 + z), z / (1 + z)).astype(data.dtype, copy=False)


def _unary(fn: Callable[[np.ndarray], np.ndarray], name: str) -> Kernel:
    def unary(attrs: dict, data):
        return np.asarray(fn(data)).astype(data.dtype, copy=False)

    unary.__doc__ = f"``{name}`` elementwise."
    return unary


for _op, _fn in ((nn.TanhOp, np.tanh), (nn.ErfOp, erf_function), (nn.ExpOp, np.exp), (nn.LogOp, np.log),
                 (nn.AbsOp, np.abs)):
    kernel(_op)(_unary(_fn, _op.name))


@kernel(nn.ClipOp)
def clip(attrs: dict, data):
    """``min(max(data, a_min), a_max)``; integer tensors clip to the integers inside the bounds."""
    a_min, a_max = float(attrs["a_min"]), float(attrs["a_max"])
    if np.issubdtype(data.dtype, np.integer):
        a_min, a_max = integer_clip_bounds(a_min, a_max, np.iinfo(data.dtype).bits)
    return np.minimum(np.maximum(data, data.dtype.type(a_min)), data.dtype.type(a_max))


@kernel(nn.LeakyReluOp)
def leaky_relu(attrs: dict, data):
    """``data > 0 ? data : alpha * data``."""
    return np.where(data > 0, data, data * data.dtype.type(attrs.get("alpha", 0.01)))


@kernel(nn.PReluOp)
def prelu(attrs: dict, data, alpha):
    """``data > 0 ? data : alpha[c] * data`` with ``c`` the index along ``axis``."""
    axis = normalize_axis(int(attrs.get("axis", 1)), data.ndim, "nn.prelu")
    if alpha.shape != (data.shape[axis],):
        raise ValueError(f"nn.prelu: alpha {alpha.shape} does not match axis {axis} of data {data.shape}")
    return np.where(data > 0, data, data * along_axis(alpha, axis, data.ndim))


def _truth(fn: Callable[..., np.ndarray], name: str) -> Kernel:
    def truth(attrs: dict, *operands):
        return np.asarray(fn(*operands)).astype(np.int64)

    truth.__doc__ = f"``{name}`` as int64 0/1 (a nonzero integer operand reads as true)."
    return truth


for _op, _fn in ((nn.EqualOp, np.equal), (nn.LessOp, np.less), (nn.LessEqualOp, np.less_equal),
                 (nn.GreaterOp, np.greater), (nn.GreaterEqualOp, np.greater_equal)):
    kernel(_op)(_truth(_fn, _op.name))

for _op, _fn in ((nn.LogicalAndOp, np.logical_and), (nn.LogicalOrOp, np.logical_or),
                 (nn.LogicalXorOp, np.logical_xor), (nn.LogicalNotOp, np.logical_not)):
    kernel(_op)(lambda attrs, *operands, _fn=_fn: _fn(*operands).astype(operands[0].dtype))


@kernel(nn.WhereOp)
def where(attrs: dict, condition, x, y):
    """``condition ? x : y`` with numpy broadcasting (a nonzero condition is true)."""
    return np.where(condition != 0, x, y).astype(x.dtype, copy=False)
