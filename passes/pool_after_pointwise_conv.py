"""PoolAfterPointwiseConv: an average pool and a 1x1 convolution next to each other run in the cheaper order.

An average pool is, per output position, a weighted sum of input positions whose weights (1 over
the window's count, zero outside it) are the same for every channel. An unpadded 1x1 convolution of
stride 1 without groups (and without a bias: `nn.conv2d` has none) is, per position, the same linear
map of the channels. So the two commute exactly (up to float rounding), the pool's zero padding
mapping to zero: `conv2d(avg_pool2d(x), w)` equals `avg_pool2d(conv2d(x, w))`.

The pass keeps whichever order does less work, estimated as the convolution's multiply-adds (its
pixels x input channels x output channels) plus the pool's (its output pixels x window taps x
channels), moving the pool across the convolution only when the other order is strictly cheaper, so
the two directions never undo each other and a second run changes nothing:

- `conv2d(avg_pool2d(x), w)` -> `avg_pool2d(conv2d(x, w))` (`SwapAvgPoolAndPointwiseConv`): a pool that
  keeps the pixel count (Inception's 3x3/1 pool projections) in front of a convolution to fewer
  channels then pools 64-128 channels instead of 192-1024.
- `avg_pool2d(conv2d(x, w))` -> `conv2d(avg_pool2d(x), w)` (`PoolBeforePointwiseConv`, `POOL_FIRST`): a
  pool that shrinks the image (DenseNet's transition layers: a 1x1 convolution halving the channels,
  then a 2x2/2 pool) before the convolution lets it multiply over a quarter of the pixels; the pool
  then runs over the input's channels, a small cost next to that.

Either way the first op's result must be used only by the second, the two in the same layout, and
the element type a float.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import AnyFloat
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from xrelay.dialects import nn
from xrelay.pass_base import PatternPass, register_xrelay_pass

POOL_FIRST = True  # also move an average pool from after a 1x1 convolution to before it when cheaper


def pointwise(conv: nn.Conv2DOp) -> bool:
    """Whether `conv` is a 1x1, stride-1, undilated, unpadded convolution without groups whose output
    keeps its data layout."""
    attrs = conv.attrs()
    kernel_layout, data_layout = attrs["kernel_layout"], attrs["data_layout"]
    weight_shape = conv.operands[1].type.get_shape()
    return (tuple(weight_shape[kernel_layout.index(a)] for a in "HW") == (1, 1) and tuple(attrs["strides"]) == (1, 1)
            and tuple(attrs["dilation"]) == (1, 1) and not any(attrs["padding"]) and attrs["groups"] == 1
            and attrs["out_layout"] in ("", data_layout))


def work(pool: nn.AvgPool2DOp, conv: nn.Conv2DOp, pool_first: bool) -> int:
    """Estimated multiply-adds of `pool` and `conv` (either order in the module) run pool first or
    convolution first: the convolution's pixels x input x output channels plus the pool's output
    pixels x window taps x the channels it pools."""
    layout = conv.attrs()["data_layout"]
    channel = layout.index("C")
    if conv.operands[0].owner is pool:  # pool first today
        unpooled, pooled = pool.operands[0].type.get_shape(), conv.results[0].type.get_shape()
        in_channels, out_channels = unpooled[channel], pooled[channel]
    else:  # convolution first today
        unpooled, pooled = conv.operands[0].type.get_shape(), pool.results[0].type.get_shape()
        in_channels, out_channels = unpooled[channel], pooled[channel]
    pixels_in = math.prod(unpooled[i] for i, a in enumerate(layout) if a != "C")
    pixels_out = math.prod(pooled[i] for i, a in enumerate(layout) if a != "C")
    taps = math.prod(pool.attrs()["pool_size"])
    if pool_first:
        return pixels_out * taps * in_channels + pixels_out * in_channels * out_channels
    return pixels_in * in_channels * out_channels + pixels_out * taps * out_channels


def _same_layout(pool: nn.AvgPool2DOp, conv: nn.Conv2DOp) -> bool:
    """The two in one layout, over floats (an integer pool rounds each window's mean)."""
    return (pool.attrs()["layout"] == conv.attrs()["data_layout"]
            and isinstance(conv.results[0].type.get_element_type(), AnyFloat))


class SwapAvgPoolAndPointwiseConv(RewritePattern):
    """Moves an average pool from in front of a 1x1 convolution to after it when that is cheaper
    (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, conv: nn.Conv2DOp, rewriter: PatternRewriter) -> None:
        pool = conv.operands[0].owner
        if not (isinstance(pool, nn.AvgPool2DOp) and pool.results[0].has_one_use() and pointwise(conv)
                and _same_layout(pool, conv)):
            return
        if not work(pool, conv, pool_first=False) < work(pool, conv, pool_first=True):
            return
        projected = nn.make("nn.conv2d", [pool.operands[0], conv.operands[1]], **conv.attrs())
        pooled = nn.make("nn.avg_pool2d", [projected.results[0]], **pool.attrs())
        rewriter.insert([projected, pooled], InsertPoint.before(conv))
        rewriter.replace_all_uses_with(conv.results[0], pooled.results[0])
        rewriter.erase(conv)
        rewriter.erase(pool)


class PoolBeforePointwiseConv(RewritePattern):
    """Moves an average pool from after a 1x1 convolution to in front of it when that is cheaper
    (module docstring; `POOL_FIRST`, read when the pass runs)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, pool: nn.AvgPool2DOp, rewriter: PatternRewriter) -> None:
        conv = pool.operands[0].owner
        if not (POOL_FIRST and isinstance(conv, nn.Conv2DOp) and conv.results[0].has_one_use() and pointwise(conv)
                and _same_layout(pool, conv)):
            return
        if not work(pool, conv, pool_first=True) < work(pool, conv, pool_first=False):
            return
        pooled = nn.make("nn.avg_pool2d", [conv.operands[0]], **pool.attrs())
        projected = nn.make("nn.conv2d", [pooled.results[0], conv.operands[1]], **conv.attrs())
        rewriter.insert([pooled, projected], InsertPoint.before(pool))
        rewriter.replace_all_uses_with(pool.results[0], projected.results[0])
        rewriter.erase(pool)
        rewriter.erase(conv)


class CheaperPoolOrder(GreedyRewritePatternApplier):
    """Both directions (module docstring)."""

    def __init__(self) -> None:
        super().__init__([SwapAvgPoolAndPointwiseConv(), PoolBeforePointwiseConv()])


@register_xrelay_pass("pool-after-pointwise-conv", opt_level=3, required=("InferType",), infer_type_after=True)
@dataclass(frozen=True)
class PoolAfterPointwiseConv(PatternPass):
    """Puts each `nn.avg_pool2d` next to a 1x1 convolution (the first's only user the second) on the
    side of it that does less work (see the module docstring)."""

    pattern = CheaperPoolOrder
