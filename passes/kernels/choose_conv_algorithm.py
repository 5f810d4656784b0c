"""`choose-conv-algorithm`: each convolution kernel's algorithm, written as its `algorithm` attribute.

For every `kernel.dispatch` whose root is a 2-D convolution (any axis order: read from its indexing
maps), the pass sets `algorithm`:
- "winograd-f4" / "winograd-f2": F(m x m, 3 x 3) for a 3x3 stride-1 undilated float32 convolution
  with a constant weight (its transform is made once), when `winograd` is on, its compiled kernel runs
  here (runtime/native/conv_kernels.py: not with `XRELAY_NATIVE=0`, which has no numpy Winograd) and
  a tile m divides the output and leaves enough tiles (`winograd_tile`, measured on OpenBLAS);
- "im2col": one GEMM per block of output rows over copied patches (a 1x1 stride-1 convolution's
  patches are its data, no copy); a grouped one (a group loop in all three maps,
  `linalg_conv.conv_geometry`) one GEMM per group of each block;
- "direct": an ungrouped convolution whose reduction (KH * KW * C) is at most `direct_reduction`
  (a first layer over three colour channels) and whose patches im2col would copy (not 1x1 stride
  1): each block of output pixels' sums kept in registers over the whole reduction, no patches
  copied (runtime/native/direct_kernels.c);
- "depthwise": a depthwise convolution (each channel its own filter,
  `runtime/kernels/linalg_conv.conv_geometry`), run by the compiled depthwise kernel, which
  also applies the kernel's epilogue and writes its destination pad;
- "generic": what the executor contracts generically, by its indexing maps (a root that is none of
  these, or without static shapes).
The executor runs exactly the algorithm the attribute names.
"""

from __future__ import annotations

from dataclasses import dataclass

import math

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, f32
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation

from xrelay.dialects.kernel import DispatchOp
from xrelay.pass_base import XRelayPass, register_xrelay_pass
from xrelay.runtime.kernels.conv import WINOGRAD_TILES
from xrelay.runtime.kernels.linalg_conv import conv_geometry
from xrelay.runtime.kernels.linalg_structured import contraction_pair, is_constant
from xrelay.runtime.native.conv_kernels import available as native_available


def winograd_tile(n: int, c: int, f: int, oh: int, ow: int) -> int | None:
    """The Winograd tile m worth using for a 3x3 stride-1 conv of this shape, or None (im2col is faster):
    the largest m that divides OH and OW leaving at least 40 tiles, with at least 8 input and output
    channels (fewer tiles make the point-wise matmuls too thin; fewer channels, the transforms dominate)."""
    if min(c, f) < 8:
        return None
    for m in sorted(WINOGRAD_TILES, reverse=True):
        if oh % m == 0 and ow % m == 0 and n * (oh // m) * (ow // m) >= 40:
            return m
    return None


def conv_algorithm(root: LinalgStructuredOperation, winograd: bool, direct_reduction: int = 0) -> str:
    """The algorithm for convolution `root` (see the module docstring)."""
    pair = contraction_pair(root, 0)
    if pair is None:
        return "generic"
    try:
        ranges = tuple(root.get_static_loop_ranges())
    except NotImplementedError:
        return "generic"
    maps = [m.data for m in root.get_indexing_maps()]
    geometry = conv_geometry(maps, ranges, *pair, len(root.inputs))
    if geometry is None or geometry.depthwise:
        return "generic" if geometry is None else "depthwise"
    three_by_three = tuple(ranges[d] for d in geometry.kernel_loops) == (3, 3)
    if winograd and three_by_three and geometry.strides == (1, 1) and geometry.dilation == (1, 1) \
            and geometry.group_axes is None and root.results[0].type.element_type == f32 \
            and is_constant(root.inputs[geometry.weight]):
        out_shape = root.results[0].type.get_shape()
        n, f, oh, ow = (out_shape[a] for a in geometry.out_axes)
        c = root.inputs[geometry.weight].type.get_shape()[geometry.weight_axes[1]]
        tile = winograd_tile(n, c, f, oh, ow)
        if tile is not None:
            return f"winograd-f{tile}"
    channels = root.inputs[geometry.weight].type.get_shape()[geometry.weight_axes[1]]
    window = math.prod(ranges[d] for d in geometry.kernel_loops)
    copies_patches = window > 1 or geometry.strides != (1, 1)  # (a 1x1 stride-1 one's patches are its data)
    if geometry.group_axes is None and copies_patches and window * channels <= direct_reduction:
        return "direct"
    return "im2col"


def kernel_root(dispatch: DispatchOp) -> LinalgStructuredOperation | None:
    """The root op of a kernel: its structured op with a reduction loop."""
    for op in dispatch.body.block.ops:
        if isinstance(op, LinalgStructuredOperation) and any(
                str(it.data) == "reduction" for it in op.get_iterator_types()):
            return op
    return None


@register_xrelay_pass("choose-conv-algorithm")
@dataclass(frozen=True)
class ChooseConvAlgorithm(XRelayPass):
    """Set `algorithm` on every convolution kernel (`winograd`: whether Winograd may be chosen, where
    its compiled kernel runs; `direct_reduction`: the longest reduction a direct convolution gets, 0 for
    none)."""

    winograd: bool = True
    direct_reduction: int = 32

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for dispatch in op.walk():
            if isinstance(dispatch, DispatchOp) and dispatch.root.data == "conv":
                root = kernel_root(dispatch)
                if root is not None:
                    winograd = self.winograd and native_available()
                    dispatch.algorithm = StringAttr(conv_algorithm(root, winograd, self.direct_reduction))
