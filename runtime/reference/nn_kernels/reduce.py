"""Kernels of the reductions (dialects/ops/reduce.py)."""

from __future__ import annotations

import numpy as np

from xrelay.dialects import nn
from xrelay.dialects.ops.reduce import reduced_axes
from xrelay.runtime.reference.nn_kernels.base import kernel


def _axes(attrs: dict, data: np.ndarray) -> tuple[int, ...]:
    return reduced_axes(data.shape, {"axis": attrs.get("axis"), "exclude": attrs.get("exclude", False)})


@kernel(nn.SumOp)
def sum_(attrs: dict, data):
    """Sum over the reduced axes, in the operand's dtype."""
    return np.sum(data, axis=_axes(attrs, data), keepdims=bool(attrs.get("keepdims", False)), dtype=data.dtype)


@kernel(nn.MeanOp)
def mean(attrs: dict, data):
    """Mean over the reduced axes (accumulated in float64)."""
    out = np.mean(data, axis=_axes(attrs, data), keepdims=bool(attrs.get("keepdims", False)), dtype=np.float64)
    return np.asarray(out).astype(data.dtype)


@kernel(nn.MaxOp)
def max_(attrs: dict, data):
    """Maximum over the reduced axes (NaN wins, as numpy's)."""
    return np.max(data, axis=_axes(attrs, data), keepdims=bool(attrs.get("keepdims", False)))


def _arg(fn):
    def arg_reduce(attrs: dict, data):
        (axis,) = _axes(attrs, data)
        keepdims = bool(attrs.get("keepdims", False))
        if attrs.get("select_last_index", False):
            last = data.shape[axis] - 1
            return (last - fn(np.flip(data, axis), axis=axis, keepdims=keepdims)).astype(np.int64)
        return fn(data, axis=axis, keepdims=keepdims).astype(np.int64)

    arg_reduce.__doc__ = f"``np.{fn.__name__}`` along the one reduced axis, as int64 (the last position " \
                         "with select_last_index)."
    return arg_reduce


kernel(nn.ArgMaxOp)(_arg(np.argmax))
kernel(nn.ArgMinOp)(_arg(np.argmin))


@kernel(nn.CumSumOp)
def cumsum(attrs: dict, data):
    """``np.cumsum`` along the axis, shifted by one for exclusive, from the end for reverse."""
    axis = attrs["axis"] % data.ndim
    source = np.flip(data, axis) if attrs.get("reverse", False) else data
    out = np.cumsum(source, axis=axis, dtype=data.dtype)
    if attrs.get("exclusive", False):
        out = np.concatenate([np.zeros_like(np.take(out, [0], axis)), np.take(out, range(data.shape[axis] - 1), axis)],
                             axis=axis)
    return np.flip(out, axis) if attrs.get("reverse", False) else out


@kernel(nn.TopKOp)
def topk(attrs: dict, data):
    """The k largest (smallest with is_ascend) along the axis, ties in position order: a stable sort."""
    axis = attrs["axis"] % data.ndim
    keys = data if attrs.get("is_ascend", False) else -data if data.dtype.kind == "f" else ~data
    order = np.take(np.argsort(keys, axis=axis, kind="stable"), range(attrs["k"]), axis=axis)
    return np.take_along_axis(data, order, axis=axis), order.astype(np.int64)
