"""`conv-space-to-depth`: a strided NHWC convolution over few input channels as a stride-1 one over more.

A `linalg.conv_2d_nhwc_hwcf` on tensors with stride (sh, sw) > 1, dilation 1 and fewer than
`max_channels` input channels (an RGB stem) is rewritten by space-to-depth: input row sh*i + a
becomes row i, channel group a (the same for columns), so that

    out[y, x, f] = sum over u, v, (a, b, c) of  X'[y + u, x + v, (a, b, c)] * W'[u, v, (a, b, c), f]

with X'[i, j, (a, b, c)] = X[sh*i + a, sw*j + b, c] (the input zero-padded or cut to whole phases:
a reshape, a `linalg.transpose`, a reshape) and W'[u, v, (a, b, c)] = W[sh*u + a, sw*v + b, c] (the
weight zero-padded to whole phases, reshaped and transposed the same way; a constant weight folds
at compile time). ResNet's 7x7 stride-2 stem over 3 channels becomes a 4x4 stride-1 convolution over
12: IREE's data tiling pads input channels to 16, which costs 5.3x for 3 channels and 1.3x for 12
(`runtime/iree/backend.py` runs this pass before compiling).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import tensor
from xdsl.dialects.builtin import DenseArrayBase, DenseIntOrFPElementsAttr, ModuleOp, TensorType, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from xrelay.lowering.builders import Emitter, TensorConvPattern, reassociation
from xrelay.pass_base import REWRITES, XRelayPass, register_xrelay_pass, rewrite_module


def _phases(e: Emitter, value: SSAValue, axes: tuple[int, int], steps: tuple[int, int]) -> SSAValue:
    """`value` with each of `axes` split into (size / step, step) and the two step axes moved right
    after the second axis' outer part: (.., H/sh, sh, W/sw, sw, ..) -> (.., H/sh, W/sw, sh, sw, ..)."""
    ttype = value.type
    assert isinstance(ttype, TensorType)
    shape = list(ttype.get_shape())
    (h, w), (sh, sw) = axes, steps
    assert w == h + 1
    split = [*shape[:h], shape[h] // sh, sh, shape[w] // sw, sw, *shape[w + 1:]]
    groups = [[i] for i in range(h)] + [[h, h + 1], [h + 2, h + 3]] + [[i + 2] for i in range(w + 1, len(shape))]
    element = ttype.get_element_type()
    expanded = e.add(tensor.ExpandShapeOp(value, [], reassociation(groups), split, TensorType(element, split)))
    permutation = [*range(h), h, h + 2, h + 1, h + 3, *range(h + 4, len(split))]
    moved = [split[p] for p in permutation]
    return e.add(linalg.TransposeOp(expanded, e.empty(moved, element), DenseArrayBase.from_list(i64, permutation),
                                    TensorType(element, moved)))


class StridedConvToSpaceToDepth(TensorConvPattern):
    """A strided, undilated, few-input-channel `linalg.conv_2d_nhwc_hwcf` on tensors → a stride-1
    convolution over the input's space-to-depth phases."""

    def __init__(self, max_channels: int):
        self.max_channels = max_channels

    def rewrite_conv(self, op: linalg.Conv2DNhwc_HwcfOp, rewriter: PatternRewriter, data: SSAValue, weight: SSAValue,
                     init: SSAValue, strides: list[int], dilations: list[int]) -> None:
        sh, sw = strides
        if (sh, sw) == (1, 1) or dilations != [1, 1]:
            return
        n, height, width, channels = data.type.get_shape()
        kh, kw, _, _ = weight.type.get_shape()
        _, oh, ow, _ = init.type.get_shape()
        if channels >= self.max_channels:
            return
        taps_h, taps_w = -(-kh // sh), -(-kw // sw)  # kernel taps per phase
        need_h, need_w = (oh + taps_h - 1) * sh, (ow + taps_w - 1) * sw  # input rows/columns in whole phases
        e = Emitter()
        if need_h < height or need_w < width:  # rows and columns no output reads
            data = e.add(tensor.ExtractSliceOp.from_static_parameters(
                data, [0, 0, 0, 0], [n, min(height, need_h), min(width, need_w), channels]))
        if need_h > height or need_w > width:
            data = e.pad(data, [0, 0, 0, 0], [0, max(0, need_h - height), max(0, need_w - width), 0], 0)
        phases = e.collapse(_phases(e, data, (1, 2), (sh, sw)), [[0], [1], [2], [3, 4, 5]])
        padded = e.pad(weight, [0, 0, 0, 0], [taps_h * sh - kh, taps_w * sw - kw, 0, 0], 0)
        kernel = e.collapse(_phases(e, padded, (0, 1), (sh, sw)), [[0], [1], [2, 3, 4], [5]])
        ones = DenseIntOrFPElementsAttr.from_list(TensorType(i64, [2]), [1, 1])
        e.add(linalg.Conv2DNhwc_HwcfOp([phases, kernel], [init], [init.type], strides=ones, dilations=ones))
        rewriter.replace(op, e.ops, [e.ops[-1].results[0]])


@register_xrelay_pass("conv-space-to-depth", statistics=(REWRITES,))
@dataclass(frozen=True)
class ConvSpaceToDepth(XRelayPass):
    """Rewrite strided NHWC convolutions with fewer than `max_channels` input channels as stride-1
    convolutions over the input's space-to-depth phases (linalg on tensors)."""

    max_channels: int = 4

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_module(StridedConvToSpaceToDepth(self.max_channels), op)
