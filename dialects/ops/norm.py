"""Normalisation ops: batch_norm, softmax, log_softmax, layer_norm and lrn (statistics along one axis).

Kernels: runtime/kernels/norm.py; lowerings: lowering/to_linalg/norm.py.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import TensorType as T
from xdsl.irdl import operand_def, result_def

from xrelay.dialects.infer import Shape, ShapeError, check_axis, fmt_shape
from xrelay.dialects.op_base import LayoutRule, NNOp, bool_, float_, int_, nn_op

__all__ = ["BatchNormOp", "LayerNormOp", "LogSoftmaxOp", "LRNOp", "SoftmaxOp"]


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


@nn_op
class LogSoftmaxOp(NNOp):
    """`x - max - log(sum(exp(x - max)))` along `axis`."""

    name = "nn.log_softmax"
    data = operand_def(T)
    result = result_def(T)
    axis = int_(-1)
    SHAPE_RULE = staticmethod(softmax)
    FLOAT_ONLY: ClassVar[bool] = True
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.CHANNEL_AXIS


def layer_norm(shapes: list[Shape], a: dict) -> Shape:
    data = shapes[0]
    axis = check_axis(a["axis"], len(data), "data", data)
    for name, shape in zip(("gamma", "beta"), shapes[1:]):
        if shape != (data[axis],):
            raise ShapeError(
                f"'{name}' {fmt_shape(shape)} must be 1-D of size {data[axis]} (axis {a['axis']} of "
                f"'data' {fmt_shape(data)})"
            )
    return data


@nn_op
class LayerNormOp(NNOp):
    """`(x - mean) / sqrt(var + epsilon) * gamma + beta`, mean and (biased) variance along `axis`."""

    name = "nn.layer_norm"
    data = operand_def(T)
    gamma = operand_def(T)
    beta = operand_def(T)
    result = result_def(T)
    axis = int_(-1)
    epsilon = float_(1e-5)
    center = bool_(True)
    scale = bool_(True)
    SHAPE_RULE = staticmethod(layer_norm)
    FLOAT_ONLY: ClassVar[bool] = True
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.CHANNEL_AXIS


def lrn(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    check_axis(a["axis"], len(data), "data", data)
    if a["size"] < 1:
        raise ShapeError(f"size must be at least 1, got {a['size']}")
    return data


def lrn_window(size: int) -> tuple[int, int]:
    """How many neighbours before and after an index LRN's window spans: floor((size-1)/2) and
    ceil((size-1)/2), as ONNX and Caffe define it (the same for the odd sizes models use)."""
    before = (size - 1) // 2
    return before, size - 1 - before


@nn_op
class LRNOp(NNOp):
    """Local response normalisation across `axis`:
    `x / (bias + alpha / size * sum of x^2 over the window) ** beta` (see `lrn_window`)."""

    name = "nn.lrn"
    data = operand_def(T)
    result = result_def(T)
    size = int_(5)
    axis = int_(1)
    bias = float_(2.0)
    alpha = float_(1e-4)
    beta = float_(0.75)
    SHAPE_RULE = staticmethod(lrn)
    FLOAT_ONLY: ClassVar[bool] = True
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.CHANNEL_AXIS
