"""UnrollJamLoops: unroll an output loop of an accumulation nest and jam the copies into its innermost body.

An accumulation nest (`tile_loops.py`) updates one output element per innermost iteration,
`out[..] = f(out[..], a[..], b[..])`. When an output loop `l` (not the innermost) does not index
some load that the innermost loop walks, copies of the innermost body for `l, l + 1, ..,
l + factor - 1` side by side reuse that load: a convolution's `co` loop shares one row of its
input between `factor` filters, a matmul's `i` loop one row of `b` between `factor` rows of `a`.
The pass steps `l` by `factor` and repeats the innermost body for each of those iterations:

    for co: for ci, kh, kw: for oh, ow: out[co, ..] += in[ci, ..] * w[co, ..]
      ->  for co (step 4): for ci, kh, kw: for oh, ow: out[co + u, ..] += in[ci, ..] * w[co + u, ..], u = 0..3

Legal because each output element is still updated by the same iterations in the same order:
iterations of `l` write disjoint elements (its induction variable is one of the store's indices),
the body writes no other buffer, and it reads the output only at the element it stores. The pass
checks that, as `tile-loops` does: loops carry no values; the innermost body holds no region, one
`memref.store` and no allocation or copy; every load of the stored buffer is through the same memref
at the same indices; `l` has a known trip count (`trip_count`) that `factor` divides (with
`remainder`, any trip count and a constant step: the iterations after the last whole group run
unjammed in a copy of `l` after it), and its induction variable is used only in the innermost body
(no inner loop's bounds depend on it). The
loop over the output's last axis stays as it is (the C compiler vectorises it); of the other loops
that qualify, the innermost is unrolled. Other nests are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import affine, arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from xrelay.instrument.statistics import Statistic
from xrelay.pass_base import REWRITES, XRelayPass, register_xrelay_pass, rewrite_module
from xrelay.passes.tile_loops import OutermostNestPattern, _constant, accumulating_store, index_constants

JAMMED_NESTS = Statistic("num-jammed-nests", "Number of loop nests whose output loop was unrolled and jammed")

_INDEX_OPS = (arith.ConstantOp, arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.MinSIOp, arith.MaxSIOp,
              affine.ApplyOp)
"""Ops that may sit between the loops of a nest (a tile's bounds), not only in its innermost body."""


def loop_chain(loop: scf.ForOp) -> list[scf.ForOp] | None:
    """`loop` and the loops nested in it, each body holding index arithmetic and the next loop, down to
    a body without loops; None when a loop carries values or a body holds anything else."""
    loops = [loop]
    while True:
        if loops[-1].iter_args:
            return None
        body = list(loops[-1].body.block.ops)[:-1]  # without the scf.yield
        inner = [op for op in body if isinstance(op, scf.ForOp)]
        if not inner:
            return loops
        if len(inner) > 1 or not all(isinstance(op, _INDEX_OPS) for op in body if op is not inner[0]):
            return None
        loops.append(inner[0])


class LoopChainPattern(OutermostNestPattern):
    """An `OutermostNestPattern` over each outermost nest's `loop_chain` (tiled nests too)."""

    def nest(self, op: scf.ForOp) -> list[scf.ForOp] | None:
        return loop_chain(op)


def _depends_on(value: SSAValue, ivs: set[SSAValue], inside: set[Operation]) -> bool:
    """Whether `value` is computed, within the ops `inside`, from one of `ivs`."""
    if value in ivs:
        return True
    owner = value.owner
    return owner in inside and any(_depends_on(v, ivs, inside) for v in owner.operands)


def trip_count(loop: scf.ForOp) -> int | None:
    """The iterations of `loop` when they are known: constant bounds and step, or a tile's points
    running from a value to that value plus a constant (`tile-loops` where the tile divides the loop)."""
    step, extent = _constant(loop.step), None
    if _constant(loop.lb) is not None and _constant(loop.ub) is not None:
        extent = _constant(loop.ub) - _constant(loop.lb)
    elif isinstance(end := loop.ub.owner, arith.AddiOp) and loop.lb in end.operands:
        extent = _constant(end.operands[1] if end.operands[0] is loop.lb else end.operands[0])
    if step is None or step <= 0 or extent is None or extent <= 0:
        return None
    return -(-extent // step)


def jammed_loop(loops: list[scf.ForOp], factor: int, remainder: bool = False) -> scf.ForOp | None:
    """The loop of the nest to unroll by `factor` and jam (module docstring), or None. With
    `remainder`, a loop whose trip count `factor` does not divide, or is unknown, qualifies too
    (its step must be a positive constant)."""
    innermost = loops[-1]
    body = innermost.body.block
    store = accumulating_store(body)
    if store is None:
        return None
    inside = set(body.ops)
    walked = {innermost.body.block.args[0]}
    walking_loads = [op for op in body.ops if isinstance(op, memref.LoadOp)
                     and any(_depends_on(i, walked, inside) for i in op.indices)]
    for loop in reversed(loops[:-1]):
        iv = loop.body.block.args[0]
        trips = trip_count(loop)
        divided = trips is not None and trips % factor == 0
        if remainder and not divided:
            divided = (_constant(loop.step) or 0) > 0
        if (not divided or iv not in tuple(store.indices) or iv is store.indices[-1]
                or any(use.operation not in inside for use in iv.uses)):
            continue
        if any(not any(_depends_on(i, {iv}, inside) for i in load.indices) for load in walking_loads):
            return loop
    return None


@dataclass
class UnrollJamOutputLoop(LoopChainPattern):
    """Unroll and jam one outermost accumulation nest (see the module docstring)."""

    factor: int
    remainder: bool = False

    def rewrite_nest(self, op: scf.ForOp, loops: list[scf.ForOp], rewriter: PatternRewriter) -> None:
        if len(loops) < 2:
            return
        loop = jammed_loop(loops, self.factor, self.remainder)
        if loop is None:
            return
        step = _constant(loop.step)
        new_step = arith.ConstantOp(IntegerAttr(step * self.factor, IndexType()))
        rewriter.insert(new_step, InsertPoint.before(op))
        old_step = loop.step.owner
        ub = loop.ub
        trips = trip_count(loop)
        if trips is None or trips % self.factor:
            ub = self.split_off_remainder(op, loop, step, rewriter)
        loop.operands = (loop.lb, ub, new_step.result)
        rewriter.handle_operation_modification(loop)
        if isinstance(old_step, arith.ConstantOp) and not old_step.result.uses:
            rewriter.erase(old_step)
        body = loops[-1].body.block
        original = list(body.ops)[:-1]
        iv, end = loop.body.block.args[0], body.last_op
        for copy in range(1, self.factor):
            offset = arith.ConstantOp(IntegerAttr(copy * step, IndexType()))
            rewriter.insert(offset, InsertPoint.before(op))
            shifted = arith.AddiOp(iv, offset.result)
            rewriter.insert(shifted, InsertPoint.before(end))
            mapping: dict[SSAValue, SSAValue] = {iv: shifted.result}
            rewriter.insert([inner.clone(mapping) for inner in original], InsertPoint.before(end))
        JAMMED_NESTS.add()

    def split_off_remainder(self, op: scf.ForOp, loop: scf.ForOp, step: int, rewriter: PatternRewriter) -> SSAValue:
        """Put a copy of `loop` after it for the iterations after the last whole group of `factor`,
        from `lb + (ceil(max(ub - lb, 0) / step) floordiv factor) * factor * step` to `ub`, and return
        the jammed loop's new upper bound, `ub - (factor - 1) * step`: a group starts where its last
        iteration is still below `ub` (written so, each index of a group is bounded by `ub` alone)."""
        index = index_constants(rewriter, op)

        lb, ub = loop.lb, loop.ub
        span = [arith.SubiOp(ub, lb)]
        span.append(arith.MaxSIOp(span[-1].result, index(0)))
        if step > 1:
            span.append(arith.AddiOp(span[-1].result, index(step - 1)))
            span.append(arith.FloorDivSIOp(span[-1].result, index(step)))
        groups = arith.FloorDivSIOp(span[-1].result, index(self.factor))
        jammed = arith.MuliOp(groups.result, index(self.factor * step))
        start = arith.AddiOp(lb, jammed.result)
        end = arith.SubiOp(ub, index((self.factor - 1) * step))
        rewriter.insert([*span, groups, jammed, start, end], InsertPoint.before(loop))
        leftover = loop.clone()
        leftover.operands = (start.result, ub, loop.step)
        rewriter.insert(leftover, InsertPoint.after(loop))
        return end.result


@register_xrelay_pass("unroll-jam-loops", statistics=(JAMMED_NESTS, REWRITES))
@dataclass(frozen=True)
class UnrollJamLoops(XRelayPass):
    """Unroll an output loop of every accumulation nest by `factor` and jam the copies into the
    innermost body, where they share a load (loops level; see the module docstring)."""

    factor: int = 4
    remainder: bool = False
    """Also jam a loop whose trip count `factor` does not divide (or is not known), its last
    iterations running unjammed in a copy of the loop after it."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.factor < 1:
            raise PassFailedException(f"unroll-jam-loops: factor must be at least 1, got {self.factor}")
        if self.factor > 1:
            rewrite_module(UnrollJamOutputLoop(self.factor, self.remainder), op, apply_recursively=False)
