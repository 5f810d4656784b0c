"""Convolution, pooling, normalisation, dense layers and softmax.

xrelay's windows are 2-D: 1-D convolutions and pools run as 2-D ones over a height of 1 (a reshape
on each side); 3-D ones are rejected with a message.
"""

from __future__ import annotations

import math

import numpy as np

from xrelay.frontend.onnx.ops_shape import normalise_axis, reshape_to
from xrelay.frontend.onnx.registry import converter, has_op

# --- windows ----------------------------------------------------------------------------------------


def _spatial_rank(node, what: str) -> int:
    rank = len(node.shape(0))
    if rank not in (3, 4):
        raise node.error(f"{rank - 2}-D {what} is not supported (1-D and 2-D are)")
    return rank - 2


def _window(node, kernel, spatial_in) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int, int, int]]:
    """(strides, dilations, padding top/left/bottom/right) of a 2-D window from ONNX attributes,
    1-D ones widened with a height of 1, `auto_pad` resolved against the input size."""
    n = len(kernel)
    strides = list(node.attr("strides", [1] * n))
    dilations = list(node.attr("dilations", [1] * n))
    pads = list(node.attr("pads", [0] * (2 * n)))
    auto_pad = node.attr("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = [0] * (2 * n)
        for i in range(n):
            out = -(-spatial_in[i] // strides[i])
            total = max((out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - spatial_in[i], 0)
            small = total // 2
            pads[i], pads[i + n] = (small, total - small) if auto_pad == "SAME_UPPER" else (total - small, small)
    elif auto_pad == "VALID":
        pads = [0] * (2 * n)
    elif auto_pad != "NOTSET":
        raise node.error(f"auto_pad '{auto_pad}' is not supported")
    if n == 1:
        return (1, strides[0]), (1, dilations[0]), (0, pads[0], 0, pads[1])
    return tuple(strides), tuple(dilations), tuple(pads)


def _as_2d(node, value):
    """A 1-D window operand [N, C, L] as [N, C, 1, L]."""
    shape = tuple(value.type.get_shape())
    return reshape_to(node, value, shape[:2] + (1,) + shape[2:]) if len(shape) == 3 else value


def _from_2d(node, value, spatial: int):
    shape = tuple(value.type.get_shape())
    return reshape_to(node, value, shape[:2] + shape[3:]) if spatial == 1 else value


@converter("Conv", needs=("nn.conv2d", "nn.bias_add", "nn.reshape"))
def conv(node):
    spatial = _spatial_rank(node, "convolution")
    data, weight = node.values_alike(0, 1)
    weight_shape = node.shape(1)
    kernel = list(node.attr("kernel_shape", weight_shape[2:]))
    strides, dilation, padding = _window(node, kernel, node.shape(0)[2:])
    out = node.emit("nn.conv2d", _as_2d(node, data), _as_2d(node, weight), strides=strides, padding=padding,
                    dilation=dilation, groups=node.attr("group", 1), channels=weight_shape[0],
                    kernel_size=((1,) if spatial == 1 else ()) + tuple(kernel))
    if node.has(2):
        out = node.emit("nn.bias_add", out, node.values_alike(0, 2)[1], axis=1)
    return _from_2d(node, out, spatial)


def _pool_attrs(node, spatial_in):
    kernel = list(node.attr("kernel_shape"))
    strides, dilation, padding = _window(node, kernel, spatial_in)
    pool = ((1,) if len(kernel) == 1 else ()) + tuple(kernel)
    return dict(pool_size=pool, strides=strides, dilation=dilation, padding=padding,
                ceil_mode=bool(node.attr("ceil_mode", 0)))


@converter("MaxPool", needs=("nn.max_pool2d", "nn.reshape"))
def max_pool(node):
    spatial = _spatial_rank(node, "pooling")
    if len(node.outputs) > 1 and node.outputs[1]:
        raise node.error("the Indices output of MaxPool is not supported")
    if node.attr("storage_order", 0):
        raise node.error("storage_order=1 is not supported")
    out = node.emit("nn.max_pool2d", _as_2d(node, node.value(0)), **_pool_attrs(node, node.shape(0)[2:]))
    return _from_2d(node, out, spatial)


@converter("AveragePool", needs=("nn.avg_pool2d", "nn.reshape"))
def avg_pool(node):
    spatial = _spatial_rank(node, "pooling")
    attrs = _pool_attrs(node, node.shape(0)[2:])
    out = node.emit("nn.avg_pool2d", _as_2d(node, node.value(0)), count_include_pad=bool(
        node.attr("count_include_pad", 0)), **attrs)
    return _from_2d(node, out, spatial)


@converter("GlobalAveragePool", needs=("nn.global_avg_pool2d", "nn.reshape"))
def global_avg_pool(node):
    spatial = _spatial_rank(node, "global pooling")
    return _from_2d(node, node.emit("nn.global_avg_pool2d", _as_2d(node, node.value(0))), spatial)


@converter("GlobalMaxPool", needs=("nn.max_pool2d", "nn.reshape"))
def global_max_pool(node):
    spatial = _spatial_rank(node, "global pooling")
    data = _as_2d(node, node.value(0))
    if has_op("nn.global_max_pool2d"):
        out = node.emit("nn.global_max_pool2d", data)
    else:  # one window over the whole image
        out = node.emit("nn.max_pool2d", data, pool_size=tuple(data.type.get_shape())[2:])
    return _from_2d(node, out, spatial)


# --- normalisation ------------------------------------------------------------------------------------


@converter("BatchNormalization", needs=("nn.batch_norm",))
def batch_norm(node):
    if node.opset < 9 and node.attr("spatial", 1) == 0:
        raise node.error("spatial=0 (per-activation statistics) is not supported")
    if node.opset < 7 and node.attr("is_test", 0) == 0 and any(node.outputs[1:]):
        raise node.error("training mode (is_test=0 with statistics outputs) is not supported")
    if node.attr("training_mode", 0):
        raise node.error("training_mode=1 is not supported")
    values = node.values_alike(0, 1, 2, 3, 4)
    out = node.emit("nn.batch_norm", *values, axis=1, epsilon=node.attr("epsilon", 1e-5))
    return [out] + [None] * (len(node.outputs) - 1)


@converter("LRN", needs=("nn.lrn",))
def lrn(node):
    return node.emit("nn.lrn", node.value(0), size=node.attr("size"), axis=1, bias=node.attr("bias", 1.0),
                     alpha=node.attr("alpha", 1e-4), beta=node.attr("beta", 0.75))


@converter("LayerNormalization", needs=("nn.layer_norm", "nn.reshape"))
def layer_norm(node):
    shape = node.shape(0)
    axis = normalise_axis(node, node.attr("axis", -1), len(shape))
    x, scale = node.values_alike(0, 1)
    bias = node.values_alike(0, 2)[1] if node.has(2) else node.constant(
        np.zeros(shape[axis:], dtype=node.dtype(0)))
    inner = math.prod(shape[axis:])
    flat = reshape_to(node, x, shape[:axis] + (inner,))
    out = node.emit("nn.layer_norm", flat, reshape_to(node, scale, (inner,)), reshape_to(node, bias, (inner,)),
                    axis=-1, epsilon=node.attr("epsilon", 1e-5))
    return [reshape_to(node, out, shape)] + [None] * (len(node.outputs) - 1)


@converter("InstanceNormalization", needs=("nn.mean", "nn.subtract", "nn.multiply", "nn.add", "nn.sqrt",
                                           "nn.divide", "nn.reshape"))
def instance_norm(node):
    """(x - mean) / sqrt(var + eps) * scale + bias, statistics over each image's spatial axes."""
    shape = node.shape(0)
    x, scale, bias = node.values_alike(0, 1, 2)
    axes = tuple(range(2, len(shape)))
    per_channel = (shape[1],) + (1,) * (len(shape) - 2)
    centred = node.emit("nn.subtract", x, node.emit("nn.mean", x, axis=axes, keepdims=True))
    var = node.emit("nn.mean", node.emit("nn.multiply", centred, centred), axis=axes, keepdims=True)
    std = node.emit("nn.sqrt", node.emit("nn.add", var, node.scalar(node.attr("epsilon", 1e-5), x)))
    normal = node.emit("nn.divide", centred, std)
    scaled = node.emit("nn.multiply", normal, reshape_to(node, scale, per_channel))
    return node.emit("nn.add", scaled, reshape_to(node, bias, per_channel))


# --- dense layers ----------------------------------------------------------------------------------------


@converter("Gemm", needs=("nn.dense", "nn.transpose", "nn.multiply", "nn.add", "nn.bias_add"))
def gemm(node):
    """alpha * A' B' + beta * C as dense (weight [N, K]) plus a bias, like Relay's importer."""
    a, b = node.values_alike(0, 1)
    if node.attr("transA", 0):
        a = node.emit("nn.transpose", a, axes=(1, 0))
    if not node.attr("transB", 0):
        b = node.emit("nn.transpose", b, axes=(1, 0))
    out = node.emit("nn.dense", a, b, units=tuple(b.type.get_shape())[0])
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    if alpha != 1.0:
        out = node.emit("nn.multiply", out, node.scalar(alpha, out))
    if node.has(2) and beta != 0.0:
        c = node.values_alike(0, 2)[1]
        if beta != 1.0:
            c = node.emit("nn.multiply", c, node.scalar(beta, c))
        units = tuple(out.type.get_shape())[1]
        if tuple(c.type.get_shape()) == (units,):
            out = node.emit("nn.bias_add", out, c, axis=-1)
        else:
            out = node.emit("nn.add", out, c)
    return out


@converter("MatMul", needs=("nn.dense", "nn.transpose", "nn.reshape"))
def matmul(node):
    a, b = node.values_alike(0, 1)
    shape_a, shape_b = node.shape(0), node.shape(1)
    if len(shape_a) == 1:
        a, shape_a = reshape_to(node, a, (1,) + shape_a), (1,) + shape_a
    if len(shape_b) == 1:
        b, shape_b = reshape_to(node, b, shape_b + (1,)), shape_b + (1,)
    out_shape = list(np.broadcast_shapes(shape_a[:-2], shape_b[:-2])) + [shape_a[-2], shape_b[-1]]
    if len(shape_b) == 2:  # rows of A times one weight: dense
        flat = reshape_to(node, a, (math.prod(shape_a[:-1]), shape_a[-1]))
        weight = node.emit("nn.transpose", b, axes=(1, 0))
        out = node.emit("nn.dense", flat, weight, units=shape_b[-1])
    else:
        out = _batch_matmul(node, a, b, shape_a, shape_b)
    if len(node.shape(0)) == 1:
        del out_shape[-2]
    if len(node.shape(1)) == 1:
        del out_shape[-1]
    return reshape_to(node, out, out_shape)


def _batch_matmul(node, a, b, shape_a, shape_b):
    if not has_op("nn.batch_matmul") or not has_op("nn.broadcast_to"):
        raise node.error("MatMul of two batched operands needs nn.batch_matmul, which the nn dialect lacks")
    batch = tuple(np.broadcast_shapes(shape_a[:-2], shape_b[:-2]))
    operands = []
    for value, shape in ((a, shape_a), (b, shape_b)):
        full = batch + shape[-2:]
        if tuple(shape) != full:
            value = node.emit("nn.broadcast_to", reshape_to(node, value, (1,) * (len(full) - len(shape)) + shape),
                              shape=full)
        operands.append(reshape_to(node, value, (math.prod(batch),) + shape[-2:]))
    return node.emit("nn.batch_matmul", *operands, transpose_a=False, transpose_b=False)


# --- softmax --------------------------------------------------------------------------------------------------


def _softmax(node, op_name: str):
    shape = node.shape(0)
    rank = len(shape)
    if node.opset >= 13:
        return node.emit(op_name, node.value(0), axis=normalise_axis(node, node.attr("axis", -1), rank))
    # Before opset 13 the input is flattened to 2-D at `axis` and normalised over the second part.
    axis = normalise_axis(node, node.attr("axis", 1), rank)
    if axis == rank - 1:
        return node.emit(op_name, node.value(0), axis=axis)
    flat = reshape_to(node, node.value(0), (math.prod(shape[:axis]), math.prod(shape[axis:])))
    return reshape_to(node, node.emit(op_name, flat, axis=-1), shape)


@converter("Softmax", needs=("nn.softmax", "nn.reshape"))
def softmax(node):
    return _softmax(node, "nn.softmax")


@converter("LogSoftmax", needs=("nn.log_softmax", "nn.reshape"))
def log_softmax(node):
    return _softmax(node, "nn.log_softmax")
