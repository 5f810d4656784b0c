"""DeadCodeElimination: remove nn ops (constants included) whose results nothing uses."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation

from xrelay.dialects import nn
from xrelay.transform import XRelayPass, register_xrelay_pass


def _is_pure_nn_op(op: Operation) -> bool:
    return isinstance(op, (nn.NNOp, nn.ConstantOp))


def eliminate_dead_nn_ops(block: Block) -> int:
    """Erase unused nn ops of `block` walking it backwards, so a whole dead chain goes in one
    sweep (a user is always seen before the ops defining its operands). Returns the count."""
    erased = 0
    op = block.last_op
    while op is not None:
        previous = op.prev_op
        if _is_pure_nn_op(op) and all(not result.uses for result in op.results):
            block.erase_op(op)
            erased += 1
        else:
            for region in op.regions:
                for inner in region.blocks:
                    erased += eliminate_dead_nn_ops(inner)
        op = previous
    return erased


@register_xrelay_pass
@dataclass(frozen=True)
class DeadCodeElimination(XRelayPass):
    """Removes every nn op whose results are unused; nn ops have no side effects
    (Relay's DeadCodeElimination, restricted to the nn dialect)."""

    name = "dead-code-elimination"
    tvm_name = "DeadCodeElimination"
    opt_level = 1
    infer_type_after = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        eliminate_dead_nn_ops(op.body.block)
