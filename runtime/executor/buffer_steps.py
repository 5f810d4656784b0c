"""The linalg executor's steps that bind constants, buffers and globals, broadcast and copy
(`tensor.empty`/`memref.alloc` bind their planned buffer, or a fresh array when not planned)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects import arith, memref, tensor
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ShapedType
from xdsl.dialects.linalg import ops as linalg

from xrelay.runtime.kernels.body_program import aligned_constant, dense_to_numpy, numpy_dtype, scalar_constant

if TYPE_CHECKING:
    from xrelay.runtime.executor.linalg_exec import LinalgProgram


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