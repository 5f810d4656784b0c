"""xrelay's `bufferization` dialect: xDSL 0.75's, with `to_tensor`/`to_buffer` verified as upstream does.

Upstream's bufferization without `bufferize-function-boundaries` keeps tensor arguments and results and
converts at the edges, `bufferization.to_buffer %arg0 : tensor<2x5xf32> to memref<2x5xf32, strided<[?, ?],
offset: ?>>`. xDSL 0.75 requires the memref to be the tensor's type with the identity layout, so that
text fails to verify; upstream only requires the same shape and element type. `BUFFERIZATION` replaces
xDSL's dialect in `make_context`.
"""

from __future__ import annotations

from xdsl.dialects import bufferization
from xdsl.dialects.builtin import MemRefType, TensorType
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def
from xdsl.utils.exceptions import VerifyException

from xrelay.dialects.redefine import redefined


@irdl_op_definition
class _MemrefToTensor(IRDLOperation):  # the operand and result constraints of upstream's to_tensor
    name = "bufferization.to_tensor"
    memref = operand_def(MemRefType)
    tensor = result_def(TensorType)


@irdl_op_definition
class _TensorToMemref(IRDLOperation):  # the operand and result constraints of upstream's to_buffer
    name = "bufferization.to_buffer"
    tensor = operand_def(TensorType)
    memref = result_def(MemRefType)


def _same_shape_and_element(op) -> None:
    tensor, memref = op.tensor.type, op.memref.type
    if tensor.get_shape() != memref.get_shape() or tensor.get_element_type() != memref.get_element_type():
        raise VerifyException(f"{op.name}: {tensor} and {memref} differ in shape or element type")


ToTensorOp = redefined(bufferization.ToTensorOp, """`bufferization.to_tensor` of any memref layout (upstream's
rule: the tensor has the memref's shape and element type).""", like=_MemrefToTensor, verify=_same_shape_and_element)

ToBufferOp = redefined(bufferization.ToBufferOp, """`bufferization.to_buffer` to any memref layout (upstream's
rule: the memref has the tensor's shape and element type).""", like=_TensorToMemref, verify=_same_shape_and_element)

REPLACED_OPS = (ToTensorOp, ToBufferOp)

BUFFERIZATION = Dialect(
    "bufferization",
    [op for op in bufferization.Bufferization.operations if op.name not in {r.name for r in REPLACED_OPS}]
    + list(REPLACED_OPS),
    list(bufferization.Bufferization.attributes),
)
"""xDSL's bufferization dialect with the ops above in place of its own."""
