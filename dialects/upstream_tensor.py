"""`tensor.concat` (torch-mlir writes one for every ONNX Concat) as the ops xrelay already runs and
bufferizes: a `tensor.empty` of the result's type and one `tensor.insert_slice` per input, each into
the previous one's result at the input's offset along `dim` (upstream's `decompose-concat`).

`concat_as_inserts(op)` builds those ops without inserting them anywhere: the linalg executor compiles
them in the concat's place (so its memory plan may compute each input directly in its slice) and
`linalg-bufferize` bufferizes them (a buffer and one `memref.copy` into a subview per input).
"""

from __future__ import annotations

from xdsl.dialects import tensor
from xdsl.ir import Operation, SSAValue


def concat_as_inserts(op: tensor.ConcatOp) -> tuple[list[Operation], SSAValue]:
    """The empty tensor and insert_slice chain computing `op`, and the value standing for its result."""
    dim = op.dim.value.data
    shape = op.result.type.get_shape()
    empty = tensor.EmptyOp([], op.result.type)
    ops: list[Operation] = [empty]
    dest, offset = empty.tensor, 0
    for source in op.inputs:
        sizes = list(source.type.get_shape())
        offsets = [offset if axis == dim else 0 for axis in range(len(shape))]
        insert = tensor.InsertSliceOp.from_static_parameters(source, dest, offsets, sizes)
        ops.append(insert)
        dest, offset = insert.result, offset + sizes[dim]
    return ops, dest
