"""2-D window ops: convolution and pooling (NCHW-family layouts, Relay's padding and window attributes).

Kernels: runtime/reference/nn_kernels/window.py; lowerings: lowering/to_linalg/window.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import TensorType as T
from xdsl.irdl import operand_def

from xrelay.dialects.layout import check_layout, window_output_size
from xrelay.dialects.infer import Shape, ShapeError, check_rank, fmt_shape
from xrelay.dialects.attributes import bool_, int_, ints, str_
from xrelay.dialects.op_base import DataOp, LayoutRule, family_op, nn_op

__all__ = ["AvgPool2DOp", "Conv2DOp", "GlobalAvgPool2DOp", "GlobalMaxPool2DOp", "MaxPool2DOp"]


def _check_positive(**values: Sequence[int]) -> None:
    for name, value in values.items():
        if len(value) != 2 or min(value) < 1:
            raise ShapeError(f"{name} {tuple(value)} must be 2 positive values")


def _spatial_output(data: Shape, d: dict, a: dict, window: tuple[int, int], ceil: bool, what: str) -> tuple[int, int]:
    """Output H and W of a 2-D window op (`a`: its strides, dilation, padding) sliding `window` over
    `data` (`d`: its size per layout letter); ShapeError naming the window (`what`) when empty."""
    top, left, bottom, right = a["padding"]
    out_h = window_output_size(d["H"], top + bottom, window[0], a["strides"][0], a["dilation"][0], ceil)
    out_w = window_output_size(d["W"], left + right, window[1], a["strides"][1], a["dilation"][1], ceil)
    if out_h < 1 or out_w < 1:
        raise ShapeError(f"empty output: 'data' {fmt_shape(data)} is smaller than {what} after padding "
                         f"{tuple(a['padding'])}")
    return out_h, out_w


def conv2d(shapes: list[Shape], a: dict) -> Shape:
    data, weight = shapes
    check_rank("data", data, 4)
    check_rank("weight", weight, 4)
    data_layout, kernel_layout = a["data_layout"], a["kernel_layout"]
    out_layout = a["out_layout"] or data_layout
    check_layout(data_layout, "NCHW", "data_layout")
    check_layout(kernel_layout, "OIHW", "kernel_layout")
    check_layout(out_layout, "NCHW", "out_layout")
    d = dict(zip(data_layout, data))
    k = dict(zip(kernel_layout, weight))
    groups = a["groups"]
    strides, dilation = a["strides"], a["dilation"]
    _check_positive(strides=strides, dilation=dilation)
    if groups < 1 or d["C"] % groups or k["O"] % groups:
        raise ShapeError(
            f"groups={groups} must divide input channels {d['C']} of 'data' {fmt_shape(data)} "
            f"and output channels {k['O']} of 'weight' {fmt_shape(weight)}"
        )
    if k["I"] * groups != d["C"]:
        raise ShapeError(
            f"'weight' {fmt_shape(weight)} ({kernel_layout}) has {k['I']} input channels per group, "
            f"but 'data' {fmt_shape(data)} ({data_layout}) has {d['C']} channels in {groups} group(s)"
        )
    if a["channels"] is not None and a["channels"] != k["O"]:
        raise ShapeError(f"channels={a['channels']} but 'weight' {fmt_shape(weight)} has {k['O']} outputs")
    if a["kernel_size"] is not None and tuple(a["kernel_size"]) != (k["H"], k["W"]):
        raise ShapeError(
            f"kernel_size={tuple(a['kernel_size'])} but 'weight' {fmt_shape(weight)} has a "
            f"{k['H']}x{k['W']} kernel"
        )
    out = {"N": d["N"], "C": k["O"]}
    out["H"], out["W"] = _spatial_output(data, d, a, (k["H"], k["W"]), False,
                                         f"the dilated kernel of 'weight' {fmt_shape(weight)}")
    return tuple(out[c] for c in out_layout)


def pool2d(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    check_rank("data", data, 4)
    layout = a["layout"]
    check_layout(layout, "NCHW", "layout")
    d = dict(zip(layout, data))
    _check_positive(pool_size=a["pool_size"], strides=a["strides"], dilation=a["dilation"])
    out = dict(d)
    out["H"], out["W"] = _spatial_output(data, d, a, tuple(a["pool_size"]), a["ceil_mode"],
                                         f"pool_size {tuple(a['pool_size'])}")
    return tuple(out[c] for c in layout)


def global_pool2d(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    check_rank("data", data, 4)
    check_layout(a["layout"], "NCHW", "layout")
    empty = [c for c, n in zip(a["layout"], data) if c in "HW" and n == 0]
    if empty:  # the mean of no values (Relay would divide by zero)
        raise ShapeError(f"'data' {fmt_shape(data)} has an empty spatial dimension ({', '.join(empty)} is 0)")
    return tuple(1 if c in "HW" else n for c, n in zip(a["layout"], data))


class ConvBase(DataOp):
    """The operand and attributes 2-D convolutions share (`nn.conv2d`, `nn.conv2d_transpose`)."""

    weight = operand_def(T)
    strides = ints((1, 1))
    padding = ints((0, 0, 0, 0))
    dilation = ints((1, 1))
    groups = int_(1)
    channels = int_()
    kernel_size = ints()
    data_layout = str_("NCHW")
    kernel_layout = str_("OIHW")
    out_layout = str_("")


Conv2DOp = family_op(ConvBase, "Conv2DOp", "nn.conv2d", "2-D convolution (Relay nn.conv2d).",
                     shape=conv2d, layout=LayoutRule.CONV)


class _Pool2DOp(DataOp):
    pool_size = ints((1, 1))
    strides = ints((1, 1))
    dilation = ints((1, 1))
    padding = ints((0, 0, 0, 0))
    layout = str_("NCHW")
    ceil_mode = bool_(False)
    SHAPE_RULE = staticmethod(pool2d)
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.POOL


MaxPool2DOp = family_op(_Pool2DOp, "MaxPool2DOp", "nn.max_pool2d")


@nn_op(float_only=True)
class AvgPool2DOp(_Pool2DOp):
    name = "nn.avg_pool2d"
    count_include_pad = bool_(False)


class _GlobalPool2DOp(DataOp):
    layout = str_("NCHW")
    SHAPE_RULE = staticmethod(global_pool2d)
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.POOL


GlobalAvgPool2DOp = family_op(_GlobalPool2DOp, "GlobalAvgPool2DOp", "nn.global_avg_pool2d", float_only=True)
GlobalMaxPool2DOp = family_op(_GlobalPool2DOp, "GlobalMaxPool2DOp", "nn.global_max_pool2d")
