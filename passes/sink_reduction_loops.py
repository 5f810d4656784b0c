"""SinkReductionLoops: move an accumulation nest's short innermost reduction loops below its points.

After `tile-loops` a convolution's nest runs its reduction loops between the tiles and the points,
`for co: for ci, kh, kw: for oh, ow: out[co, oh, ow] += ...`, so every multiply-add loads and
stores its output element. Moving the last reduction loops, when they are short (the filter's `kw`,
3 iterations), below the points,

    for co: for ci, kh: for oh, ow: for kw: out[co, oh, ow] += ...

gives the C compiler a loop it unrolls whole, keeping the element in a register across it: one
load and one store per `kw` iterations instead of per iteration. The pass moves the longest run of
reduction loops ending just above the points whose trip counts multiply to at most `max_trips`.

Legal because each output element is still updated by the same iterations in the same order: the
reduction loops keep their relative order (the moved ones were innermost of them), and iterations of
the points write disjoint elements. The pass checks that as `unroll-jam-loops` does (one store,
loads of the stored buffer only at its indices, no values carried), and that the moved loops and
the points have constant bounds or bounds from outside them, with nothing but the next loop in their
bodies. Other nests are left alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, Operation
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from xrelay.instrument.statistics import Statistic
from xrelay.pass_base import REWRITES, XRelayPass, register_xrelay_pass, rewrite_module
from xrelay.passes.tile_loops import _constant, accumulating_store
from xrelay.passes.unroll_jam_loops import LoopChainPattern

SUNK_NESTS = Statistic("num-sunk-nests", "Number of loop nests whose short reduction loops were moved below the points")


def _constant_trips(loop: scf.ForOp) -> int | None:
    lb, ub, step = (_constant(v) for v in (loop.lb, loop.ub, loop.step))
    return None if None in (lb, ub, step) or step <= 0 else max(0, -(-(ub - lb) // step))


def sunk_loops(loops: list[scf.ForOp], max_trips: int) -> tuple[list[scf.ForOp], list[scf.ForOp]] | None:
    """(the reduction loops to move, the points they go below), or None (module docstring)."""
    store = accumulating_store(loops[-1].body.block)
    if store is None:
        return None
    indices = set(store.indices)
    first_point = len(loops)
    while first_point > 0 and loops[first_point - 1].body.block.args[0] in indices:
        first_point -= 1
    moved: list[scf.ForOp] = []
    for loop in reversed(loops[:first_point]):
        trips = _constant_trips(loop)
        if loop.body.block.args[0] in indices or trips is None or math.prod(map(_constant_trips, moved)) * trips > max_trips:
            break
        moved.insert(0, loop)
    points = loops[first_point:]
    if not moved or not points:
        return None
    segment = moved + points
    ivs = {loop.body.block.args[0] for loop in segment}
    for loop in segment[:-1]:
        if len(loop.body.block.ops) != 2:  # the next loop and the yield
            return None
    if any(bound in ivs or segment[0].is_ancestor(bound.owner) for loop in segment
           for bound in (loop.lb, loop.ub, loop.step)):
        return None
    return moved, points


@dataclass
class SinkShortReductions(LoopChainPattern):
    """Move the short reduction loops of one outermost accumulation nest (module docstring)."""

    max_trips: int

    def rewrite_nest(self, op: scf.ForOp, loops: list[scf.ForOp], rewriter: PatternRewriter) -> None:
        found = sunk_loops(loops, self.max_trips)
        if found is None:
            return
        moved, points = found
        order = points + moved
        blocks = [Block(arg_types=[IndexType()]) for _ in order]
        innermost = points[-1]
        for loop, block in zip(order, blocks):
            if loop is not innermost:  # the other loops' bodies hold only the next loop
                rewriter.replace_all_uses_with(loop.body.block.args[0], block.args[0])
        rewriter.inline_block(innermost.body.block, InsertPoint.at_start(blocks[-1]),
                              [blocks[order.index(innermost)].args[0]])
        inner: Operation | None = None
        for loop, block in reversed(list(zip(order, blocks))):
            if inner is not None:
                rewriter.insert([inner, scf.YieldOp()], InsertPoint.at_end(block))
            inner = scf.ForOp(loop.lb, loop.ub, loop.step, [], block)
        rewriter.replace(moved[0], inner)
        SUNK_NESTS.add()


@register_xrelay_pass("sink-reduction-loops", statistics=(SUNK_NESTS, REWRITES))
@dataclass(frozen=True)
class SinkReductionLoops(XRelayPass):
    """Move the innermost reduction loops of every accumulation nest, up to `max_trips` iterations
    together, below its points (loops level; see the module docstring)."""

    max_trips: int = 4

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_trips < 1:
            raise PassFailedException(f"sink-reduction-loops: max_trips must be at least 1, got {self.max_trips}")
        rewrite_module(SinkShortReductions(self.max_trips), op, apply_recursively=False)
