"""Ops that enlarge an image: transposed convolution and resizing (NCHW).

Kernels: runtime/reference/nn_kernels/upsample.py; lowerings: lowering/to_linalg/upsample.py.
"""

from __future__ import annotations


from xrelay.dialects.attributes import float_, ints, str_
from xrelay.dialects.infer import Shape, ShapeError, check_rank, fmt_shape
from xrelay.dialects.layout import check_layout, pad4, pair
from xrelay.dialects.op_base import DataOp, LayoutRule, nn_op
from xrelay.dialects.ops.window import ConvBase
from xrelay.dialects.resize_tables import COORDINATE_MODES, METHODS, ROUNDING_METHODS

__all__ = ["Conv2DTransposeOp", "Resize2DOp"]


def conv2d_transpose(shapes: list[Shape], a: dict) -> Shape:
    data, weight = shapes
    check_rank("data", data, 4)
    check_rank("weight", weight, 4)
    check_layout(a["data_layout"], "NCHW", "data_layout")
    check_layout(a["kernel_layout"], "IOHW", "kernel_layout")
    if a["data_layout"] != "NCHW" or a["kernel_layout"] != "IOHW" or (a["out_layout"] or "NCHW") != "NCHW":
        raise ShapeError("only data_layout NCHW, kernel_layout IOHW and out_layout NCHW are supported")
    n, c, h, w = data
    k_in, k_out, kh, kw = weight
    groups = a["groups"]
    strides, dilation, output_padding = pair(a["strides"]), pair(a["dilation"]), pair(a["output_padding"])
    for name, values, low in (("strides", strides, 1), ("dilation", dilation, 1), ("output_padding", output_padding, 0)):
        if len(values) != 2 or min(values) < low:
            raise ShapeError(f"{name} {tuple(values)} must be 2 values of at least {low}")
    if any(p >= max(s, d) for p, s, d in zip(output_padding, strides, dilation)):
        raise ShapeError(f"output_padding {tuple(output_padding)} must be smaller than the stride or the dilation")
    if groups < 1 or c % groups:
        raise ShapeError(f"groups={groups} must divide the {c} channels of 'data' {fmt_shape(data)}")
    if k_in != c:
        raise ShapeError(f"'weight' {fmt_shape(weight)} (IOHW) has {k_in} input channels, 'data' {fmt_shape(data)} has {c}")
    if a["channels"] is not None and a["channels"] != k_out * groups:
        raise ShapeError(f"channels={a['channels']} but 'weight' {fmt_shape(weight)} gives {k_out * groups} in {groups} group(s)")
    top, left, bottom, right = pad4(a["padding"], "nn.conv2d_transpose")
    out_h = (h - 1) * strides[0] - top - bottom + dilation[0] * (kh - 1) + output_padding[0] + 1
    out_w = (w - 1) * strides[1] - left - right + dilation[1] * (kw - 1) + output_padding[1] + 1
    if out_h < 1 or out_w < 1:
        raise ShapeError(f"empty output: padding {(top, left, bottom, right)} removes all of the transposed "
                         f"convolution of 'data' {fmt_shape(data)} with 'weight' {fmt_shape(weight)}")
    return (n, k_out * groups, out_h, out_w)


@nn_op(shape=conv2d_transpose, layout=LayoutRule.SENSITIVE)
class Conv2DTransposeOp(ConvBase):
    """2-D transposed convolution (Relay nn.conv2d_transpose): each input pixel adds the kernel, scaled,
    at its strided place in the output; `padding` crops the output, `output_padding` extends it at the
    bottom and right. Weight IOHW: (input channels, output channels per group, kH, kW)."""

    name = "nn.conv2d_transpose"
    kernel_layout = str_("IOHW")
    output_padding = ints((0, 0))


def resize2d(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    check_rank("data", data, 4)
    if a["layout"] != "NCHW":
        raise ShapeError(f"layout '{a['layout']}' is not supported (NCHW is)")
    size = a["size"]
    if size is None or len(size) != 2 or min(size) < 1:
        raise ShapeError(f"size {size} must be 2 positive values (the output H and W)")
    for name, value, allowed in (("method", a["method"], METHODS),
                                 ("coordinate_transformation_mode", a["coordinate_transformation_mode"], COORDINATE_MODES),
                                 ("rounding_method", a["rounding_method"], ROUNDING_METHODS)):
        if value not in allowed:
            raise ShapeError(f"{name} '{value}' is not supported (one of {', '.join(allowed)})")
    if min(data[2:]) < 1:
        raise ShapeError(f"'data' {fmt_shape(data)} has an empty spatial dimension")
    if a["scale_h"] < 0 or a["scale_w"] < 0:
        raise ShapeError(f"scale_h {a['scale_h']} and scale_w {a['scale_w']} must be positive (or 0: size / input size)")
    return (data[0], data[1], size[0], size[1])


@nn_op(shape=resize2d, layout=LayoutRule.SENSITIVE)
class Resize2DOp(DataOp):
    """Resize H and W to `size` (Relay image.resize2d, ONNX Resize): `nearest_neighbor` copies the input
    pixel `rounding_method` picks, `linear` interpolates the two neighbours on each axis; where an output
    pixel reads is `coordinate_transformation_mode` of its index and the scale (`scale_h`/`scale_w` as
    the model gave them, or 0: size / input size). Linear needs a float element type."""

    name = "nn.resize2d"
    size = ints()
    scale_h = float_(0.0)
    scale_w = float_(0.0)
    layout = str_("NCHW")
    method = str_("nearest_neighbor")
    coordinate_transformation_mode = str_("half_pixel")
    rounding_method = str_("round_prefer_floor")
