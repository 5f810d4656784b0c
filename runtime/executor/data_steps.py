"""The linalg executor's steps that bind or move data rather than compute it.

A constant, a global or an allocation binds its array (`tensor.empty`/`memref.alloc`: its planned
buffer, or a fresh array when not planned); a reshape, cast or slice binds a view of its operand (a
placed program's later runs bind the views of its own buffers once and for all:
runtime/executor/bound_steps.py); a `tensor.insert_slice` writes its source into its slice
of the destination (in place when the destination is fresh and single-use), copying nothing for a
source the memory plan computed there (`insert_step`); broadcasts and `memref.copy` copy."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects import arith, bufferization, memref, tensor
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ShapedType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Operation

from xrelay.runtime.executor.memory_plan import fresh_single_use
from xrelay.runtime.kernels.body_program import aligned_constant, dense_to_numpy, numpy_dtype, scalar_constant
from xrelay.runtime.kernels.linalg_structured import ExecutionError
from xrelay.runtime.native.window_kernels import same_view

if TYPE_CHECKING:
    from xrelay.runtime.executor.linalg_exec import LinalgProgram

RESHAPE_KINDS = (
    tensor.CollapseShapeOp, tensor.ExpandShapeOp, memref.CollapseShapeOp, memref.ExpandShapeOp, tensor.ReshapeOp,
    bufferization.ToTensorOp, bufferization.ToBufferOp, tensor.CastOp, memref.CastOp,
)
"""Op kinds whose step binds its operand reshaped to the result's shape (`compile_reshape`)."""


def compile_reshape(program: LinalgProgram, op: Operation) -> None:
    """Append the step of a reshape or cast (one of `RESHAPE_KINDS`): it binds a view of its operand."""
    slot = program._slot
    shape = tuple(op.results[0].type.get_shape())
    src, out = slot(op.operands[0]), slot(op.results[0])
    program.memory.alias(out, src, reshaped=True)
    program.steps.append(lambda env: env.__setitem__(out, env[src].reshape(shape)))


def compile_slice(program: LinalgProgram, op: tensor.ExtractSliceOp | memref.SubviewOp) -> None:
    """Append the step of a static slice: it binds a view of its source."""
    slot = program._slot
    index = static_slices(op)
    src, out = slot(op.source), slot(op.result)
    program.memory.alias(out, src)
    shape = tuple(op.result.type.get_shape())  # rank-reducing slices drop unit axes
    program.steps.append(lambda env: env.__setitem__(out, env[src][index].reshape(shape)))


def compile_insert_slice(program: LinalgProgram, op: tensor.InsertSliceOp) -> None:
    """Append the step of a static `tensor.insert_slice`: in place into a fresh, single-use
    destination (which the memory plan may place the source in), else into a copy of it."""
    slot = program._slot
    index = static_slices(op)
    src, dst, out = slot(op.source), slot(op.dest), slot(op.result)
    copy = not fresh_single_use(op.dest)
    view_shape = tuple(len(range(*sl.indices(n))) for sl, n in zip(index, op.dest.type.get_shape()))
    if not copy:
        program.memory.alias(out, dst)
        if view_shape == tuple(op.source.type.get_shape()):  # the plan may make the source this slice
            program.memory.place(src, dst, index, len(program.steps), op)

    program.steps.append(insert_step(src, dst, out, index, copy, view_shape))


def static_slices(op: tensor.ExtractSliceOp | tensor.InsertSliceOp | memref.SubviewOp) -> tuple[slice, ...]:
    """The numpy index of a slice op with static offsets, sizes and strides."""
    offsets, sizes, strides = (tuple(p.get_values()) for p in (op.static_offsets, op.static_sizes, op.static_strides))
    if op.offsets or op.sizes or op.strides:
        raise ExecutionError(f"{op.name} with dynamic offsets, sizes or strides is not supported")
    index = []
    for offset, size, stride in zip(offsets, sizes, strides, strict=True):
        stop = offset + (size - 1) * stride + (1 if stride > 0 else -1)
        index.append(slice(offset, stop if stop >= 0 else None, stride))
    return tuple(index)


def insert_step(src: int, dst: int, out: int, index: tuple[slice, ...], copy: bool, view_shape: tuple[int, ...]):
    """A step writing `env[src]` into slice `index` of `env[dst]` (a copy of it when `copy`) and
    binding the result to slot `out`; a source computed in its slice is not copied (and once the
    slots are learnt, runtime/executor/bound_steps.py drops the step: `in_slice`)."""

    def insert(env: list) -> None:
        array = np.array(env[dst]) if copy else env[dst]
        if not same_view(array[index], env[src]):  # else the source was computed in place
            array[index] = env[src].reshape(view_shape)
        env[out] = array

    insert.in_slice = None if copy else (dst, index, src)
    return insert


def compile_constant(program: LinalgProgram, op: arith.ConstantOp) -> None:
    """Append the step binding a constant (a dense one as an aligned array, else a scalar)."""
    if isinstance(op.value, DenseIntOrFPElementsAttr):
        _bind(program, op.result, aligned_constant(dense_to_numpy(op.value)))
    else:
        _bind(program, op.result, scalar_constant(op.value, op.result.type))


def compile_get_global(program: LinalgProgram, op: memref.GetGlobalOp) -> None:
    """Append the step binding a global's array."""
    _bind(program, op.memref, program.globals[op.name_.root_reference.data])


def compile_dealloc(program: LinalgProgram, op: memref.DeallocOp) -> None:
    """Append the step dropping the program's reference to the buffer so numpy can free it."""
    _bind(program, op.memref, None)


def _bind(program: LinalgProgram, value, array) -> None:
    program.steps.append(lambda env, v=array, o=program._slot(value): env.__setitem__(o, v))


def compile_allocation(program: LinalgProgram, op: tensor.EmptyOp | memref.AllocOp | memref.AllocaOp) -> None:
    """Append the step binding a new buffer: its planned array, or a fresh one when not planned."""
    slot = program._slot
    shape_type = op.results[0].type
    assert isinstance(shape_type, ShapedType)
    shape, dtype = tuple(shape_type.get_shape()), numpy_dtype(shape_type.get_element_type())
    out = slot(op.results[0])
    k = program.memory.fresh(out, len(program.steps), shape, dtype, op)
    program._planned.append(None)

    def allocate(env, s=shape, d=dtype, o=out, k=k, planned=program._planned):
        array = planned[k]
        env[o] = np.empty(s, d) if array is None else array

    program.steps.append(allocate)


def compile_broadcast(program: LinalgProgram, op: linalg.BroadcastOp) -> None:
    """Append the step of a `linalg.broadcast`: the input's axes are the init's axes not in `dimensions`."""
    slot = program._slot
    added = op.dimensions.get_values()
    kept = tuple(None if i in added else slice(None) for i in range(len(op.init.type.get_shape())))
    src, init = slot(op.input), slot(op.init)
    out = slot(op.result[0]) if op.result else None

    def broadcast(env, s=src, i=init, o=out, k=kept):
        target = env[i] if o is None else np.empty_like(env[i])
        np.copyto(target, env[s][k])
        if o is not None:
            env[o] = target

    program.steps.append(broadcast)


def compile_copy(program: LinalgProgram, op: memref.CopyOp) -> None:
    """Append the step of a `memref.copy`."""
    slot = program._slot
    src, dst = slot(op.source), slot(op.destination)
    program.steps.append(lambda env, s=src, d=dst: np.copyto(env[d], env[s]))