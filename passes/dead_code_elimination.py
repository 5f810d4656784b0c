"""DeadCodeElimination: Relay's name for xDSL's dead-code elimination (`region_dce`).

nn ops and constants are pure, so xDSL's liveness analysis removes every one whose results
nothing uses, whole dead chains at once, in nested regions too.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.pattern_rewriter import PatternRewriterListener
from xdsl.transforms.dead_code_elimination import region_dce

from xrelay.instrument.statistics import Statistic
from xrelay.pass_base import XRelayPass, register_xrelay_pass


ERASED = Statistic("num-erased", "Number of dead ops erased")


@register_xrelay_pass("dead-code-elimination", opt_level=1, infer_type_after=True, statistics=(ERASED,))
@dataclass(frozen=True)
class DeadCodeElimination(XRelayPass):
    """Removes every op without side effects whose results are unused (xDSL's `dce`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        region_dce(op.body, PatternRewriterListener(operation_removal_handler=[lambda erased: ERASED.add()]))
