"""Which lowering level a module (or function) is at, read from the ops it holds.

The levels, in lowering order: `nn` (nn ops), `linalg` (linalg on tensors), `memref` (linalg on
memrefs, after linalg-bufferize) and `loops` (scf loops over memrefs, after linalg-to-loops).
`lowering.LEVEL_PASSES` says which passes bring an nn module to each; `runtime.run` and `xrelay-run`
ask this module where a module is.
"""

from __future__ import annotations

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation

LOWERING_LEVELS = ("nn", "linalg", "memref", "loops")
"""Every level, in lowering order."""

_NN_LEVEL_DIALECTS = frozenset({"nn", "func", "builtin"})


def module_level(op: Operation) -> str:
    """The level of `op` (a module or a function): `nn` if any nn op is left (or nothing but func and
    builtin ops), then linalg on memrefs, linalg on tensors, and loops; a tensor-level function without
    linalg (only reshapes) is at `linalg`."""
    dialects: set[str] = set()
    linalg_on_memrefs = linalg_on_tensors = False
    for inner in op.walk():
        dialect = inner.name.split(".", 1)[0]
        dialects.add(dialect)
        if dialect == "linalg":
            on_memrefs = any(isinstance(operand.type, MemRefType) for operand in inner.operands)
            linalg_on_memrefs |= on_memrefs
            linalg_on_tensors |= not on_memrefs
    if "nn" in dialects or dialects <= _NN_LEVEL_DIALECTS:
        return "nn"
    if linalg_on_memrefs:
        return "memref"
    if linalg_on_tensors:
        return "linalg"
    return "loops" if dialects & {"memref", "scf"} else "linalg"
