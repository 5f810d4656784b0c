"""The linalg executor's step for `tensor.pad`: the source copied into the interior of a planned
buffer whose border is filled. In a "transpose" kernel (a channel shuffle before a padded
convolution, passes/kernels/form_kernels.py) the pad copies from the transpose's input through the
permutation and the transpose only binds its result (`fold_transpose`): one pass over the
activation instead of two."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

from xrelay.runtime.kernels.body_program import numpy_dtype, scalar_constant
from xrelay.runtime.kernels.elementwise_programs import copy_into
from xrelay.runtime.kernels.linalg_structured import ExecutionError
from xrelay.runtime.native.window_kernels import as_four_axes, native_copy, native_window
from xrelay.runtime.parallel.threads import run_parts, split_parts

if TYPE_CHECKING:
    from xrelay.runtime.executor.linalg_exec import LinalgProgram

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

    step = PadStep(src, out, shape, dtype, interior, border, fill, program._planned, k)
    step.split = program._split(op)[0]
    step.constant_fill = constant
    program.steps.append(step)


class PadStep:
    """The step of one `tensor.pad`: `buffer(env)` binds the padded buffer (planned, or fresh when the
    program is not planned) with its border filled; calling the step also copies the source into the
    interior, numpy's copy split over the worker threads along `axis`, the first of more than one row.
    `runtime/kernels/conv_epilogue.py` calls `buffer` itself and fills the interior block by block."""

    def __init__(self, source: int, out: int, shape, dtype, interior, border, fill, planned: list, k: int):
        self.source, self.out, self.shape, self.dtype = source, out, shape, dtype
        self.interior, self.border, self.fill, self.planned, self.k = interior, border, fill, planned, k
        self.source_shape = tuple(sl.stop - sl.start for sl in interior)
        self.permutation: tuple[int, ...] | None = None
        """With `fold_transpose`, the transpose's: `source` is its input, copied through the permutation
        into the interior seen with `source_shape`, the transpose's result shape."""
        self.constant_fill = False
        """Whether the pad value is a constant (not a slot bound by an earlier step)."""
        self.split: int | None = None  # its kernel's `split` parts, or None: whole
        self.native: tuple | None = None
        """(where the last copy's interior and source were, its compiled call or None: `native_window`)."""

    @property
    def axis(self) -> int:
        return next((a for a, n in enumerate(self.source_shape) if n > 1), 0)

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
        inside, source = self.buffer(env)[self.interior], env[self.source]
        if self.permutation is not None:  # (the interior seen so is a view, as the pass checked)
            inside, source = np.reshape(inside, self.source_shape, copy=False), source.transpose(self.permutation)
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

        run_parts(copy_rows, source_shape[axis] if source_shape else 1, parts)


def fold_transpose(program: LinalgProgram, index: int, pad: PadStep, pad_index: int) -> None:
    """A "transpose" kernel (passes/kernels/form_kernels.py): make the transpose's step at `index` (a
    fused tail of that one op) only bind its result, and `pad` (the step at `pad_index`) copy into its
    interior reshaped to the transpose's result shape (a view, as the pass checked) from the
    transpose's input through the permutation."""
    (member,) = program.steps[index].members
    chunked, prepare, finish = member
    transpose = chunked.op

    def bind_only(env) -> None:
        finish(env, prepare(env))

    program.steps[index] = bind_only
    program.accesses[index].writes.clear()  # now a binding: it writes no memory
    pad.source = program._slot(transpose.inputs[0])
    program.accesses[pad_index].reads.add(pad.source)  # read by the pad's step now
    pad.source_shape = tuple(transpose.results[0].type.get_shape())
    pad.permutation = tuple(transpose.permutation.get_values())
