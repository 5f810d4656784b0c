"""Normalisation ops: batch_norm and softmax (statistics along one axis).

Kernels: runtime/kernels/norm.py; lowerings: lowering/to_linalg/norm.py.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import TensorType as T
from xdsl.irdl import operand_def, result_def

from xrelay.dialects.infer import Shape, ShapeError, check_axis, fmt_shape
from xrelay.dialects.op_base import LayoutRule, NNOp, bool_, float_, int_, nn_op

__all__ = ["BatchNormOp", "SoftmaxOp"]


def batch_norm(shapes: list[Shape], a: dict) -> list[Shape]:
    data = shapes[0]
    axis = check_axis(a["axis"], len(data), "data", data)
    channels = (data[axis],)
    for name, shape in zip(("gamma", "beta", "moving_mean", "moving_var"), shapes[1:]):
        if shape != channels:
            raise ShapeError(
                f"'{name}' {fmt_shape(shape)} must be 1-D of size {data[axis]} (axis {a['axis']} of "
                f"'data' {fmt_shape(data)})"
            )
    return [data, channels, channels]


def softmax(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    check_axis(a["axis"], len(data), "data", data)
    return data


@nn_op
class BatchNormOp(NNOp):
    """Batch normalisation; results are (out, mean, var) like Relay."""

    name = "nn.batch_norm"
    data = operand_def(T)
    gamma = operand_def(T)
    beta = operand_def(T)
    moving_mean = operand_def(T)
    moving_var = operand_def(T)
    output = result_def(T)
    mean = result_def(T)
    var = result_def(T)
    axis = int_(1)
    epsilon = float_(1e-5)
    center = bool_(True)
    scale = bool_(True)
    SHAPE_RULE = staticmethod(batch_norm)
    FLOAT_ONLY: ClassVar[bool] = True
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.CHANNEL_AXIS


@nn_op
class SoftmaxOp(NNOp):
    name = "nn.softmax"
    data = operand_def(T)
    result = result_def(T)
    axis = int_(-1)
    SHAPE_RULE = staticmethod(softmax)
    FLOAT_ONLY: ClassVar[bool] = True
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.SENSITIVE
