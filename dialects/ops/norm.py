"""Normalisation ops: batch_norm, softmax, log_softmax, layer_norm and lrn (statistics along one axis).

Kernels: runtime/reference/nn_kernels/norm.py; lowerings: lowering/to_linalg/norm.py.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import TensorType as T
from xdsl.irdl import operand_def, result_def

from xrelay.dialects.infer import Shape, ShapeError, check_axis, check_per_channel, per_channel
from xrelay.dialects.attributes import bool_, float_, int_
from xrelay.dialects.op_base import DataOp, LayoutRule, NNOp, family_op, nn_op

__all__ = ["BatchNormOp", "LayerNormOp", "LogSoftmaxOp", "LRNOp", "SoftmaxOp"]


def batch_norm(shapes: list[Shape], a: dict) -> list[Shape]:
    data = shapes[0]
    axis = check_per_channel(data, a["axis"], **dict(zip(("gamma", "beta", "moving_mean", "moving_var"), shapes[1:])))
    return [data, (data[axis],), (data[axis],)]


def softmax(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    check_axis(a["axis"], len(data), "data", data)
    return data


class _AffineNormOp(NNOp):
    """What batch_norm and layer_norm share: statistics along `axis` normalise `data` (`epsilon`
    added to the variance), then `gamma` scales (if `scale`) and `beta` shifts (if `center`)."""

    data = operand_def(T)
    gamma = operand_def(T)
    beta = operand_def(T)
    axis = int_(1)
    epsilon = float_(1e-5)
    center = bool_(True)
    scale = bool_(True)
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.CHANNEL_AXIS
    FLOAT_ONLY: ClassVar[bool] = True


@nn_op(shape=batch_norm)
class BatchNormOp(_AffineNormOp):
    """Batch normalisation; results are (out, mean, var) like Relay."""

    name = "nn.batch_norm"
    moving_mean = operand_def(T)
    moving_var = operand_def(T)
    output = result_def(T)
    mean = result_def(T)
    var = result_def(T)


class _SoftmaxOp(DataOp):
    axis = int_(-1)
    SHAPE_RULE = staticmethod(softmax)
    FLOAT_ONLY: ClassVar[bool] = True


SoftmaxOp = family_op(_SoftmaxOp, "SoftmaxOp", "nn.softmax", layout=LayoutRule.SENSITIVE)
LogSoftmaxOp = family_op(_SoftmaxOp, "LogSoftmaxOp", "nn.log_softmax", "`x - max - log(sum(exp(x - max)))` along `axis`.",
                         layout=LayoutRule.CHANNEL_AXIS)


@nn_op(shape=per_channel("gamma", "beta"))
class LayerNormOp(_AffineNormOp):
    """`(x - mean) / sqrt(var + epsilon) * gamma + beta`, mean and (biased) variance along `axis`."""

    name = "nn.layer_norm"
    axis = int_(-1)
    result = result_def(T)


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


@nn_op(shape=lrn, layout=LayoutRule.CHANNEL_AXIS, float_only=True)
class LRNOp(DataOp):
    """Local response normalisation across `axis`:
    `x / (bias + alpha / size * sum of x^2 over the window) ** beta` (see `lrn_window`)."""

    name = "nn.lrn"
    size = int_(5)
    axis = int_(1)
    bias = float_(2.0)
    alpha = float_(1e-4)
    beta = float_(0.75)
