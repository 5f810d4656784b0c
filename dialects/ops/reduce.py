"""Reductions: sum, mean and max over some axes (Relay's reduce ops, attributes axis/keepdims/exclude).

Kernels: runtime/reference/nn_kernels/reduce.py; lowerings: lowering/to_linalg/reduce.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import Attribute
from xdsl.irdl import attr_def, operand_def, result_def

from xrelay.dialects.infer import Shape, ShapeError, check_axis, fmt_shape
from xrelay.dialects.attributes import INT, bool_, int_, ints
from xrelay.dialects.op_base import DataOp, LayoutRule, NNOp, family_op, nn_op

__all__ = ["ArgMaxOp", "ArgMinOp", "CumSumOp", "MaxOp", "MeanOp", "SumOp", "TopKOp"]


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


class _ReduceOp(DataOp):
    axis = ints()
    keepdims = bool_(False)
    exclude = bool_(False)
    SHAPE_RULE = staticmethod(reduce)
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.REDUCE


SumOp = family_op(_ReduceOp, "SumOp", "nn.sum")
MeanOp = family_op(_ReduceOp, "MeanOp", "nn.mean", "Float tensors only (an integer mean would have to pick a rounding).",
                   float_only=True)
MaxOp = family_op(_ReduceOp, "MaxOp", "nn.max", shape=reduce_nonempty)


def arg_reduce(shapes: list[Shape], a: dict) -> Shape:
    """`reduce_nonempty` over exactly one axis (ONNX's ArgMax and ArgMin take one)."""
    (data,) = shapes
    axes = reduced_axes(data, a)
    if len(axes) != 1:
        raise ShapeError(f"folds {len(axes)} axes of 'data' {fmt_shape(data)}; it takes exactly one")
    return reduce_nonempty(shapes, a)


class _ArgReduceOp(_ReduceOp):
    select_last_index = bool_(False)
    SHAPE_RULE = staticmethod(arg_reduce)

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], attributes: dict[str, Attribute]) -> list[TensorType]:
        return [TensorType(i64, t.get_shape()) for t in super().infer_types(operand_types, attributes)]


@nn_op
class ArgMaxOp(_ArgReduceOp):
    """The i64 position of the largest element along the one reduced axis: the first such (the
    first NaN, as numpy's), the last with `select_last_index`."""

    name = "nn.argmax"


ArgMinOp = family_op(_ArgReduceOp, "ArgMinOp", "nn.argmin", "As nn.argmax, of the smallest element.")


def cumsum(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    if a["axis"] is None:
        raise ShapeError("needs an axis (Relay's flattened form, axis None, is not taken)")
    check_axis(a["axis"], len(data), "data", data)
    return data


@nn_op(shape=cumsum, layout=LayoutRule.SENSITIVE)
class CumSumOp(DataOp):
    """Running sums along `axis`: element i sums 0..i (`exclusive`: 0..i-1; `reverse`: i..n-1, or
    i+1..n-1 with both), in the operand's type."""

    name = "nn.cumsum"
    axis = int_()
    exclusive = bool_(False)
    reverse = bool_(False)


def topk(shapes: list[Shape], a: dict) -> list[Shape]:
    (data,) = shapes
    axis = check_axis(a["axis"], len(data), "data", data)
    if not 1 <= a["k"] <= data[axis]:
        raise ShapeError(f"k {a['k']} is not in 1..{data[axis]} (axis {a['axis']} of 'data' {fmt_shape(data)})")
    out = tuple(a["k"] if i == axis else d for i, d in enumerate(data))
    return [out, out]


@nn_op(shape=topk, layout=LayoutRule.SENSITIVE)
class TopKOp(NNOp):
    """The `k` largest elements along `axis` (the smallest with `is_ascend`), in order, and their i64
    positions; equal elements in the order of their positions (ONNX's rule). Relay's ret_type "both"."""

    name = "nn.topk"
    data = operand_def(TensorType)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    k = attr_def(INT)
    axis = int_(-1)
    is_ascend = bool_(False)

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], attributes: dict[str, Attribute]) -> list[TensorType]:
        values, indices = super().infer_types(operand_types, attributes)
        return [values, TensorType(i64, indices.get_shape())]
