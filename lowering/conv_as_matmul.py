"""`conv-to-matmul`: NHWC/HWCF convolutions on tensors that are matrix products written as `linalg.matmul`.

Two kinds of `linalg.conv_2d_nhwc_hwcf` become a `linalg.matmul` between reshapes:
- a 1x1 convolution: the input (strided first with `tensor.extract_slice` when the stride is not
  1) collapsed to (N*OH*OW, C), times the weight collapsed to (C, F);
- a convolution with fewer than `im2col_channels` input channels (an RGB stem of stride 1; a
  strided one goes to `conv-space-to-depth` first, in `passes/iree_lowering.py`): im2col, a
  `linalg.generic` gathering every window into (N, OH, OW, KH, KW, C), collapsed to
  (N*OH*OW, KH*KW*C), times the weight collapsed to (KH*KW*C, F).
The product is expanded back to (N, OH, OW, F). This is the form IREE's data tiling packs well
(`runtime/iree/backend.py` runs it before compiling): it leaves a strided 1x1 convolution as a
generic it neither packs nor vectorizes, and pads a blocked convolution's input channels to 16
(ResNet's stem over 3 channels: 10-14 ms packed as a convolution, 5 ms as im2col and matmul, 3.5 ms
after space-to-depth; per-dispatch profile, 1 thread).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import tensor
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from xrelay.dialects.upstream_contractions import MatmulOp
from xrelay.lowering.builders import PARALLEL, Emitter, TensorConvPattern, affine_map, dims, reassociation
from xrelay.instrument.statistics import Statistic
from xrelay.pass_base import REWRITES, XRelayPass, register_xrelay_pass, rewrite_module

MATMULS = Statistic("num-matmuls", "Number of convolutions formed into linalg.matmul kernels")


class ConvAsMatmul(TensorConvPattern):
    """A 1x1 or few-input-channel `linalg.conv_2d_nhwc_hwcf` on tensors → reshapes around a `linalg.matmul`."""

    def __init__(self, im2col_channels: int):
        self.im2col_channels = im2col_channels

    def rewrite_conv(self, op: linalg.Conv2DNhwc_HwcfOp, rewriter: PatternRewriter, data: SSAValue, weight: SSAValue,
                     init: SSAValue, strides: list[int], dilations: list[int]) -> None:
        kh, kw, channels, filters = weight.type.get_shape()
        n, oh, ow, _ = init.type.get_shape()
        e = Emitter()
        element = init.type.get_element_type()
        if (kh, kw) == (1, 1):
            if strides != [1, 1]:
                data = e.add(tensor.ExtractSliceOp.from_static_parameters(
                    data, [0, 0, 0, 0], [n, oh, ow, channels], [1, *strides, 1]))
            rows, depth = data, [3]
        elif channels < self.im2col_channels:
            b, y, x, i, j, c = dims(6)
            window = affine_map(6, [b, y * strides[0] + i * dilations[0], x * strides[1] + j * dilations[1], c])
            rows = e.generic([data], e.empty([n, oh, ow, kh, kw, channels], element),
                             [window, affine_map(6, dims(6))], [PARALLEL] * 6, lambda body, args: args[0])
            depth = [3, 4, 5]
        else:
            return
        lhs = e.collapse(rows, [[0, 1, 2], depth])
        rhs = e.collapse(weight, [[0, 1, 2], [3]])
        acc = e.collapse(init, [[0, 1, 2], [3]])
        product = e.add(MatmulOp([lhs, rhs], [acc], [acc.type]))
        e.add(tensor.ExpandShapeOp(product, [], reassociation([[0, 1, 2], [3]]), [n, oh, ow, filters], init.type))
        rewriter.replace(op, e.ops, [e.ops[-1].results[0]])
        MATMULS.add()


@register_xrelay_pass("conv-to-matmul", statistics=(MATMULS, REWRITES))
@dataclass(frozen=True)
class ConvToMatmul(XRelayPass):
    """Rewrite 1x1 NHWC convolutions, and those with fewer than `im2col_channels` input channels,
    as a `linalg.matmul` between reshapes (linalg on tensors)."""

    im2col_channels: int = 4

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_module(ConvAsMatmul(self.im2col_channels), op)
