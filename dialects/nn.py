"""The `nn` dialect: Relay's neural-network operators on builtin ranked tensors.

The ops live one family per module in `dialects/ops/` (each class beside its shape rule and
registered with `@nn_op`); the shared machinery (`NNOp`, attribute kinds, `LayoutRule`) is in
`dialects/op_base.py`. This module gathers them: `nn.NN` (the dialect), `nn.OPS` (name -> class),
`nn.make` and every op class (`nn.Conv2DOp`, ...). See CONTRIBUTING.md to add an op.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Dialect, Operation, SSAValue

from xrelay.dialects.constant import ConstantOp
from xrelay.dialects.infer import ShapeError
from xrelay.dialects.op_base import REGISTERED_OPS, LayoutRule, NNOp, nn_op
from xrelay.dialects.ops.elementwise import *  # noqa: F403 (each family's __all__ lists its op classes)
from xrelay.dialects.ops.linear import *  # noqa: F403
from xrelay.dialects.ops.norm import *  # noqa: F403
from xrelay.dialects.ops.reduce import *  # noqa: F403
from xrelay.dialects.ops.shape import *  # noqa: F403
from xrelay.dialects.ops.window import *  # noqa: F403
from xrelay.dialects.ops.upsample import *  # noqa: F403

OPS: dict[str, type[Operation]] = {op.name: op for op in REGISTERED_OPS}
"""Op name ("nn.conv2d") -> op class, for every registered nn op."""

NN = Dialect("nn", list(REGISTERED_OPS), [])
"""The nn dialect."""


def make(op_name: str, operands: Sequence[SSAValue | Operation], **attrs: object) -> Operation:
    """Build the nn op called `op_name` (e.g. "nn.conv2d"), inferring its result types."""
    try:
        cls = OPS[op_name]
    except KeyError:
        raise KeyError(f"unknown nn op '{op_name}'") from None
    if cls is ConstantOp:
        return ConstantOp(attrs["value"])
    return cls(*operands, **attrs)


__all__ = ["NN", "OPS", "ConstantOp", "LayoutRule", "NNOp", "ShapeError", "make", "nn_op"]
__all__ += [op.__name__ for op in REGISTERED_OPS if op is not ConstantOp]
