"""Helpers over upstream linalg ops that both the lowering (linalg-bufferize) and the runtime's
executors need, so neither imports the other."""

from __future__ import annotations

from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import SSAValue


def captured_values(op: LinalgStructuredOperation) -> list[SSAValue]:
    """Values the body of `op` reads that are defined outside it (e.g. the tensor a gather's
    `tensor.extract` reads), in first-use order; the executor passes them after the operands."""
    block = op.body.block
    inside = set(block.ops)
    seen: list[SSAValue] = []
    for inner in block.ops:
        for value in inner.operands:
            if value.owner is block or value.owner in inside or value in seen:
                continue
            seen.append(value)
    return seen
