"""Reductions of `linalg_structured.compile_structured`: a reduction `combine(x, acc)` without windows as
one `ufunc.reduce` straight into the output (`reduce_into`), and any other reduction body point by point
over the reduction loops (`sequential_reduction`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineMap

from xrelay.dialects.structured import captured_values
from xrelay.runtime.kernels.affine_views import ExecutionError, LoopView, gather_view
from xrelay.runtime.kernels.body_program import BodyProgram


def reduce_into(ufunc: np.ufunc, x: np.ndarray, axes: tuple[int, ...], out: np.ndarray, overwrite: bool) -> None:
    """`out = ufunc.reduce(x)` over `axes` (sorted, kept as size 1) with `overwrite` (its fill was
    dropped), else `out = ufunc(out, ufunc.reduce(x))`; stepwise where `_stepwise` says so."""
    if len(axes) > 1 and _stepwise(x, axes):
        for axis in axes[:-1]:
            x = ufunc.reduce(x, axis=axis, keepdims=True)
        axes = axes[-1:]
    if overwrite and x.dtype == out.dtype:
        ufunc.reduce(x, axis=axes, keepdims=True, out=out)
    elif overwrite:
        np.copyto(out, ufunc.reduce(x, axis=axes, keepdims=True), casting="unsafe")
    else:
        ufunc(out, ufunc.reduce(x, axis=axes, keepdims=True), out=out, casting="unsafe")


MAX_STEPWISE_INNER = 256
"""A reduction over several axes whose values kept after the last of them (in memory order) are
fewer than this is reduced one axis at a time, outermost first: numpy's loop over several axes at
once runs its inner loop over those few values only (a global pool over 112x112x32: 313 us, by H
then by W 58 us; 56x56x144 108 -> 66 us; 14x14x672, 16 us, is left as it is)."""


def _stepwise(x: np.ndarray, axes: tuple[int, ...]) -> bool:
    """Whether `x` is reduced over `axes` (sorted) one at a time: its strides fall along the
    reduced axes and after them, and few values are kept after the last."""
    inner = int(np.prod(x.shape[axes[-1] + 1:], dtype=np.int64))
    strides = [x.strides[a] for a in range(axes[0], x.ndim) if x.shape[a] > 1]
    return inner < MAX_STEPWISE_INNER and all(a >= b for a, b in zip(strides, strides[1:]))


MAX_SEQUENTIAL_POINTS = 1 << 16
"""Largest reduction space `sequential_reduction` walks point by point."""


def sequential_reduction(op: LinalgStructuredOperation, maps: Sequence[AffineMap], ranges: Sequence[int],
                         reduction_axes: Sequence[int]) -> Callable[[list[np.ndarray]], None]:
    """Any reduction body (an argmax's `select(x > max, index, arg)`, results depending on each
    other): the reduction loops run in order, point by point, the body evaluated over all parallel
    loops at once at each point, every output updated from the values before that point."""
    taps = list(np.ndindex(*(ranges[a] for a in reduction_axes)))
    if len(taps) > MAX_SEQUENTIAL_POINTS:
        raise ExecutionError(f"{op.name}: a reduction body that is not combine(x, accumulator) over "
                             f"{len(taps)} points is too large to run point by point")
    n_in = len(op.inputs)
    block = op.body.block
    in_args, out_args = block.args[:n_in], block.args[n_in:]
    yielded = list(block.last_op.operands)
    point_ranges = tuple(1 if i in reduction_axes else r for i, r in enumerate(ranges))
    programs = []
    for tap in taps:
        base = [0] * len(ranges)
        for axis, t in zip(reduction_axes, tap):
            base[axis] = t
        programs.append(BodyProgram(block, yielded, point_ranges, base))
    views = [LoopView(m, ranges) for m in maps]
    captured = captured_values(op)
    n_operands = len(op.operands)

    def run(arrays: list) -> None:
        ins, outs = arrays[:n_in], arrays[n_in:n_operands]
        out_views = [view(o, writeable=True) if view.linear else None for o, view in zip(outs, views[n_in:])]
        if any(v is None for v in out_views):
            raise ExecutionError(f"{op.name}: output indexing maps must be linear")
        in_views = [view(a) if view.linear else gather_view(a, view.amap, ranges) if isinstance(a, np.ndarray) else a
                    for a, view in zip(ins, views[:n_in])]
        env: dict[SSAValue, object] = dict(zip(captured, arrays[n_operands:]))
        env.update(zip(out_args, out_views))
        for tap, program in zip(taps, programs):
            for arg, v in zip(in_args, in_views):
                if isinstance(v, np.ndarray):
                    index = [slice(None)] * v.ndim
                    for axis, t in zip(reduction_axes, tap):
                        if v.shape[axis] > 1:
                            index[axis] = slice(t, t + 1)
                    env[arg] = v[tuple(index)]
                else:
                    env[arg] = v
            values = [np.array(np.broadcast_to(value, o.shape)) for value, o in zip(program(env), out_views)]
            for o, value in zip(out_views, values):
                np.copyto(o, value, casting="unsafe")

    return run
