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

from xrelay.dialects.infer import Shape, ShapeError, fmt_shape, per_channel, same
from xrelay.dialects.attributes import FLOAT, float_, int_
from xrelay.dialects.op_base import NN_ELEMENT_TYPES, DataOp, LayoutRule, NNOp, family_op, nn_op

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


ReluOp = family_op(_UnaryOp, "ReluOp", "nn.relu")
SqrtOp = family_op(_UnaryOp, "SqrtOp", "nn.sqrt")
NegativeOp = family_op(_UnaryOp, "NegativeOp", "nn.negative")
SigmoidOp = family_op(_UnaryOp, "SigmoidOp", "nn.sigmoid",
                      "`1 / (1 + exp(-x))`, float tensors only (as Relay's sigmoid).", float_only=True)
AddOp = family_op(_BinaryOp, "AddOp", "nn.add")
SubtractOp = family_op(_BinaryOp, "SubtractOp", "nn.subtract")
MultiplyOp = family_op(_BinaryOp, "MultiplyOp", "nn.multiply")
DivideOp = family_op(_BinaryOp, "DivideOp", "nn.divide")
TanhOp = family_op(_FloatUnaryOp, "TanhOp", "nn.tanh")
ErfOp = family_op(_FloatUnaryOp, "ErfOp", "nn.erf")
ExpOp = family_op(_FloatUnaryOp, "ExpOp", "nn.exp")
LogOp = family_op(_FloatUnaryOp, "LogOp", "nn.log")
AbsOp = family_op(_UnaryOp, "AbsOp", "nn.abs")


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


@nn_op(shape=per_channel("alpha"), layout=LayoutRule.CHANNEL_AXIS, float_only=True)
class PReluOp(DataOp):
    """`data > 0 ? data : alpha[c] * data`, one slope per index `c` of axis `axis`."""

    name = "nn.prelu"
    alpha = operand_def(T)
    axis = int_(1)


PowerOp = family_op(_BinaryOp, "PowerOp", "nn.power",
                    "`lhs ** rhs` with C's pow (a negative base with a fractional exponent gives NaN).", float_only=True)
MaximumOp = family_op(_BinaryOp, "MaximumOp", "nn.maximum", "Elementwise maximum; NaN wins, as numpy's maximum.")
MinimumOp = family_op(_BinaryOp, "MinimumOp", "nn.minimum", "Elementwise minimum; NaN wins, as numpy's minimum.")


# --- comparisons and logic: truth values are i64 tensors of 0 and 1 -----------------------------------------
# xrelay has no boolean tensors (the ONNX importer widens booleans to i64 already): a comparison
# yields i64 0/1, and the logical ops and nn.where read any nonzero integer as true.


class _CompareOp(_BinaryOp):
    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], attributes: dict[str, Attribute]) -> list[T]:
        return [T(i64, t.get_shape()) for t in super().infer_types(operand_types, attributes)]


EqualOp = family_op(_CompareOp, "EqualOp", "nn.equal", "`lhs == rhs` as i64 0/1 (NaN equals nothing).")
LessOp = family_op(_CompareOp, "LessOp", "nn.less", "`lhs < rhs` as i64 0/1.")
LessEqualOp = family_op(_CompareOp, "LessEqualOp", "nn.less_equal", "`lhs <= rhs` as i64 0/1.")
GreaterOp = family_op(_CompareOp, "GreaterOp", "nn.greater", "`lhs > rhs` as i64 0/1.")
GreaterEqualOp = family_op(_CompareOp, "GreaterEqualOp", "nn.greater_equal", "`lhs >= rhs` as i64 0/1.")


class _TruthOperandsOp(NNOp):
    """Checks that every operand holds integer truth values (the logical ops)."""

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], attributes: dict[str, Attribute]) -> list[T]:
        _integer_operands(cls, operand_types)
        return super().infer_types(operand_types, attributes)


def _integer_operands(cls, operand_types: Sequence[Attribute]) -> None:
    integers = [e for e in NN_ELEMENT_TYPES if isinstance(e, IntegerType)]
    for name, t in zip(cls.operand_names(len(operand_types)), operand_types):
        if isinstance(t, T) and t.get_element_type() not in integers:
            raise ShapeError(f"{cls.name}: operand '{name}' must hold integer truth values, got "
                             f"{t.get_element_type()} (use {', '.join(map(str, integers))})")


class _LogicalBinaryOp(_TruthOperandsOp, _BinaryOp):
    pass


class _LogicalUnaryOp(_TruthOperandsOp, _UnaryOp):
    pass


LogicalAndOp = family_op(_LogicalBinaryOp, "LogicalAndOp", "nn.logical_and", "1 where both operands are nonzero, else 0.")
LogicalOrOp = family_op(_LogicalBinaryOp, "LogicalOrOp", "nn.logical_or", "1 where either operand is nonzero, else 0.")
LogicalXorOp = family_op(_LogicalBinaryOp, "LogicalXorOp", "nn.logical_xor",
                         "1 where exactly one operand is nonzero, else 0.")
LogicalNotOp = family_op(_LogicalUnaryOp, "LogicalNotOp", "nn.logical_not", "1 where `data` is 0, else 0.")


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
