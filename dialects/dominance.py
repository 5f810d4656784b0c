"""SSA dominance, which xDSL 0.75's verifier does not check: a value must be defined before it is used.

xrelay's IR has single-block regions (functions, loop bodies, linalg bodies), where dominance is program
order: an operand must be an argument of an enclosing block, or the result of an op earlier in the
same block or earlier in an enclosing block than the op holding the use. In a region of several
blocks (a CFG, which xrelay never builds) any value of the region's blocks is accepted: computing
CFG dominance is left to MLIR.
"""

from __future__ import annotations

from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException


class DominanceError(VerifyException):
    """An operand used where its definition does not dominate; `op` is the user."""

    def __init__(self, op: Operation, index: int):
        operand = op.operands[index]
        name = f" (%{operand.name_hint})" if operand.name_hint else ""
        super().__init__(f"operand #{index}{name} does not dominate this use")
        self.op = op


def verify_dominance(op: Operation) -> None:
    """Raise DominanceError for the first use (in program order) of a value not defined before it."""
    _check_op(op, set())


def _check_op(op: Operation, visible: set[SSAValue]) -> None:
    for region in op.regions:
        siblings: list[SSAValue] = []
        if len(region.blocks) > 1:
            for block in region.blocks:
                siblings.extend(block.args)
                for inner in block.ops:
                    siblings.extend(inner.results)
        fresh = [value for value in siblings if value not in visible]
        visible.update(fresh)
        for block in region.blocks:
            _check_block(block, visible)
        visible.difference_update(fresh)


def _check_block(block: Block, visible: set[SSAValue]) -> None:
    added = [arg for arg in block.args if arg not in visible]
    visible.update(added)
    for op in block.ops:
        for index, operand in enumerate(op.operands):
            if operand not in visible:
                raise DominanceError(op, index)
        _check_op(op, visible)
        for result in op.results:
            if result not in visible:
                visible.add(result)
                added.append(result)
    visible.difference_update(added)
