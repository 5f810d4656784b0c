"""Memrefs with dynamic strides given the layout they have when xrelay runs them.

Upstream's bufferization types arguments as fully dynamic strided memrefs; xrelay passes every
argument as a contiguous array, so its layout, and that of every value derived from it (casts,
subviews, reshapes, `bufferization.to_buffer`), is static. `static_layouts(module)` returns a copy
with those types made static (the module itself when it has none), for the loops level."""

from __future__ import annotations

import math

from xdsl.dialects import bufferization, func, memref
from xdsl.dialects.builtin import FunctionType, MemRefType, ModuleOp, NoneAttr, StridedLayoutAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import Rewriter

from xrelay.runtime.kernels.affine_views import ExecutionError

Layout = tuple[tuple[int, ...], int]
"""Element strides and offset of a memref within its buffer."""


def is_dynamic(memref_type: Attribute) -> bool:
    """Whether a memref type's strided layout has a `?` stride or offset."""
    return (isinstance(memref_type, MemRefType) and isinstance(memref_type.layout, StridedLayoutAttr)
            and None in (*memref_type.get_strides(), memref_type.get_offset()))


def _row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(math.prod(shape[i + 1:]) for i in range(len(shape)))


def layout_of(memref_type: MemRefType) -> Layout:
    """The static layout of a memref type (row-major for the identity layout)."""
    if isinstance(memref_type.layout, StridedLayoutAttr):
        return tuple(memref_type.get_strides()), memref_type.get_offset()
    return _row_major(tuple(memref_type.get_shape())), 0


def with_layout(memref_type: MemRefType, layout: Layout) -> MemRefType:
    """`memref_type` with the given static layout (the identity layout when it is row-major from 0)."""
    shape = tuple(memref_type.get_shape())
    strides, offset = layout
    if offset == 0 and all(s == r for s, r, n in zip(strides, _row_major(shape), shape) if n != 1):
        layout_attr: Attribute = NoneAttr()
    else:
        layout_attr = StridedLayoutAttr(list(strides), offset)
    return MemRefType(memref_type.get_element_type(), shape, layout_attr, memref_type.memory_space)


def _subview_layout(op: memref.SubviewOp, source: Layout) -> Layout:
    if op.offsets or op.sizes or op.strides:
        raise ExecutionError("memref.subview of a dynamically strided memref needs static offsets, sizes and strides")
    strides, offset = source
    offsets, sizes, steps = (tuple(p.get_values()) for p in (op.static_offsets, op.static_sizes, op.static_strides))
    offset += sum(o * s for o, s in zip(offsets, strides, strict=True))
    full = [(n, s * step) for n, s, step in zip(sizes, strides, steps, strict=True)]
    result_shape = list(op.result.type.get_shape())
    kept: list[int] = []
    for n, stride in full:  # a rank-reducing subview drops unit dimensions
        if len(kept) < len(result_shape) and n == result_shape[len(kept)]:
            kept.append(stride)
        elif n != 1:
            raise ExecutionError(f"memref.subview: cannot match sizes {list(sizes)} to its result {op.result.type}")
    return tuple(kept), offset


def _result_layout(op: Operation, source: SSAValue | None) -> Layout:
    """The layout of `op`'s dynamically strided memref result, from its (already static) source."""
    result_type = op.results[0].type
    if isinstance(op, bufferization.ToBufferOp):  # the tensor is a contiguous array
        return _row_major(tuple(result_type.get_shape())), 0
    assert source is not None
    source_layout = layout_of(source.type)
    if isinstance(op, memref.CastOp):
        return source_layout
    if isinstance(op, memref.SubviewOp):
        return _subview_layout(op, source_layout)
    if isinstance(op, memref.CollapseShapeOp | memref.ExpandShapeOp):
        if source_layout == (_row_major(tuple(source.type.get_shape())), 0):
            return _row_major(tuple(result_type.get_shape())), 0
        raise ExecutionError(f"{op.name} of a strided view with dynamic strides is not supported")
    raise ExecutionError(f"{op.name}: a result with dynamic strides ({result_type}) is not supported")


def static_layouts(module: ModuleOp, entry: str = "main") -> ModuleOp:
    """`module`, or a copy in which `@entry`'s dynamically strided memrefs have static layouts."""
    main = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry), None)
    if main is None or not any(is_dynamic(v.type) for v in (*main.args, *(r for op in main.walk() for r in op.results))):
        return module
    module = module.clone()
    main = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry)
    for arg in main.args:
        if is_dynamic(arg.type):
            Rewriter.replace_value_with_new_type(arg, with_layout(arg.type, layout_of(MemRefType(
                arg.type.get_element_type(), arg.type.get_shape()))))
    for op in main.walk():
        for result in op.results:
            if is_dynamic(result.type):
                source = op.operands[0] if op.operands else None
                Rewriter.replace_value_with_new_type(result, with_layout(result.type, _result_layout(op, source)))
    outputs = main.function_type.outputs.data
    returns = [op for op in main.walk() if isinstance(op, func.ReturnOp)]
    if returns:
        outputs = returns[0].operand_types
    main.function_type = FunctionType.from_lists([a.type for a in main.args], list(outputs))
    return module

