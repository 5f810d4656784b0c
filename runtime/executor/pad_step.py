"""The linalg executor's step for `tensor.pad`: the source copied into the interior of a planned
buffer whose border is filled. When the source is a transpose nothing else reads (through reshapes:
a channel shuffle), the pad copies from the transpose's input through the permutation and the
transpose only binds its result: one pass over the activation instead of two."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import SSAValue

from xrelay.runtime.kernels.body_program import numpy_dtype, scalar_constant
from xrelay.runtime.kernels.elementwise_programs import copy_into
from xrelay.runtime.kernels.linalg_structured import ExecutionError
from xrelay.runtime.executor.memory_plan import StepAccess
from xrelay.runtime.executor.plan import FusedTail
from xrelay.runtime.native.window_kernels import as_four_axes, native_copy, native_window
from xrelay.runtime.parallel.threads import run_parts, split_parts

if TYPE_CHECKING:
    from xrelay.runtime.executor.linalg_exec import LinalgProgram

RESHAPES = (tensor.CollapseShapeOp, tensor.ExpandShapeOp, tensor.ReshapeOp)


def shuffled_source(program: LinalgProgram, source: SSAValue) -> tuple[linalg.TransposeOp, int] | None:
    """(the transpose, its step index) when `source` is, through single-use reshapes, the single-use
    result of a `linalg.transpose` compiled as a step of its own that only copies (a fused tail of
    that one op, writing into a fresh buffer); else None."""
    value = source
    while isinstance(value.owner, RESHAPES) and value.has_one_use():
        value = value.owner.operands[0]
    transpose = value.owner
    if not (isinstance(transpose, linalg.TransposeOp) and transpose.results and value.has_one_use()):
        return None
    # Newest first: the transpose's step is usually a few steps back, but any op may stand in between.
    for index in range(len(program.steps) - 1, -1, -1):
        step = program.steps[index]
        if isinstance(step, FusedTail) and len(step.members) == 1 and step.members[0][0].op is transpose:
            return transpose, index
    return None


def compile_pad(program: LinalgProgram, op: tensor.PadOp) -> None:
    """Append the step of `op` (static widths, one pad value at every position) to `program`."""
    if op.low or op.high:
        raise ExecutionError("tensor.pad with dynamic padding is not supported")
    yielded = op.region.block.last_op.operands[0]
    owner = yielded.owner
    constant = isinstance(owner, arith.ConstantOp) and not isinstance(owner.value, DenseIntOrFPElementsAttr)
    if constant:
        fill = lambda env, v=scalar_constant(owner.value, yielded.type): v  # noqa: E731
    elif yielded in program.slots:  # a scalar computed before the pad
        fill = lambda env, i=program.slots[yielded]: env[i]  # noqa: E731
    else:
        raise ExecutionError("tensor.pad: only a pad value that is the same at every position is supported")
    shape = tuple(op.result.type.get_shape())
    dtype = numpy_dtype(op.result.type.get_element_type())
    interior = tuple(slice(lo, lo + n) for lo, n in zip(op.static_low.get_values(), op.source.type.get_shape()))
    src, out = program._slot(op.source), program._slot(op.result)
    # The result is a planned buffer: only its border is filled, the interior is the copy.
    k = program.memory.fresh(out, len(program.steps), shape, dtype, op)
    program._planned.append(None)
    border = []
    for axis, (lo, size, n) in enumerate(zip(op.static_low.get_values(), shape, op.source.type.get_shape())):
        before = (slice(None),) * axis
        if lo == 1 and size - n == 2:  # one row on each side (a 3x3 window's pad): one strided fill
            border.append(before + (slice(0, size, size - 1),))
            continue
        if lo > 0:
            border.append(before + (slice(0, lo),))
        if lo + n < size:
            border.append(before + (slice(lo + n, size),))

    source_shape = tuple(op.source.type.get_shape())
    source_of = lambda env, inside: (inside, env[src])  # noqa: E731
    shuffle = shuffled_source(program, op.source)
    folded = shuffle is not None and _interior_splits_into(shape, dtype, interior, shuffle[0])
    if folded:
        source_of = _fold_transpose(program, *shuffle)
        source_shape = tuple(shuffle[0].results[0].type.get_shape())

    step = PadStep(src, out, shape, dtype, interior, border, fill, source_of, source_shape, program._planned, k)
    step.split = program._split_parts()
    step.constant_fill = constant
    step.folded_transpose = folded
    program.steps.append(step)


class PadStep:
    """The step of one `tensor.pad`: `buffer(env)` binds the padded buffer (planned, or fresh when the
    program is not planned) with its border filled; calling the step also copies the source into the
    interior. `runtime/kernels/conv_epilogue.py` calls `buffer` itself and fills the interior block by block."""

    def __init__(self, source: int, out: int, shape, dtype, interior, border, fill, source_of, source_shape,
                 planned: list, k: int):
        self.source, self.out, self.shape, self.dtype = source, out, shape, dtype
        self.interior, self.border, self.fill, self.source_of = interior, border, fill, source_of
        self.source_shape, self.planned, self.k = source_shape, planned, k
        self.constant_fill = False
        """Whether the pad value is a constant (not a slot bound by an earlier step)."""
        self.folded_transpose = False
        """Whether the pad copies from a transpose's input (`_fold_transpose`), not from `source`."""
        # numpy's copy (a transposing one: a channel shuffle's) is split over the worker threads along
        # the first axis of more than one row.
        self.axis = next((a for a, n in enumerate(source_shape) if n > 1), 0)
        self.rows = source_shape[self.axis] if source_shape else 1
        self.split: int | None = None  # its kernel's `split` parts, or None: whole
        self.native: tuple | None = None
        """(where the last copy's interior and source were, its compiled call or None: `native_window`)."""

    def buffer(self, env: list) -> np.ndarray:
        padded = self.planned[self.k]
        if padded is None:
            padded = np.empty(self.shape, self.dtype)
        value = self.fill(env)
        for index in self.border:
            padded[index] = value
        env[self.out] = padded
        return padded

    def __call__(self, env: list) -> None:
        inside, source = self.source_of(env, self.buffer(env)[self.interior])
        parts = split_parts(self.split)
        if isinstance(source, np.ndarray) and source.dtype == inside.dtype == np.float32:
            # (where the interior and the source are: the compiled copy is kept while they stay there)
            key = inside.ctypes.data, inside.strides, source.ctypes.data, source.strides
            if self.native is None or self.native[0] != key:
                views = as_four_axes([inside, source])  # the interior's dense axis the kernel's vector
                dense = views is not None and views[1].strides[-1] == views[1].itemsize
                # a transposing copy (a channel shuffle's) gathers along that axis
                call = None if views is None else native_window(views[1], views[0]) if dense \
                    else native_copy(*views)
                self.native = (key, call)
            if self.native[1] is not None:  # one compiled copy, split into the kernel's parts in C
                self.native[1](parts)
                return
        axis, source_shape = self.axis, self.source_shape

        def copy_rows(r0: int, r1: int) -> None:
            index = (slice(None),) * axis + (slice(r0, r1),) if source_shape else ()
            copy_into(inside[index], source[index])

        run_parts(copy_rows, self.rows, parts)


def _interior_splits_into(shape, dtype, interior, transpose: linalg.TransposeOp) -> bool:
    """Whether the interior of a C-contiguous `shape` buffer reshapes to the transpose's result shape
    as a view (the reshapes between them only split the innermost axis, say)."""
    try:
        np.reshape(np.empty(shape, dtype)[interior], transpose.results[0].type.get_shape(), copy=False)
    except ValueError:
        return False
    return True


def _fold_transpose(program: LinalgProgram, transpose: linalg.TransposeOp, index: int):
    """Make the transpose's step at `index` only bind its result, and return `source_of(env, inside)`
    giving the pad's interior and its source as views of one shape: the interior reshaped to the
    transpose's result shape, and the transpose's input through the permutation."""
    (member,) = program.steps[index].members
    _, prepare, finish = member

    def bind_only(env) -> None:
        finish(env, prepare(env))

    program.steps[index] = bind_only
    access = program.accesses.get(index)
    if access is not None:  # now a binding: it writes no memory
        access.writes.clear()
    source = program._slot(transpose.inputs[0])
    step = len(program.steps)
    program.memory.touch(step, [source])  # read by the pad's step now
    program.accesses.setdefault(step, StepAccess()).reads.add(source)
    result_shape = tuple(transpose.results[0].type.get_shape())
    permutation = tuple(transpose.permutation.get_values())

    def source_of(env, inside: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # The interior of a contiguous buffer, split along the axes the reshapes split: a view.
        return np.reshape(inside, result_shape, copy=False), env[source].transpose(permutation)

    return source_of
