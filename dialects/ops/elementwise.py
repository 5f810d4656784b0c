"""Elementwise nn ops: unary maps and numpy-broadcasting binary ops (one output element per input element).

Kernels: runtime/reference/nn_kernels/elementwise.py; lowerings: lowering/to_linalg/elementwise.py.
"""

from __future__ import annotations

import math
from typing import ClassVar

from collections.abc import Sequence

from xdsl.dialects.builtin import IntegerType, TensorType as T, i64
from xdsl.ir import Attribute
from xdsl.irdl import attr_def, operand_def, result_def

from xrelay.dialects.infer import Shape, ShapeError, check_per_channel, fmt_shape, same
from xrelay.dialects.attributes import FLOAT, float_, int_
from xrelay.dialects.op_base import NN_ELEMENT_TYPES, DataOp, LayoutRule, NNOp, nn_op

__all__ = ["AbsOp", "AddOp", "ClipOp", "DivideOp", "EqualOp", "ErfOp", "ExpOp", "GreaterEqualOp", "GreaterOp",
           "LeakyReluOp", "LessEqualOp", "LessOp", "LogOp", "LogicalAndOp", "LogicalNotOp", "LogicalOrOp",
           "LogicalXorOp", "MaximumOp", "MinimumOp", "MultiplyOp", "NegativeOp", "PowerOp", "PReluOp", "ReluOp",
           "SigmoidOp", "SqrtOp", "SubtractOp", "TanhOp", "WhereOp"]


def broadcast(shapes: list[Shape], a: dict) -> Shape:
    lhs, rhs = shapes
    rank = max(len(lhs), len(rhs))
    padded_l = (1,) * (rank - len(lhs)) + lhs
    padded_r = (1,) * (rank - len(rhs)) + rhs
    out = []
    for x, y in zip(padded_l, padded_r):
        if x != y and x != 1 and y != 1:
            raise ShapeError(f"'lhs' {fmt_shape(lhs)} and 'rhs' {fmt_shape(rhs)} do not broadcast")
        out.append(y if x == 1 else x)
    return tuple(out)


class _UnaryOp(DataOp):
    SHAPE_RULE = staticmethod(same)
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.AGNOSTIC


class _FloatUnaryOp(_UnaryOp):
    FLOAT_ONLY: ClassVar[bool] = True


class _BinaryOp(NNOp):
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    SHAPE_RULE = staticmethod(broadcast)
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.BROADCAST


@nn_op
class ReluOp(_UnaryOp):
    name = "nn.relu"


@nn_op
class SqrtOp(_UnaryOp):
    name = "nn.sqrt"


@nn_op
class NegativeOp(_UnaryOp):
    name = "nn.negative"


@nn_op(float_only=True)
class SigmoidOp(_UnaryOp):
    """`1 / (1 + exp(-x))`, float tensors only (as Relay's sigmoid)."""

    name = "nn.sigmoid"


@nn_op
class AddOp(_BinaryOp):
    name = "nn.add"


@nn_op
class SubtractOp(_BinaryOp):
    name = "nn.subtract"


@nn_op
class MultiplyOp(_BinaryOp):
    name = "nn.multiply"


@nn_op
class DivideOp(_BinaryOp):
    name = "nn.divide"


@nn_op
class TanhOp(_FloatUnaryOp):
    name = "nn.tanh"


@nn_op
class ErfOp(_FloatUnaryOp):
    name = "nn.erf"


@nn_op
class ExpOp(_FloatUnaryOp):
    name = "nn.exp"


@nn_op
class LogOp(_FloatUnaryOp):
    name = "nn.log"


@nn_op
class AbsOp(_UnaryOp):
    name = "nn.abs"


def clip(shapes: list[Shape], a: dict) -> Shape:
    if math.isnan(a["a_min"]) or math.isnan(a["a_max"]):
        raise ShapeError(f"a_min ({a['a_min']}) and a_max ({a['a_max']}) must be numbers, not NaN")
    return shapes[0]


def integer_clip_bounds(a_min: float, a_max: float, bits: int) -> tuple[int, int]:
    """The bounds nn.clip uses on a signed `bits`-bit integer tensor: the integers inside
    [a_min, a_max] (ceil(a_min), floor(a_max)) within the type's range, so that values inside
    [a_min, a_max] stay as they are and the others go to the nearest integer inside."""
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    lower = low if a_min <= low else high if a_min >= high else math.ceil(a_min)
    upper = high if a_max >= high else low if a_max <= low else math.floor(a_max)
    return lower, upper


@nn_op(shape=clip)
class ClipOp(_UnaryOp):
    """`min(max(data, a_min), a_max)`, as Relay (a_min > a_max gives a_max); on integer tensors
    with the bounds of `integer_clip_bounds`."""

    name = "nn.clip"
    a_min = attr_def(FLOAT)
    a_max = attr_def(FLOAT)


@nn_op
class LeakyReluOp(_FloatUnaryOp):
    """`data > 0 ? data : alpha * data`."""

    name = "nn.leaky_relu"
    alpha = float_(0.01)


def prelu(shapes: list[Shape], a: dict) -> Shape:
    data, alpha = shapes
    check_per_channel(data, a["axis"], alpha=alpha)
    return data


@nn_op(shape=prelu, layout=LayoutRule.CHANNEL_AXIS, float_only=True)
class PReluOp(DataOp):
    """`data > 0 ? data : alpha[c] * data`, one slope per index `c` of axis `axis`."""

    name = "nn.prelu"
    alpha = operand_def(T)
    axis = int_(1)


@nn_op(float_only=True)
class PowerOp(_BinaryOp):
    """`lhs ** rhs` with C's pow (a negative base with a fractional exponent gives NaN)."""

    name = "nn.power"


@nn_op
class MaximumOp(_BinaryOp):
    """Elementwise maximum; NaN wins, as numpy's maximum."""

    name = "nn.maximum"


@nn_op
class MinimumOp(_BinaryOp):
    """Elementwise minimum; NaN wins, as numpy's minimum."""

    name = "nn.minimum"


# --- comparisons and logic: truth values are i64 tensors of 0 and 1 -----------------------------------------
# xrelay has no boolean tensors (the ONNX importer widens booleans to i64 already): a comparison
# yields i64 0/1, and the logical ops and nn.where read any nonzero integer as true.


class _CompareOp(_BinaryOp):
    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], attributes: dict[str, Attribute]) -> list[T]:
        return [T(i64, t.get_shape()) for t in super().infer_types(operand_types, attributes)]


@nn_op
class EqualOp(_CompareOp):
    """`lhs == rhs` as i64 0/1 (NaN equals nothing)."""

    name = "nn.equal"


@nn_op
class LessOp(_CompareOp):
    """`lhs < rhs` as i64 0/1."""

    name = "nn.less"


@nn_op
class LessEqualOp(_CompareOp):
    """`lhs <= rhs` as i64 0/1."""

    name = "nn.less_equal"


@nn_op
class GreaterOp(_CompareOp):
    """`lhs > rhs` as i64 0/1."""

    name = "nn.greater"


@nn_op
class GreaterEqualOp(_CompareOp):
    """`lhs >= rhs` as i64 0/1."""

    name = "nn.greater_equal"


def _integer_operands(cls, operand_types: Sequence[Attribute]) -> None:
    integers = [e for e in NN_ELEMENT_TYPES if isinstance(e, IntegerType)]
    for name, t in zip(cls.operand_names(len(operand_types)), operand_types):
        if isinstance(t, T) and t.get_element_type() not in integers:
            raise ShapeError(f"{cls.name}: operand '{name}' must hold integer truth values, got "
                             f"{t.get_element_type()} (use {', '.join(map(str, integers))})")


class _LogicalBinaryOp(_BinaryOp):
    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], attributes: dict[str, Attribute]) -> list[T]:
        _integer_operands(cls, operand_types)
        return super().infer_types(operand_types, attributes)


@nn_op
class LogicalAndOp(_LogicalBinaryOp):
    """1 where both operands are nonzero, else 0."""

    name = "nn.logical_and"


@nn_op
class LogicalOrOp(_LogicalBinaryOp):
    """1 where either operand is nonzero, else 0."""

    name = "nn.logical_or"


@nn_op
class LogicalXorOp(_LogicalBinaryOp):
    """1 where exactly one operand is nonzero, else 0."""

    name = "nn.logical_xor"


@nn_op
class LogicalNotOp(_UnaryOp):
    """1 where `data` is 0, else 0."""

    name = "nn.logical_not"

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], attributes: dict[str, Attribute]) -> list[T]:
        _integer_operands(cls, operand_types)
        return super().infer_types(operand_types, attributes)


def where(shapes: list[Shape], a: dict) -> Shape:
    condition, x, y = shapes
    return broadcast([broadcast([condition, x], a), y], a)


@nn_op(shape=where, layout=LayoutRule.SENSITIVE)
class WhereOp(NNOp):
    """`condition ? x : y` elementwise (a nonzero integer condition is true), the three operands
    broadcast together as numpy's where."""

    name = "nn.where"
    condition = operand_def(T)
    x = operand_def(T)
    y = operand_def(T)
    result = result_def(T)

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], attributes: dict[str, Attribute]) -> list[T]:
        # The shared checks take the first operand's element type for all: the condition stands in
        # with x's (its own is checked to be an integer type here).
        condition, x, y = operand_types
        _integer_operands(cls, [condition])
        if isinstance(condition, T) and isinstance(x, T):
            condition = T(x.get_element_type(), condition.get_shape())
        return super().infer_types([condition, x, y], attributes)
