"""`select-to-minmax`: a select of a float comparison of its own two values becomes maximumf/minimumf.

torch-mlir writes ReLU (and clip's bounds) as `select(cmpf ugt, x, c), x, c)`; xrelay's lowering writes
`maximumf(x, c)`. The two are the same function, NaN included, when the comparison is unordered-or-greater
(`ugt`, `uge`): a NaN operand makes the comparison true and selects `x`, the NaN, as `maximumf` propagates
it; equal operands select either. So

    %p = arith.cmpf ugt, %a, %b : f32          %r = arith.maximumf %a, %b : f32
    %r = arith.select %p, %a, %b : f32    ->

and `ult`/`ule` give `minimumf`, with the operands of the comparison in either order. An ordered
comparison (`ogt`: a NaN selects the other value) is left alone. Run in `build`'s kernels phase before
`form-kernels`, so such a body is one op and the elementwise op joins its producer's kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from xrelay.instrument.statistics import Statistic
from xrelay.pass_base import REWRITES, XRelayPass, register_xrelay_pass, rewrite_module

SELECTS = Statistic("num-selects", "Number of selects of a comparison made maximumf/minimumf")

MAXIMUM, MINIMUM = ("ugt", "uge"), ("ult", "ule")
SWAPPED = {"ugt": "ult", "uge": "ule", "ult": "ugt", "ule": "uge"}


class SelectOfCompare(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SelectOp, rewriter: PatternRewriter) -> None:
        compare = op.cond.owner
        if not isinstance(compare, arith.CmpfOp) or not op.cond.has_one_use():
            return
        predicate = arith.CMPF_COMPARISON_OPERATIONS[compare.predicate.value.data]
        chosen = (op.lhs, op.rhs)
        if chosen == (compare.lhs, compare.rhs):
            pass
        elif chosen == (compare.rhs, compare.lhs) and predicate in SWAPPED:
            predicate = SWAPPED[predicate]
        else:
            return
        kind = arith.MaximumfOp if predicate in MAXIMUM else arith.MinimumfOp if predicate in MINIMUM else None
        if kind is None:
            return
        rewriter.replace_op(op, kind(op.lhs, op.rhs))
        rewriter.erase_op(compare)
        SELECTS.add()


@register_xrelay_pass("select-to-minmax", opt_level=0, statistics=(SELECTS, REWRITES))
@dataclass(frozen=True)
class SelectToMinMax(XRelayPass):
    """Make each select of an unordered comparison of its own two values maximumf or minimumf."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_module(SelectOfCompare(), op)
