"""`linalg-bufferize`: linalg on tensors → linalg on memrefs, destination-passing style.

Per `func.func`, in program order:
- tensor arguments and results become memrefs of the same shape;
- `tensor.empty` becomes an explicit `memref.alloc`;
- `arith.constant dense<...> : tensor` becomes a private constant `memref.global` read by
  `memref.get_global`;
- a linalg op writes its results into the buffers of its `outs`: in place when that `outs`
  tensor is a fresh buffer (an allocation or an earlier linalg result) used only here,
  otherwise into a new `memref.alloc` that `memref.copy` first fills with the `outs` value; a
  tensor its body reads (a gather's `tensor.extract`) is read from its buffer (`memref.load`);
- `tensor.extract_slice` becomes a `memref.subview` copied into a new buffer (so the result keeps
  a plain memref type); `tensor.insert_slice` copies its source into a `memref.subview` of the
  destination's buffer (written in place under the same rule as linalg `outs`);
- `tensor.concat` becomes a new buffer and one such copy per input (`dialects/upstream_tensor.py`);
- `linalg.broadcast` writes into its init's buffer (under the same rule as linalg `outs`);
- `tensor.pad` becomes a new buffer filled with the pad value and a `memref.copy` of the source
  into its interior `memref.subview`;
- `tensor.collapse_shape` / `tensor.expand_shape` become the memref views of the same name;
- `func.return` returns the buffers (a copy when the buffer is a global constant);
- every allocation that is not returned is freed (`memref.dealloc`) after its last use.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, tensor
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FunctionType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from xrelay.dialects.structured import captured_values
from xrelay.dialects.upstream_tensor import concat_as_inserts
from xrelay.lowering.builders import check_static_indices
from xrelay.pass_base import XRelayPass, register_xrelay_pass

Structured = LinalgStructuredOperation


def memref_type(value_type: Attribute) -> Attribute:
    """The memref type of a static tensor type (other types unchanged)."""
    if isinstance(value_type, TensorType):
        return MemRefType(value_type.get_element_type(), value_type.get_shape())
    return value_type


class BufferizationError(Exception):
    """An op `linalg-bufferize` does not know how to bufferize (the message names it); `failing_op`
    is that op, so that tools report its source location."""

    def __init__(self, message: str, op: Operation):
        super().__init__(message)
        self.failing_op = op


class FunctionBufferizer:
    """Rebuilds one function body over memrefs (see the module docstring)."""

    def __init__(self, module: ModuleOp, function: func.FuncOp, global_names: set[str]):
        self.module = module
        self.function = function
        self.global_names = global_names
        self.buffers: dict[SSAValue, SSAValue] = {}
        self.fresh: set[SSAValue] = set()  # buffers this function allocated and may write
        self.new_ops: list[Operation] = []

    def emit(self, op: Operation) -> Operation:
        check_static_indices(op)  # the static indices of unverified tensor ops are copied into memref ones
        self.new_ops.append(op)
        return op

    def buffer(self, value: SSAValue) -> SSAValue:
        return self.buffers.get(value, value)

    def alloc(self, value_type: Attribute) -> SSAValue:
        op = self.emit(memref.AllocOp([], [], memref_type(value_type)))
        self.fresh.add(op.memref)
        return op.memref

    def run(self) -> None:
        old_block = self.function.body.block
        arg_types = [memref_type(a.type) for a in old_block.args]
        block = Block(arg_types=arg_types)
        for old, new in zip(old_block.args, block.args, strict=True):
            new.name_hint = old.name_hint
            self.buffers[old] = new
        for op in list(old_block.ops):
            self.bufferize(op)
        block.add_ops(self.new_ops)
        insert_deallocs(block)
        result_types = [memref_type(t) for t in self.function.function_type.outputs]
        self.function.function_type = FunctionType.from_lists(arg_types, result_types)
        # Swap in the new body; the old block's ops are dropped together with it.
        self.function.body.insert_block_before(block, old_block)
        for op in reversed(list(old_block.ops)):
            op.drop_all_references()
        self.function.body.detach_block(old_block)
        old_block.erase(safe_erase=False)

    def global_constant(self, value: DenseIntOrFPElementsAttr, value_type: Attribute) -> SSAValue:
        index = len(self.global_names)
        while f"__constant_{index}" in self.global_names:
            index += 1
        name = f"__constant_{index}"
        self.global_names.add(name)
        mtype = memref_type(value_type)
        glob = memref.GlobalOp.get(StringAttr(name), mtype, value, constant=UnitAttr())
        Rewriter.insert_op(glob, InsertPoint.before(self.function))
        return self.emit(memref.GetGlobalOp(name, mtype)).memref

    def bufferize(self, op: Operation) -> None:
        if not any(isinstance(t, TensorType) for t in (*op.operand_types, *op.result_types)):
            # Scalar ops and already-bufferized ones move over unchanged (the pass is idempotent).
            new = op.clone(value_mapper=dict(self.buffers))
            self.emit(new)
            for old, res in zip(op.results, new.results, strict=True):
                self.buffers[old] = res
        elif isinstance(op, arith.ConstantOp) and isinstance(op.result.type, TensorType):
            if not isinstance(op.value, DenseIntOrFPElementsAttr):
                raise BufferizationError(f"linalg-bufferize: unsupported tensor constant {op.value}", op)
            self.buffers[op.result] = self.global_constant(op.value, op.result.type)
        elif isinstance(op, tensor.EmptyOp):
            if op.dynamic_sizes:
                raise BufferizationError("linalg-bufferize: tensor.empty with dynamic sizes is not supported", op)
            self.buffers[op.tensor] = self.alloc(op.tensor.type)
        elif isinstance(op, Structured):
            self.bufferize_structured(op)
        elif isinstance(op, linalg.BroadcastOp):
            out = self.writable(op.init)
            self.emit(linalg.BroadcastOp(self.buffer(op.input), out, op.dimensions))
            self.buffers[op.result[0]] = out
        elif isinstance(op, tensor.PadOp):
            self.bufferize_pad(op)
        elif isinstance(op, tensor.CollapseShapeOp):
            view = memref.CollapseShapeOp.build(
                operands=[self.buffer(op.src)], result_types=[memref_type(op.result.type)],
                properties={"reassociation": op.reassociation})
            self.buffers[op.result] = self.emit(view).result
        elif isinstance(op, tensor.ExpandShapeOp):
            view = memref.ExpandShapeOp.build(
                operands=[self.buffer(op.src), []], result_types=[memref_type(op.result.type)],
                properties={"reassociation": op.reassociation, "static_output_shape": op.static_output_shape})
            self.buffers[op.result] = self.emit(view).result
        elif isinstance(op, tensor.ExtractSliceOp):
            # A contiguous copy, so the result keeps the tensor's plain memref type.
            view = self.subview(self.buffer(op.source), op)
            self.buffers[op.result] = self.alloc(op.result.type)
            self.emit(memref.CopyOp(view, self.buffers[op.result]))
        elif isinstance(op, tensor.ConcatOp):  # a buffer and a copy into its subview per input
            parts, result = concat_as_inserts(op)
            for part in parts:
                self.bufferize(part)
            self.buffers[op.result] = self.buffers[result]
        elif isinstance(op, tensor.InsertSliceOp):
            dest = self.writable(op.dest)
            self.emit(memref.CopyOp(self.buffer(op.source), self.subview(dest, op)))
            self.buffers[op.result] = dest
        elif isinstance(op, func.ReturnOp):
            values = []
            for v in op.operands:
                buf = self.buffer(v)
                if isinstance(buf.owner, memref.GetGlobalOp):
                    copy = self.alloc(v.type)
                    self.emit(memref.CopyOp(buf, copy))
                    buf = copy
                values.append(buf)
            self.emit(func.ReturnOp(*values))
        else:
            hint = "; lower the module to linalg first (convert-nn-to-linalg)" if op.name.startswith("nn.") else ""
            raise BufferizationError(f"linalg-bufferize: cannot bufferize {op.name}{hint}", op)

    def writable(self, value: SSAValue) -> SSAValue:
        """The buffer of `value` if this function allocated it and nothing else reads it, else a copy."""
        buf = self.buffer(value)
        if not (buf in self.fresh and value.has_one_use()):
            copy = self.alloc(value.type)
            self.emit(memref.CopyOp(buf, copy))
            buf = copy
        return buf

    def subview(self, buf: SSAValue, op: tensor.ExtractSliceOp | tensor.InsertSliceOp) -> SSAValue:
        """The `memref.subview` of `buf` that the slice op's static offsets, sizes and strides select."""
        if op.offsets or op.sizes or op.strides:
            raise BufferizationError(f"linalg-bufferize: {op.name} with dynamic offsets, sizes or strides is not supported", op)
        offsets, sizes, strides = (p.get_values() for p in (op.static_offsets, op.static_sizes, op.static_strides))
        sliced_rank = len(op.result.type.get_shape() if isinstance(op, tensor.ExtractSliceOp) else op.source.type.get_shape())
        reduce_rank = sliced_rank != len(sizes)
        view = memref.SubviewOp.from_static_parameters(buf, buf.type, offsets, sizes, strides, reduce_rank=reduce_rank)
        return self.emit(view).result

    def body(self, op: Structured):
        """A copy of `op`'s body reading captured tensors through their buffers (`tensor.extract`
        becomes `memref.load`), as a gather's body does."""
        mapper = {v: self.buffers[v] for v in captured_values(op) if v in self.buffers}
        region = Region()
        op.body.clone_into(region, value_mapper=mapper)
        for inner in list(region.walk()):
            if isinstance(inner, tensor.ExtractOp) and isinstance(inner.tensor.type, MemRefType):
                load = memref.LoadOp.get(inner.tensor, list(inner.indices))
                Rewriter.replace_op(inner, load)
        return region

    def bufferize_pad(self, op: tensor.PadOp) -> None:
        """A padded buffer filled with the pad value, the source copied into its interior subview
        (upstream's bufferization of `tensor.pad`)."""
        if op.low or op.high:
            raise BufferizationError("linalg-bufferize: tensor.pad with dynamic padding is not supported", op)
        yielded = op.region.block.last_op.operands[0]
        constant = yielded.owner
        if not isinstance(constant, arith.ConstantOp):
            raise BufferizationError("linalg-bufferize: tensor.pad must yield a constant", op)
        value = self.buffer(yielded) if constant.parent_block() is not op.region.block else None
        if value is None:
            value = self.emit(constant.clone()).result
        padded = self.alloc(op.result.type)
        self.emit(linalg.FillOp([value], [padded], []))
        source_type = memref_type(op.source.type)
        interior = self.emit(memref.SubviewOp.from_static_parameters(
            padded, padded.type, op.static_low.get_values(), source_type.get_shape(), [1] * len(source_type.get_shape())))
        self.emit(memref.CopyOp(self.buffer(op.source), interior.result))
        self.buffers[op.result] = padded

    def bufferize_structured(self, op: Structured) -> None:
        outs = [self.writable(value) for value in op.outputs]
        ins = [self.buffer(v) for v in op.inputs]
        properties = {k: v for k, v in op.properties.items()}
        new = type(op).create(
            operands=[*ins, *outs],
            result_types=[],
            properties=properties,
            attributes=dict(op.attributes),
            regions=[self.body(op)],
        )
        self.emit(new)
        for res, buf in zip(op.results, outs, strict=True):
            self.buffers[res] = buf


VIEW_OPS = (memref.CollapseShapeOp, memref.ExpandShapeOp, memref.SubviewOp, memref.CastOp)
"""Ops whose result aliases their first operand's buffer."""


def insert_deallocs(block: Block) -> None:
    """Free every `memref.alloc` of `block` that is not returned: a `memref.dealloc` right after the
    last op of `block` that uses it or a view of it (an op nesting the use counts as the user)."""
    position = {op: i for i, op in enumerate(block.ops)}

    def top_level(op: Operation) -> Operation:
        while op.parent_block() is not block:
            op = op.parent_op()
        return op

    frees: dict[Operation, list[SSAValue]] = {}
    for alloc in [op for op in block.ops if isinstance(op, memref.AllocOp)]:
        aliases, pending, last, escapes = set(), [alloc.memref], alloc, False
        while pending:
            value = pending.pop()
            aliases.add(value)
            for use in value.uses:
                user = top_level(use.operation)
                if isinstance(user, func.ReturnOp | memref.DeallocOp):  # returned, or already freed
                    escapes = True
                if isinstance(use.operation, VIEW_OPS) and use.index == 0:
                    pending.append(use.operation.results[0])
                if position[user] > position[last]:
                    last = user
        if not escapes:
            frees.setdefault(last, []).append(alloc.memref)
    for user, buffers in frees.items():
        for buffer in reversed(buffers):
            Rewriter.insert_op(memref.DeallocOp.get(buffer), InsertPoint.after(user))


@register_xrelay_pass("linalg-bufferize", former_names=("nn-bufferize", "NNBufferize"))
@dataclass(frozen=True)
class LinalgBufferize(XRelayPass):
    """Bufferize linalg-on-tensors functions to memrefs with explicit allocations (module docstring)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        global_names = {o.sym_name.data for o in op.ops if isinstance(o, memref.GlobalOp)}
        for function in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            if not function.body.blocks:
                continue
            FunctionBufferizer(op, function, global_names).run()
