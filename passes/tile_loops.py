"""TileLoops: tile the output loops of an accumulation nest (a matmul's, a convolution's) for cache.

At the loops level a matmul or convolution is one perfect `scf.for` nest whose innermost body
accumulates into one element of its output, `out[i, j] = f(out[i, j], a[...], b[...])`: the loops
that index `out` are its output loops, the others its reduction loops (last, innermost, as
`linalg-to-loops` writes them). The pass splits the two innermost output loops into tiles of
`tile` iterations (the innermost into tiles of `inner_tile` when that is set) and moves the
reduction loops between the tile loops and the points of a tile:

    for i, j: for k: out[i, j] += ...   ->   for i0, j0 (step tile): for k: for i in tile, j in tile

The points of a tile (at most tile x tile output elements) stay in cache while the reduction runs
over them, and the innermost loop walks the output's unit-stride axis instead of the reduction's.

Legal because each output element is still updated by the same iterations in the same order: the
reduction loops keep their relative order, and no other buffer is written. The pass checks that:
one `memref.store`, at indices that are the output loops' induction variables (or values from outside
the nest); every load of that buffer is through the same memref at the same indices; no other load
reads the same buffer through another view; constant bounds starting at 0 with step 1; no values
carried by the loops. Other nests are left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from xrelay.instrument.statistics import Statistic
from xrelay.pass_base import REWRITES, XRelayPass, register_xrelay_pass, rewrite_module

TILED_NESTS = Statistic("num-tiled-nests", "Number of loop nests whose output loops were tiled")

_VIEWS = (memref.SubviewOp, memref.CollapseShapeOp, memref.ExpandShapeOp, memref.CastOp)


def _constant(value: SSAValue) -> int | None:
    op = value.owner
    return op.value.value.data if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr) else None


def _buffer(ref: SSAValue) -> SSAValue:
    """The allocation, argument or global a memref value is a view of."""
    while isinstance(ref.owner, _VIEWS):
        ref = ref.owner.operands[0]
    return ref


def perfect_nest(loop: scf.ForOp) -> list[scf.ForOp] | None:
    """The loops of the perfect nest `loop` heads (each body holds only the next loop), or None when a
    loop carries values or has bounds other than constants from 0 with step 1."""
    loops = [loop]
    while True:
        current = loops[-1]
        if current.iter_args or _constant(current.lb) != 0 or _constant(current.step) != 1 or _constant(current.ub) is None:
            return None
        body = list(current.body.block.ops)
        if len(body) == 2 and isinstance(body[0], scf.ForOp):
            loops.append(body[0])
        else:
            return loops


def accumulating_store(body: Block) -> memref.StoreOp | None:
    """The one store of an innermost loop body that accumulates into its output (the module
    docstring): no regions or allocations in the body, and every load of the stored buffer through
    the same memref at the same indices; else None."""
    ops = list(body.ops)
    stores = [op for op in ops if isinstance(op, memref.StoreOp)]
    if len(stores) != 1 or any(op.regions or isinstance(op, memref.AllocOp | memref.AllocaOp | memref.CopyOp
                                                        | memref.DeallocOp) for op in ops):
        return None
    (store,) = stores
    written = _buffer(store.memref)
    for op in ops:
        if isinstance(op, memref.LoadOp) and _buffer(op.memref) is written:
            if op.memref is not store.memref or tuple(op.indices) != tuple(store.indices):
                return None
    return store


def output_loops(loops: list[scf.ForOp]) -> list[int] | None:
    """Positions in `loops` of the loops indexing the nest's one store, when the nest accumulates
    into its output as the module docstring says; else None."""
    store = accumulating_store(loops[-1].body.block)
    if store is None:
        return None
    ivs = [loop.body.block.args[0] for loop in loops]
    inside = set(loops[-1].body.block.ops)
    if any(index.owner in inside for index in store.indices):  # computed in the body: not an output loop's own
        return None
    output = sorted({ivs.index(index) for index in store.indices if index in ivs})
    return output if output and len(output) < len(loops) else None


def index_constants(rewriter: PatternRewriter, before: Operation) -> Callable[[int], SSAValue]:
    """`index(value)`: an `arith.constant value : index` inserted before `before`, one per value."""
    constants: dict[int, SSAValue] = {}

    def index(value: int) -> SSAValue:
        if value not in constants:
            constants[value] = arith.ConstantOp(IntegerAttr(value, IndexType())).result
            rewriter.insert(constants[value].owner, InsertPoint.before(before))
        return constants[value]

    return index


class OutermostNestPattern(RewritePattern):
    """A rewrite of each outermost `scf.for` nest: `rewrite_nest` with the loops `nest` finds in it
    (by default its perfect nest), the loop passes' common shape."""

    def nest(self, op: scf.ForOp) -> list[scf.ForOp] | None:
        return perfect_nest(op)

    def rewrite_nest(self, op: scf.ForOp, loops: list[scf.ForOp], rewriter: PatternRewriter) -> None:
        raise NotImplementedError

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ForOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op.parent_op(), scf.ForOp) and (loops := self.nest(op)) is not None:
            self.rewrite_nest(op, loops, rewriter)


@dataclass
class TileOutputLoops(OutermostNestPattern):
    """Tile one outermost accumulation nest (see the module docstring)."""

    tile: int
    inner_tile: int = 0

    def size(self, k: int, tiled: list[int]) -> int:
        """The tile of loop `k` (one of the `tiled` output loops)."""
        return self.inner_tile if self.inner_tile and k == tiled[-1] else self.tile

    def rewrite_nest(self, op: scf.ForOp, loops: list[scf.ForOp], rewriter: PatternRewriter) -> None:
        output = output_loops(loops)
        if output is None:
            return
        tiled = output[-2:]
        trips = [_constant(loop.ub) for loop in loops]
        # Loop headers outermost first: what each iterates over, and which old loop's iterations.
        plan = [("whole", k) for k in output if k not in tiled]
        plan += [("tiles", k) for k in tiled if trips[k] > self.size(k, tiled)]
        plan += [("whole", k) for k in range(len(loops)) if k not in output]
        plan += [("points" if trips[k] > self.size(k, tiled) else "whole", k) for k in tiled]
        if [k for _, k in plan] == list(range(len(loops))):
            return  # no tile to make and the order is already this: nothing would change
        index = index_constants(rewriter, op)

        new_ivs: dict[int, SSAValue] = {}
        tile_ivs: dict[int, SSAValue] = {}
        blocks: list[Block] = []
        for kind, k in plan:
            block = Block(arg_types=[IndexType()])
            blocks.append(block)
            if kind == "tiles":
                tile_ivs[k] = block.args[0]
            else:
                new_ivs[k] = block.args[0]
        innermost = blocks[-1]
        old_body = loops[-1].body.block
        for k, loop in enumerate(loops[:-1]):
            rewriter.replace_all_uses_with(loop.body.block.args[0], new_ivs[k])
        rewriter.inline_block(old_body, InsertPoint.at_start(innermost), [new_ivs[len(loops) - 1]])
        inner: Operation | None = None
        for (kind, k), block in reversed(list(zip(plan, blocks))):
            if inner is not None:
                rewriter.insert([inner, scf.YieldOp()], InsertPoint.at_end(block))
            lb, ub, loop_step = index(0), index(trips[k]), index(1)
            if kind == "tiles":
                loop_step = index(self.size(k, tiled))
            elif kind == "points":  # from the tile's start to the next tile's, or to the end
                lb = tile_ivs[k]
                ub_ops: list[Operation] = [arith.AddiOp(lb, index(self.size(k, tiled)))]
                if trips[k] % self.size(k, tiled):
                    ub_ops.append(arith.MinSIOp(ub_ops[0].results[0], index(trips[k])))
                rewriter.insert(ub_ops, InsertPoint.at_start(blocks[plan.index(("tiles", k))]))
                ub = ub_ops[-1].results[0]
            inner = scf.ForOp(lb, ub, loop_step, [], block)
        old_bounds = {value.owner for loop in loops for value in (loop.lb, loop.ub, loop.step)}
        rewriter.replace(op, inner)
        for bound in old_bounds:  # the old nest's constants, unless something else uses them
            if isinstance(bound, arith.ConstantOp) and not bound.result.uses:
                rewriter.erase(bound)
        TILED_NESTS.add()


@register_xrelay_pass("tile-loops", statistics=(TILED_NESTS, REWRITES))
@dataclass(frozen=True)
class TileLoops(XRelayPass):
    """Tile the two innermost output loops of every accumulation nest (matmul, convolution, pooling)
    by `tile` (the innermost by `inner_tile` instead when that is given) and run the reduction loops
    between the tiles and their points (loops level)."""

    tile: int = 32
    inner_tile: int = 0
    """0: `tile`. A tile at least as long as its loop leaves that loop whole, below the reductions."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.tile < 1 or self.inner_tile < 0:
            raise PassFailedException(f"tile-loops: tile must be at least 1 and inner_tile at least 0, got "
                                      f"{self.tile} and {self.inner_tile}")
        rewrite_module(TileOutputLoops(self.tile, self.inner_tile), op, apply_recursively=False)
