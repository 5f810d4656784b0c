"""Linear-algebra ops: dense layers and their per-channel bias.

Kernels: runtime/kernels/linear.py; lowerings: lowering/to_linalg/linear.py.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import TensorType as T
from xdsl.irdl import operand_def, result_def

from xrelay.dialects.infer import Shape, ShapeError, check_axis, check_rank, fmt_shape
from xrelay.dialects.op_base import LayoutRule, NNOp, int_, nn_op

__all__ = ["BiasAddOp", "DenseOp"]


def dense(shapes: list[Shape], a: dict) -> Shape:
    data, weight = shapes
    check_rank("weight", weight, 2)
    if len(data) < 1 or data[-1] != weight[1]:
        raise ShapeError(
            f"last dim of 'data' {fmt_shape(data)} must equal dim 1 of 'weight' {fmt_shape(weight)}"
        )
    if a["units"] is not None and a["units"] != weight[0]:
        raise ShapeError(f"units={a['units']} but 'weight' {fmt_shape(weight)} has {weight[0]} rows")
    return data[:-1] + (weight[0],)


def bias_add(shapes: list[Shape], a: dict) -> Shape:
    data, bias = shapes
    axis = check_axis(a["axis"], len(data), "data", data)
    if bias != (data[axis],):
        raise ShapeError(
            f"'bias' {fmt_shape(bias)} must be 1-D of size {data[axis]} (axis {a['axis']} of "
            f"'data' {fmt_shape(data)})"
        )
    return data


@nn_op
class DenseOp(NNOp):
    """data [.., K] x weight [N, K] -> [.., N]."""

    name = "nn.dense"
    data = operand_def(T)
    weight = operand_def(T)
    result = result_def(T)
    units = int_()
    SHAPE_RULE = staticmethod(dense)
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.DENSE


@nn_op
class BiasAddOp(NNOp):
    name = "nn.bias_add"
    data = operand_def(T)
    bias = operand_def(T)
    result = result_def(T)
    axis = int_(1)
    SHAPE_RULE = staticmethod(bias_add)
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.CHANNEL_AXIS
