"""`canonicalize-inits`: every structured op's init in the form xrelay's own lowering writes.

Upstream's linalg (torch-mlir's pipelines) starts a convolution from its bias and shares one
`tensor.empty` among several ops; xrelay's lowering starts each reduction from a fill of its identity,
adds the bias after it and gives every op an empty of its own. The kernel passes and the executor know
the second form (a zero-filled contraction overwrites its output, an epilogue joins its kernel, a
fresh single-use out is written in place), so this pass, run first in `build`'s kernels phase, writes
the first as the second:

- a reduction whose init is a `linalg.broadcast` only it reads, and whose body yields
  `combine(acc, x)` with `x` not read from `acc` (`combine`: `IDENTITIES`), starts from a fill of
  `combine`'s identity, and an elementwise `combine(result, source)` reading the broadcast's source
  follows it:

      %b = linalg.broadcast ins(%bias) outs(%e) dimensions = [0, 2, 3]
      %c = linalg.conv_2d_nchw_fchw ins(%x, %w) outs(%b)
    ->
      %z = linalg.fill ins(%identity) outs(%e0)
      %r = linalg.conv_2d_nchw_fchw ins(%x, %w) outs(%z)
      %c = linalg.generic {(d0, d1, d2, d3) -> (d0, d1, d2, d3), (d0, d1, d2, d3) -> (d1), ...}
             ins(%r, %bias) outs(%e1) { addf }

  Both compute `combine(init, reduction)`, the reduction being associative and commutative, so
  the result is the same whatever the op (up to float rounding: the bias is added last);
- a `tensor.empty` several ops use becomes one empty per structured op's init (an empty's contents
  are undefined, so no op sees another's writes; a shared init would be copied at every run).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import AffineMapAttr, AnyFloat, FloatAttr, IntegerAttr, ModuleOp, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation as Structured
from xdsl.ir import Block, Operation, Region
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from xrelay.instrument.statistics import Statistic
from xrelay.pass_base import REWRITES, XRelayPass, register_xrelay_pass, rewrite_module
from xrelay.runtime.kernels.body_program import depends_on

BROADCAST_INITS = Statistic("num-broadcast-inits", "Number of broadcast inits made a fill and an epilogue")
SHARED_EMPTIES = Statistic("num-shared-empties", "Number of uses of a shared tensor.empty given their own")

IDENTITIES = {
    arith.AddfOp: -0.0,  # (-0.0 + x is x for every x, +0.0 included; 0.0 + -0.0 is +0.0)
    arith.MaximumfOp: float("-inf"), arith.MinimumfOp: float("inf"),
    arith.MaxnumfOp: float("-inf"), arith.MinnumfOp: float("inf"),
    arith.AddiOp: 0,
}
"""Combining ops a reduction's init may be split off from, with the value the reduction then starts from."""


def accumulator_combine(op: Structured) -> type[Operation] | None:
    """The `IDENTITIES` op `op`'s one output is folded with, when `op` has a reduction loop and its body
    yields `combine(acc, x)` with `x` not read from `acc`; else None."""
    if len(op.outputs) != 1 or len(op.results) != 1:
        return None
    if not any(str(it.data) == "reduction" for it in op.get_iterator_types()):
        return None
    block = op.body.block
    acc, value = block.args[len(op.inputs)], block.last_op.operands[0]
    combine = value.owner
    if type(combine) not in IDENTITIES or acc not in combine.operands:
        return None
    lhs, rhs = combine.operands
    x = rhs if lhs is acc else lhs
    if x is acc or depends_on(x, {acc}):
        return None
    return type(combine)


class BroadcastInitAsEpilogue(RewritePattern):
    """A reduction from a broadcast init: from its identity, then `combine` with the broadcast's source."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, Structured) or len(op.outputs) != 1:
            return
        broadcast = op.outputs[0].owner
        if not isinstance(broadcast, linalg.BroadcastOp) or not op.outputs[0].has_one_use():
            return
        empty = broadcast.init.owner
        out_type = op.results[0].type if op.results else None
        if not isinstance(empty, tensor.EmptyOp) or not isinstance(out_type, TensorType):
            return
        combine = accumulator_combine(op)
        if combine is None:
            return
        element = out_type.get_element_type()
        identity = IDENTITIES[combine]
        if isinstance(identity, float) != isinstance(element, AnyFloat):
            return
        start = arith.ConstantOp(FloatAttr(identity, element) if isinstance(identity, float)
                                 else IntegerAttr(identity, element))
        zero_empty, bias_empty = empty.clone(), empty.clone()
        fill = linalg.FillOp([start.result], [zero_empty.results[0]], [out_type])
        rewriter.insert([start, zero_empty, fill], InsertPoint.before(op))
        op.operands[len(op.inputs)] = fill.results[0]
        rewriter.handle_operation_modification(op)

        rank = out_type.get_num_dims()
        identity_map = AffineMap.identity(rank)
        added = set(broadcast.dimensions.get_values())
        source_map = AffineMap(rank, 0, tuple(AffineExpr.dimension(d) for d in range(rank) if d not in added))
        block = Block(arg_types=[element, broadcast.input.type.get_element_type(), element])
        combined = combine(block.args[0], block.args[1])
        block.add_ops([combined, linalg.YieldOp(combined.results[0])])
        epilogue = linalg.GenericOp(
            [op.results[0], broadcast.input], [bias_empty.results[0]], Region(block),
            [AffineMapAttr(m) for m in (identity_map, source_map, identity_map)],
            [linalg.IteratorTypeAttr.parallel()] * rank, [out_type])
        rewriter.insert([bias_empty, epilogue], InsertPoint.after(op))
        rewriter.replace_uses_with_if(op.results[0], epilogue.results[0], lambda use: use.operation is not epilogue)
        rewriter.erase(broadcast)
        if not empty.results[0].uses:
            rewriter.erase(empty)
        BROADCAST_INITS.add()


class EmptyPerUse(RewritePattern):
    """A `tensor.empty` several ops use: each structured op's init among the uses gets a copy of its own
    (one such init keeps the original when nothing else uses it: a pooling's window shape operand
    keeps it)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, tensor.EmptyOp):
            return
        uses = list(op.results[0].uses)
        inits = [use for use in uses if isinstance(use.operation, Structured)
                 and use.index >= len(use.operation.inputs)]
        if len(uses) < 2 or not inits:
            return
        if len(inits) == len(uses):
            inits = inits[1:]
        for use in inits:
            copy = op.clone()
            rewriter.insert(copy, InsertPoint.before(use.operation))
            use.operation.operands[use.index] = copy.results[0]
            rewriter.handle_operation_modification(use.operation)
            SHARED_EMPTIES.add()


@register_xrelay_pass("canonicalize-inits", opt_level=0, statistics=(BROADCAST_INITS, SHARED_EMPTIES, REWRITES))
@dataclass(frozen=True)
class CanonicalizeInits(XRelayPass):
    """Make broadcast inits of reductions a fill and an epilogue, and shared empties one per use."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_module(GreedyRewritePatternApplier([BroadcastInitAsEpilogue(), EmptyPerUse()]), op,
                       apply_recursively=False)
