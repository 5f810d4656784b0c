"""`linalg-to-loops`: memref-level linalg → perfectly nested `scf.for` loops.

`memref.copy` and `linalg.broadcast` first become the `linalg.generic` they stand for, then xDSL's `convert-linalg-to-loops`
(memref operands only) rewrites every structured op — named ones included, from their
indexing maps and bodies — into loops of `memref.load`, the body's scalar ops and
`memref.store`; map results that are not a plain loop index become `affine.apply`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import AffineMapAttr, MemRefType, ModuleOp, TensorType
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import Block, Operation, Region
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.convert_linalg_to_loops import ConvertLinalgToLoopsPass
from xdsl.utils.exceptions import PassFailedException

from xrelay.pass_base import REWRITES, XRelayPass, register_xrelay_pass, rewrite_module


class CopyToGeneric(RewritePattern):
    """`memref.copy %a, %b` → an identity `linalg.generic` from %a into %b."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.CopyOp, rewriter: PatternRewriter) -> None:
        source_type = op.source.type
        assert isinstance(source_type, MemRefType)
        rank = len(source_type.get_shape())
        element_type = source_type.get_element_type()
        block = Block(arg_types=[element_type, element_type])
        block.add_op(linalg.YieldOp(block.args[0]))
        identity = AffineMapAttr(AffineMap.identity(rank))
        rewriter.replace(
            op,
            linalg.GenericOp(
                [op.source], [op.destination], Region(block), [identity, identity],
                [linalg.IteratorTypeAttr.parallel()] * rank,
            ),
        )


class BroadcastToGeneric(RewritePattern):
    """`linalg.broadcast` (not a structured op in xDSL 0.75, so its loop lowering skips it) → the
    `linalg.generic` it stands for: the input indexed by the init's dimensions not in `dimensions`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.BroadcastOp, rewriter: PatternRewriter) -> None:
        init_type = op.init.type
        if not isinstance(init_type, MemRefType):
            return
        rank = len(init_type.get_shape())
        added = set(op.dimensions.get_values())
        input_map = AffineMap(rank, 0, tuple(AffineExpr.dimension(d) for d in range(rank) if d not in added))
        element_type = init_type.get_element_type()
        block = Block(arg_types=[element_type, element_type])
        block.add_op(linalg.YieldOp(block.args[0]))
        rewriter.replace(
            op,
            linalg.GenericOp(
                [op.input], [op.init], Region(block),
                [AffineMapAttr(input_map), AffineMapAttr(AffineMap.identity(rank))],
                [linalg.IteratorTypeAttr.parallel()] * rank,
            ),
        )


@register_xrelay_pass("linalg-to-loops", statistics=(REWRITES,))
@dataclass(frozen=True)
class LinalgToLoops(XRelayPass):
    """Lower memref-level linalg ops and `memref.copy` to `scf.for` loop nests."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.walk():
            # Either would be left as it is: an nn- or tensor-level module would come out unchanged.
            if inner.name.startswith("nn."):
                raise _at(PassFailedException(f"linalg-to-loops: {inner.name} is an nn op; lower the module "
                                              "first (convert-nn-to-linalg,linalg-bufferize)"), inner)
            if isinstance(inner, LinalgStructuredOperation) and any(
                isinstance(t, TensorType) for t in inner.operand_types
            ):
                raise _at(PassFailedException(
                    f"linalg-to-loops: {inner.name} works on tensors; bufferize first (linalg-bufferize)"
                ), inner)
        rewrite_module(GreedyRewritePatternApplier([CopyToGeneric(), BroadcastToGeneric()]), op,
                       apply_recursively=False)
        ConvertLinalgToLoopsPass().apply(ctx, op)


def _at(error: Exception, op: Operation) -> Exception:
    """`error` naming `op` as the op the pass failed on (tools report its location)."""
    error.failing_op = op  # type: ignore[attr-defined]
    return error
