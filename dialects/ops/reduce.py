"""Reductions: sum, mean and max over some axes (Relay's reduce ops, attributes axis/keepdims/exclude).

Kernels: runtime/kernels/reduce.py; lowerings: lowering/to_linalg/reduce.py.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import TensorType as T
from xdsl.irdl import operand_def, result_def

from xrelay.dialects.infer import Shape, ShapeError, check_axis, fmt_shape
from xrelay.dialects.op_base import LayoutRule, NNOp, bool_, ints, nn_op

__all__ = ["MaxOp", "MeanOp", "SumOp"]


def reduced_axes(shape: Shape, a: dict) -> tuple[int, ...]:
    """The axes a reduction folds, ascending (Relay's GetReduceAxes): `axis` None or empty means
    every axis; with `exclude` the axes *not* listed; negative axes count from the end."""
    rank = len(shape)
    if not a["axis"]:
        return tuple(range(rank))
    listed = [check_axis(axis, rank, "data", shape) for axis in a["axis"]]
    if len(set(listed)) != len(listed):
        raise ShapeError(f"axis {tuple(a['axis'])} names an axis of 'data' {fmt_shape(shape)} twice")
    if a["exclude"]:
        return tuple(i for i in range(rank) if i not in listed)
    return tuple(sorted(listed))


def reduce(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    axes = reduced_axes(data, a)
    if a["keepdims"]:
        return tuple(1 if i in axes else size for i, size in enumerate(data))
    return tuple(size for i, size in enumerate(data) if i not in axes)


def reduce_nonempty(shapes: list[Shape], a: dict) -> Shape:
    """`reduce`, refusing to fold an empty axis (the max of nothing)."""
    (data,) = shapes
    empty = [i for i in reduced_axes(data, a) if data[i] == 0]
    if empty:
        raise ShapeError(f"axis {empty[0]} of 'data' {fmt_shape(data)} is empty: its max is undefined")
    return reduce(shapes, a)


class _ReduceOp(NNOp):
    data = operand_def(T)
    result = result_def(T)
    axis = ints()
    keepdims = bool_(False)
    exclude = bool_(False)
    SHAPE_RULE = staticmethod(reduce)
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.REDUCE


@nn_op
class SumOp(_ReduceOp):
    name = "nn.sum"


@nn_op
class MeanOp(_ReduceOp):
    """Float tensors only (an integer mean would have to pick a rounding)."""

    name = "nn.mean"
    FLOAT_ONLY: ClassVar[bool] = True


@nn_op
class MaxOp(_ReduceOp):
    name = "nn.max"
    SHAPE_RULE = staticmethod(reduce_nonempty)
