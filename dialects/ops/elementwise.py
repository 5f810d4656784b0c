"""Elementwise nn ops: unary maps and numpy-broadcasting binary ops (one output element per input element).

Kernels: runtime/kernels/elementwise.py; lowerings: lowering/to_linalg/elementwise.py.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import TensorType as T
from xdsl.irdl import operand_def, result_def

from xrelay.dialects.infer import Shape, ShapeError, fmt_shape, same
from xrelay.dialects.op_base import LayoutRule, NNOp, nn_op

__all__ = ["AddOp", "DivideOp", "MultiplyOp", "NegativeOp", "ReluOp", "SigmoidOp", "SqrtOp", "SubtractOp"]


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


class _UnaryOp(NNOp):
    data = operand_def(T)
    result = result_def(T)
    SHAPE_RULE = staticmethod(same)
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.AGNOSTIC


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


@nn_op
class SigmoidOp(_UnaryOp):
    """`1 / (1 + exp(-x))`, float tensors only (as Relay's sigmoid)."""

    name = "nn.sigmoid"
    FLOAT_ONLY: ClassVar[bool] = True


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
