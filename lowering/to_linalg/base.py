"""The lowering table: `LOWERINGS` maps nn op classes to functions emitting their linalg form.

A lowering is ``lower(op, emitter) -> list[SSAValue]``: it appends ops to the `Emitter` and returns
the values replacing the op's results (same types). `@lowers(OpClass)` registers one; the families
(one module per family of `dialects/ops/`) share the helpers below. The pass that applies the
table is `lowering/nn_to_linalg.py`.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from xrelay.dialects import nn
from xrelay.dialects.op_base import OpTable
from xrelay.lowering.builders import PARALLEL, Emitter, affine_map, dims

Lowering = Callable[[Operation, Emitter], list[SSAValue]]

LOWERINGS: dict[type[Operation], Lowering] = OpTable("lowering")
"""nn op class -> its lowering (an op without one says why in its `NO_LOWERING`)."""

lowers = LOWERINGS.register
"""`@lowers(nn.XOp)`: register the decorated function as the lowering of the op classes given."""


def shape_of(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def element_of(op: Operation):
    return op.results[0].type.get_element_type()



def broadcast_map(operand_shape: tuple[int, ...], out_shape: tuple[int, ...]):
    """Numpy broadcasting as an indexing map: trailing-aligned, size-1 axes read index 0."""
    rank = len(out_shape)
    loops = dims(rank)
    offset = rank - len(operand_shape)
    results = [0 if size == 1 and out_shape[offset + i] != 1 else loops[offset + i]
               for i, size in enumerate(operand_shape)]
    return affine_map(rank, results)


def map_elementwise(e: Emitter, op: Operation, body: Callable) -> list[SSAValue]:
    out_shape = shape_of(op.results[0])
    rank = len(out_shape)
    maps = [broadcast_map(shape_of(v), out_shape) for v in op.operands] + [affine_map(rank, dims(rank))]
    init = e.empty(out_shape, element_of(op))
    return [e.generic(list(op.operands), init, maps, [PARALLEL] * rank, body)]


@lowers(nn.ConstantOp)
def lower_constant(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.constant → arith.constant with the same dense attribute."""
    value = op.attributes["value"]
    return [e.add(arith.ConstantOp(value, op.results[0].type))]
