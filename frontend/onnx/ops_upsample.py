"""Transposed convolution and resizing: ConvTranspose, Resize and the older Upsample.

ConvTranspose is 1-D or 2-D (1-D as 2-D over a height of 1, as Conv); Resize and Upsample resize the
H and W of a 4-D tensor, nearest or linear, with every coordinate transformation ONNX Runtime takes
except tf_crop_and_resize.
"""

from __future__ import annotations

import numpy as np

from xrelay.frontend.onnx.ops_nn import _as_2d, _from_2d, _spatial_rank
from xrelay.frontend.onnx.registry import converter


def _transposed_padding(node, kernel, strides, dilations, output_padding, spatial_in) -> list[int]:
    """ONNX's pads [begin..., end...], from `output_shape` or `auto_pad` when given (the total split as
    ONNX Runtime splits it: an odd one at the end for SAME_UPPER, else at the start)."""
    n = len(kernel)
    pads = list(node.attr("pads", [0] * (2 * n)))
    auto_pad = node.attr("auto_pad", "NOTSET")
    output_shape = node.attr("output_shape")
    if auto_pad not in ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"):
        raise node.error(f"auto_pad '{auto_pad}' is not supported")
    if auto_pad == "VALID":
        return [0] * (2 * n)
    if output_shape is None and auto_pad == "NOTSET":
        return pads
    targets = list(output_shape)[-n:] if output_shape is not None else [s * i for s, i in zip(strides, spatial_in)]
    for i in range(n):
        total = (spatial_in[i] - 1) * strides[i] + output_padding[i] + (kernel[i] - 1) * dilations[i] + 1 - targets[i]
        if total < 0:
            raise node.error(f"output_shape {tuple(targets)} is larger than the transposed convolution gives")
        head = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
        pads[i], pads[i + n] = head, total - head
    return pads


@converter("ConvTranspose", needs=("nn.conv2d_transpose", "nn.bias_add", "nn.reshape"))
def conv_transpose(node):
    spatial = _spatial_rank(node, "transposed convolution")
    data, weight = node.values_alike(0, 1)
    weight_shape, spatial_in = node.shape(1), node.shape(0)[2:]
    kernel = list(node.attr("kernel_shape", weight_shape[2:]))
    n = len(kernel)
    strides = list(node.attr("strides", [1] * n))
    dilations = list(node.attr("dilations", [1] * n))
    output_padding = list(node.attr("output_padding", [0] * n))
    pads = _transposed_padding(node, kernel, strides, dilations, output_padding, spatial_in)
    if n == 1:
        strides, dilations, output_padding = [1, *strides], [1, *dilations], [0, *output_padding]
        padding = (0, pads[0], 0, pads[1])
        kernel = [1, *kernel]
    else:
        padding = tuple(pads)
    group = node.attr("group", 1)
    out = node.emit("nn.conv2d_transpose", _as_2d(node, data), _as_2d(node, weight), strides=tuple(strides),
                    padding=padding, dilation=tuple(dilations), groups=group, channels=weight_shape[1] * group,
                    kernel_size=tuple(kernel), output_padding=tuple(output_padding))
    if node.has(2):
        out = node.emit("nn.bias_add", out, node.values_alike(0, 2)[1], axis=1)
    return _from_2d(node, out, spatial)


_METHODS = {"nearest": "nearest_neighbor", "linear": "linear", "bilinear": "linear"}


def _resize(node, scales: np.ndarray | None, sizes: np.ndarray | None, mode: str, coordinates: str, rounding: str):
    shape = node.shape(0)
    if len(shape) != 4:
        raise node.error(f"resizing a {len(shape)}-D tensor is not supported (4-D NCHW is)")
    if mode not in _METHODS:
        raise node.error(f"mode '{mode}' is not supported (nearest and linear are)")
    if sizes is not None:
        out = [int(v) for v in sizes]
        given = [0.0, 0.0]
    elif scales is not None:
        out = [int(np.floor(d * float(s))) for d, s in zip(shape, scales)]
        given = [float(s) for s in scales[2:]]
    else:
        raise node.error("one of scales and sizes must be given")
    if len(out) != 4:
        raise node.error(f"scales/sizes give {len(out)} values for a 4-D input")
    if tuple(out[:2]) != tuple(shape[:2]):
        raise node.error(f"resizing N or C ({tuple(shape[:2])} to {tuple(out[:2])}) is not supported")
    return node.emit("nn.resize2d", node.value(0), size=tuple(out[2:]), scale_h=given[0], scale_w=given[1],
                     method=_METHODS[mode], coordinate_transformation_mode=coordinates, rounding_method=rounding)


@converter("Resize", needs=("nn.resize2d",))
def resize(node):
    if node.opset < 11:  # inputs (X, scales); asymmetric coordinates, the nearest pixel by flooring
        return _resize(node, node.required_static(1, "scales"), None, node.attr("mode", "nearest"), "asymmetric", "floor")
    if node.attr("antialias", 0):
        raise node.error("antialias=1 is not supported")
    if node.attr("axes") is not None:
        raise node.error("the axes attribute is not supported")
    if node.attr("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise node.error(f"keep_aspect_ratio_policy '{node.attr('keep_aspect_ratio_policy')}' is not supported")
    coordinates = node.attr("coordinate_transformation_mode", "half_pixel")
    if coordinates == "tf_crop_and_resize":
        raise node.error("coordinate_transformation_mode 'tf_crop_and_resize' is not supported")
    scales = node.required_static(2, "scales") if node.has(2) else None
    if scales is not None and scales.size == 0:
        scales = None
    sizes = node.required_static(3, "sizes") if node.has(3) else None
    return _resize(node, scales, sizes, node.attr("mode", "nearest"), coordinates,
                   node.attr("nearest_mode", "round_prefer_floor"))


@converter("Upsample", needs=("nn.resize2d",))
def upsample(node):
    """Opset 7: scales an attribute; opset 9: an input. Asymmetric coordinates, nearest by flooring."""
    scales = np.array(node.attr("scales"), np.float32) if node.opset < 9 else node.required_static(1, "scales")
    return _resize(node, scales, None, node.attr("mode", "nearest"), "asymmetric", "floor")
