"""Kernels of the elementwise ops (dialects/ops/elementwise.py)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xrelay.dialects import nn
from xrelay.runtime.kernels.base import Kernel, kernel


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


for _op, _fn in ((nn.AddOp, np.add), (nn.SubtractOp, np.subtract), (nn.MultiplyOp, np.multiply), (nn.DivideOp, _divide)):
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
