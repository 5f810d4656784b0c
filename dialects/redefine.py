"""An xDSL op with a changed definition that is still an instance of the original class.

Re-deriving an `@irdl_op_definition` class fails (its fields are already accessors), but xrelay needs
ops whose *verification* differs from xDSL 0.75's (a looser trait or type constraint, as upstream MLIR
has) while every `isinstance(op, xdsl_op)` in passes, xDSL's own transforms and the executors keeps
matching. `redefined` makes a plain subclass carrying its own copy of the IRDL definition: parsing,
printing and accessors are the original's, verification uses the copy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from xdsl.irdl import IRDLOperation, OpDef


def redefined(base: type[IRDLOperation], doc: str, *, like: type[IRDLOperation] | None = None,
              traits=None, verify: Callable[[IRDLOperation], None] | None = None) -> type[IRDLOperation]:
    """A subclass of `base` verified by `base`'s definition with the operands and results of `like`
    (an IRDL op declaring the looser constraints) and/or `traits` in place of its own, then by
    `verify` (an extra check of the op)."""
    changes = {}
    if like is not None:
        looser = like.get_irdl_definition()
        changes |= {"operands": looser.operands, "results": looser.results}
    if traits is not None:
        changes["traits"] = traits
    definition: OpDef = dataclasses.replace(base.get_irdl_definition(), **changes)

    def verify_(self) -> None:
        definition.verify(self)
        if verify is not None:
            verify(self)

    namespace = {
        "__doc__": doc, "traits": definition.traits, "verify_": verify_,
        "get_irdl_definition": classmethod(lambda cls: definition),
    }
    return type(base.__name__, (base,), namespace)
