"""Lowerings of the shape and data-movement ops (dialects/ops/shape.py): `linalg.transpose` and
`tensor.collapse_shape` / `tensor.expand_shape`."""

from __future__ import annotations

from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Operation, SSAValue

from xrelay.dialects import nn
from xrelay.lowering.builders import Emitter
from xrelay.lowering.to_linalg.base import check_axis, element_of, lowers, shape_of
from xrelay.runtime.layout import layout_permutation


def _transpose(e: Emitter, op: Operation, permutation: tuple[int, ...]) -> list[SSAValue]:
    (data,) = op.operands
    if permutation == tuple(range(len(permutation))):
        return [data]
    out_shape = shape_of(op.results[0])
    init = e.empty(out_shape, element_of(op))
    return [e.add(linalg.TransposeOp(data, init, DenseArrayBase.from_list(i64, permutation), op.results[0].type))]


@lowers(nn.TransposeOp)
def lower_transpose(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.transpose → linalg.transpose (axes None reverses)."""
    rank = len(shape_of(op.operands[0]))
    axes = op.attrs()["axes"]
    perm = tuple(reversed(range(rank))) if axes is None else tuple(check_axis(int(a), rank, "nn.transpose") for a in axes)
    return _transpose(e, op, perm)


@lowers(nn.LayoutTransformOp)
def lower_layout_transform(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.layout_transform → linalg.transpose with the layouts' permutation."""
    attrs = op.attrs()
    return _transpose(e, op, layout_permutation(attrs["src_layout"], attrs["dst_layout"]))


@lowers(nn.ReshapeOp, nn.BatchFlattenOp, nn.ExpandDimsOp)
def lower_reshape_like(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.reshape / batch_flatten / expand_dims → tensor.collapse_shape + tensor.expand_shape."""
    return [e.reshape(op.operands[0], shape_of(op.results[0]))]
