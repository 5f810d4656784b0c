"""FuseMultiplyAdd: `arith.addf` of an `arith.mulf` as one `math.fma` (loops level, or any level with
scalar bodies).

`%p = arith.mulf %a, %b` whose only use is `%s = arith.addf %p, %c` (either operand) becomes
`%s = math.fma %a, %b, %c`: one rounding instead of two, as MLIR's `contract` fast-math flag allows
and what a CPU's fused multiply-add instruction computes. The result may differ from the unfused
one in its last bits, so the pass is an explicit choice (the C translation never fuses on its own).
Only f32 and f64 scalars are fused.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import Float32Type, Float64Type, ModuleOp
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from xrelay.instrument.statistics import Statistic
from xrelay.pass_base import REWRITES, XRelayPass, register_xrelay_pass, rewrite_module

FUSED = Statistic("num-fused-multiply-adds", "Number of arith.mulf + arith.addf pairs fused into math.fma")


class FuseMulfIntoAddf(RewritePattern):
    """`addf(mulf(a, b), c)` -> `fma(a, b, c)` when the product has no other use."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddfOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op.result.type, Float32Type | Float64Type):  # what the C translation has
            return
        for product, addend in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            mul = product.owner
            if isinstance(mul, arith.MulfOp) and product.has_one_use() and mul.parent_block() is op.parent_block():
                rewriter.replace(op, math.FmaOp(mul.lhs, mul.rhs, addend))
                rewriter.erase(mul)
                FUSED.add()
                return


@register_xrelay_pass("fuse-multiply-add", statistics=(FUSED, REWRITES))
@dataclass(frozen=True)
class FuseMultiplyAdd(XRelayPass):
    """Fuse every `arith.mulf` used only by an `arith.addf` into a `math.fma` (see the module docstring)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_module(FuseMulfIntoAddf(), op)
