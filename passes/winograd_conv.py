"""WinogradConv: a 3x3 stride-1 convolution as Winograd's F(m x m, 3 x 3) in nn ops.

Lavin and Gray's minimal filtering computes each m x m tile of the output from an (m + 2) x (m + 2)
tile of the input with (m + 2)^2 multiplications per channel pair instead of 9 m^2: the input tiles
are transformed (V = B^T d B), multiplied channel by channel with the transformed filters (U = G g
G^T, computed here once from the constant weight), and the products transformed back (Y = A^T M A).
Over all tiles the middle step is one batched matrix product, `nn.batch_matmul` of (m + 2)^2 matrices
[tiles x C] by [C x F], so every later level (linalg, loops, IREE) runs it as its matmul:

    nn.conv2d(x, w)  ->  pad; every tile's (m + 2) x (m + 2) window by reshape, strided_slice and
                         concatenate; V = B^T d B as two nn.batch_matmul with the constant B^T;
                         nn.batch_matmul(V, U); Y = A^T M A as two more; reshape, transpose and
                         slice back into the convolution's layout.

F(2x2, 3x3) (`tile=2`) does 2.25 times fewer multiply-adds than the convolution, F(4x4, 3x3) (`tile=4`)
4 times fewer, at the price of the transforms' passes over memory and of rounding: F(4, 3)'s
transforms hold constants up to 8, so float32 results differ from the direct sum in about the
last 5 bits. With `min_tiles`, a convolution whose output F(tile) would cut into fewer tiles than
that gets F(2x2, 3x3): over few tiles F(4, 3)'s weight, (6 / 3)^2 = 4 times the convolution's, is
read for few products, and the batched product is too thin to pay for it (`choose-conv-algorithm`
keeps Winograd for 40 tiles or more for the same reason). Matched: a floating-point `nn.conv2d` with a 3x3 kernel, strides and dilation 1, one
group, no empty dimension and a constant weight, in any data and kernel layout (the output in the
data layout); other convolutions are left alone. The xrelay CPU build has its own Winograd kernels
(`choose-conv-algorithm`); this pass is for the loops level, which has none, as Relay's
`conv2d_winograd` rewrite is for its schedules.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from xrelay.dialects import nn
from xrelay.passes.fold_constant import constant_value, erase_if_dead_constant
from xrelay.pass_base import PatternPass, register_xrelay_pass

_F = Fraction
TRANSFORMS = {
    2: ([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]],
        [[1, 0, 0], [_F(1, 2), _F(1, 2), _F(1, 2)], [_F(1, 2), _F(-1, 2), _F(1, 2)], [0, 0, 1]],
        [[1, 1, 1, 0], [0, 1, -1, -1]]),
    4: ([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0], [0, -2, -1, 2, 1, 0],
         [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]],
        [[_F(1, 4), 0, 0], [_F(-1, 6), _F(-1, 6), _F(-1, 6)], [_F(-1, 6), _F(1, 6), _F(-1, 6)],
         [_F(1, 24), _F(1, 12), _F(1, 6)], [_F(1, 24), _F(-1, 12), _F(1, 6)], [0, 0, 1]],
        [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]]),
}
"""Output tile m -> (B^T, G, A^T) of F(m x m, 3 x 3) (Lavin and Gray, 2016)."""


def transformed_weight(weight: np.ndarray, layout: str, tile: int) -> np.ndarray:
    """U [(m + 2)^2, C, F]: G g G^T of every filter `g` of `weight` (in `layout`, a permutation of OIHW)."""
    oihw = weight.transpose([layout.index(a) for a in "OIHW"]).astype(np.float64)
    g = np.array(TRANSFORMS[tile][1], dtype=np.float64)
    u = np.einsum("xa,fcab,yb->xycf", g, oihw, g, optimize=True)
    return np.ascontiguousarray(u.reshape(-1, *u.shape[2:]).astype(weight.dtype))


class _Builder:
    """Inserts nn ops before one op and returns their results."""

    def __init__(self, rewriter: PatternRewriter, before: Operation, dtype):
        self.rewriter, self.before, self.dtype = rewriter, before, dtype

    def op(self, name: str, *operands: SSAValue, **attrs) -> SSAValue:
        made = nn.make(name, list(operands), **attrs)
        self.rewriter.insert(made, InsertPoint.before(self.before))
        return made.results[0]

    def constant(self, value) -> SSAValue:
        made = nn.ConstantOp(np.array(value, dtype=np.float64).astype(self.dtype))
        self.rewriter.insert(made, InsertPoint.before(self.before))
        return made.results[0]

    def reshape(self, value: SSAValue, *shape: int) -> SSAValue:
        return self.op("nn.reshape", value, newshape=list(shape))

    def slice(self, value: SSAValue, axis: int, begin: int, end: int) -> SSAValue:
        return self.op("nn.strided_slice", value, begin=[begin], end=[end], strides=[1], axes=[axis])

    def windows(self, value: SSAValue, axis: int, tiles: int, m: int) -> SSAValue:
        """The m + 2 elements from every m-th along `axis` (of length m * (tiles + 1)), overlapping
        windows as a new axis after `axis`: blocks of m, each followed by the next block's first two."""
        shape = list(value.type.get_shape())
        blocks = self.reshape(value, *shape[:axis], tiles + 1, m, *shape[axis + 1:])
        head = self.slice(blocks, axis, 0, tiles)
        tail = self.slice(blocks, axis, 1, tiles + 1)
        if m > 2:  # (F(2, 3)'s blocks are the two elements already)
            tail = self.slice(tail, axis + 1, 0, 2)
        return self.op("nn.concatenate", head, tail, axis=axis + 1)

    def transform(self, matrix, value: SSAValue) -> SSAValue:
        """`matrix` [r x a] applied to both leading axes [a, a, rest] of `value`: [r, r, rest]."""
        a, rest = value.type.get_shape()[0], value.type.get_shape()[2]
        r = len(matrix)
        left = self.constant([matrix])  # [1, r, a]: a batch of one broadcasts
        rows = self.op("nn.batch_matmul", left, self.reshape(value, 1, a, a * rest), transpose_b=False)
        return self.op("nn.batch_matmul", left, self.reshape(rows, r, a, rest), transpose_b=False)


class WinogradRewrite(RewritePattern):
    """Rewrites one matched convolution (see the module docstring)."""

    def __init__(self, tile: int, min_tiles: int = 0):
        self.tile, self.min_tiles = tile, min_tiles

    @op_type_rewrite_pattern
    def match_and_rewrite(self, conv: nn.Conv2DOp, rewriter: PatternRewriter) -> None:
        attrs = conv.attrs()
        data_layout, kernel_layout = attrs["data_layout"], attrs["kernel_layout"]
        weight = constant_value(conv.operands[1])
        if (weight is None or weight.dtype.kind != "f" or attrs["groups"] != 1 or tuple(attrs["strides"]) != (1, 1)
                or 0 in conv.operands[0].type.get_shape() or 0 in conv.results[0].type.get_shape()
                or tuple(attrs["dilation"]) != (1, 1) or attrs["out_layout"] not in ("", data_layout)
                or (weight.shape[kernel_layout.index("H")], weight.shape[kernel_layout.index("W")]) != (3, 3)):
            return
        out = dict(zip(data_layout, conv.results[0].type.get_shape()))
        m = self.tile
        if out["N"] * -(-out["H"] // m) * -(-out["W"] // m) < self.min_tiles:
            m = min(TRANSFORMS)
        b_t, _, a_t = TRANSFORMS[m]
        alpha = m + 2
        build = _Builder(rewriter, conv, weight.dtype)
        data = conv.operands[0]
        if data_layout != "NHWC":
            data = build.op("nn.transpose", data, axes=[data_layout.index(a) for a in "NHWC"])
        batch, height, width, channels = data.type.get_shape()
        rows, cols, filters = -(-out["H"] // m), -(-out["W"] // m), out["C"]
        tiles = batch * rows * cols
        top, left, bottom, right = attrs["padding"]
        # Padded to m * (tiles + 1) along H and W: the windows of the last tile end inside.
        widths = [0, 0, top, m * (rows + 1) - height - top, left, m * (cols + 1) - width - left, 0, 0]
        padded = build.op("nn.pad", data, pad_width=widths)
        windows = build.windows(build.windows(padded, 1, rows, m), 3, cols, m)  # [N, rows, a, cols, a, C]
        windows = build.op("nn.transpose", windows, axes=[2, 4, 0, 1, 3, 5])
        v = build.transform(b_t, build.reshape(windows, alpha, alpha, tiles * channels))
        u = build.constant(transformed_weight(weight, kernel_layout, m))
        products = build.op("nn.batch_matmul", build.reshape(v, alpha * alpha, tiles, channels), u,
                            transpose_b=False)  # [a * a, tiles, F]
        y = build.transform(a_t, build.reshape(products, alpha, alpha, tiles * filters))
        y = build.reshape(y, m, m, batch, rows, cols, filters)
        y = build.op("nn.transpose", y, axes=[2, 3, 0, 4, 1, 5])
        y = build.reshape(y, batch, m * rows, m * cols, filters)
        if (m * rows, m * cols) != (out["H"], out["W"]):
            y = build.op("nn.strided_slice", y, begin=[0, 0], end=[out["H"], out["W"]], strides=[1, 1], axes=[1, 2])
        if data_layout != "NHWC":
            y = build.op("nn.transpose", y, axes=["NHWC".index(a) for a in data_layout])
        rewriter.replace_all_uses_with(conv.results[0], y)
        weight_value = conv.operands[1]
        rewriter.erase(conv)
        erase_if_dead_constant(weight_value, rewriter)


@register_xrelay_pass("winograd-conv", required=("InferType",), infer_type_after=True)
@dataclass(frozen=True)
class WinogradConv(PatternPass):
    """Rewrites every 3x3 stride-1 ungrouped convolution with a constant weight as Winograd's F(tile x
    tile, 3 x 3): input and output transforms as adds and slices, and one `nn.batch_matmul` with the
    transformed weight (see the module docstring)."""

    tile: int = 2
    """The output tile m: 2 (F(2x2, 3x3)) or 4 (F(4x4, 3x3))."""
    min_tiles: int = 0
    """A convolution whose output F(tile) cuts into fewer tiles (all images) gets F(2x2, 3x3)."""

    def pattern(self) -> RewritePattern:
        if self.tile not in TRANSFORMS or self.min_tiles < 0:
            raise PassFailedException(f"winograd-conv: tile must be 2 or 4 and min_tiles at least 0, got "
                                      f"{self.tile} and {self.min_tiles}")
        return WinogradRewrite(self.tile, self.min_tiles)
