"""PoolAfterPointwiseConv: `conv2d(avg_pool2d(x), w)` becomes `avg_pool2d(conv2d(x, w))` for a 1x1 conv.

An average pool is, per output position, a weighted sum of input positions whose weights (1 over
the window's count, zero outside it) are the same for every channel. An unpadded 1x1 convolution of
stride 1 without groups is, per position, the same linear map of the channels. So the two commute:
pooling after the convolution gives the same values (up to float rounding), the pool's zero padding
mapping to zero. When the convolution has fewer output than input channels, the pool (and its pad
and divide) then runs over that many fewer channels: Inception's pool-projection branches pool
576 channels and project them to 64-128 (an avg pool before a 1x1 conv in every block but two).

The pool's result must be used only by the convolution, the two in the same layout, the
convolution's output channels fewer than its input channels, and the element type a float.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from xrelay.dialects import nn
from xrelay.pass_base import PatternPass, register_xrelay_pass


def pointwise(conv: nn.Conv2DOp) -> bool:
    """Whether `conv` is a 1x1, stride-1, undilated, unpadded convolution without groups whose output
    keeps its data layout."""
    attrs = conv.attrs()
    kernel_layout, data_layout = attrs["kernel_layout"], attrs["data_layout"]
    weight_shape = conv.operands[1].type.get_shape()
    return (tuple(weight_shape[kernel_layout.index(a)] for a in "HW") == (1, 1) and tuple(attrs["strides"]) == (1, 1)
            and tuple(attrs["dilation"]) == (1, 1) and not any(attrs["padding"]) and attrs["groups"] == 1
            and attrs["out_layout"] in ("", data_layout))


class SwapAvgPoolAndPointwiseConv(RewritePattern):
    """Moves an average pool from in front of a 1x1 convolution to after it (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, conv: nn.Conv2DOp, rewriter: PatternRewriter) -> None:
        pool = conv.operands[0].owner
        if not (isinstance(pool, nn.AvgPool2DOp) and pool.results[0].has_one_use() and pointwise(conv)):
            return
        attrs = conv.attrs()
        layout = attrs["data_layout"]
        if pool.attrs()["layout"] != layout:
            return
        x = pool.operands[0]
        channel = layout.index("C")
        in_channels, out_channels = x.type.get_shape()[channel], conv.results[0].type.get_shape()[channel]
        if out_channels >= in_channels:
            return
        projected = nn.make("nn.conv2d", [x, conv.operands[1]], **attrs)
        pooled = nn.make("nn.avg_pool2d", [projected.results[0]], **pool.attrs())
        rewriter.insert([projected, pooled], InsertPoint.before(conv))
        rewriter.replace_all_uses_with(conv.results[0], pooled.results[0])
        rewriter.erase(conv)
        rewriter.erase(pool)


@register_xrelay_pass("pool-after-pointwise-conv", opt_level=3, required=("InferType",), infer_type_after=True)
@dataclass(frozen=True)
class PoolAfterPointwiseConv(PatternPass):
    """Moves each `nn.avg_pool2d` whose only user is a 1x1 convolution with fewer output channels to
    after that convolution (see the module docstring)."""

    pattern = SwapAvgPoolAndPointwiseConv
