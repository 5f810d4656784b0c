"""Reductions `linalg_structured.compile_structured` runs outside its general path: a plain reduction of
an input as one `ufunc.reduce` straight into the output (`_direct_reduce_program`), and any other reduction
body point by point over the reduction loops (`sequential_reduction`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineMap

from xrelay.dialects.structured import captured_values
from xrelay.runtime.kernels.affine_views import ExecutionError, LoopView, gather_view, used_loops
from xrelay.runtime.kernels.body_program import BodyProgram


def _direct_reduce_program(ufunc: np.ufunc, reduced: SSAValue, in_args: list, views: list, ranges: Sequence[int],
                           reduction_axes: tuple[int, ...], n_in: int, overwrite: bool,
                           reuse_views: list[bool]) -> Callable[[list], bool] | None:
    """For a plain reduction `combine(in_i, acc)` (input i read over every loop through bare loops): a
    function of the operand arrays reducing its loop-space view with one `ufunc.reduce` into the
    output's (`overwrite`: the fill was dropped) and returning True, or False (the general path) when
    the arrays do not fit. Views are reused for the same arrays while `reuse_views[0]`."""
    if reduced not in in_args:
        return None
    i = in_args.index(reduced)
    if not (views[i].linear and views[n_in].linear) or used_loops(views[i].amap) != set(range(len(ranges))):
        return None  # (an input missing a loop would be counted once, not once per point)
    axes = tuple(sorted(reduction_axes))
    reduced_shape = tuple(1 if d in axes else n for d, n in enumerate(ranges))
    last: list = [None]  # (input array, output array, input view, output view) of the last call

    def run(arrays: list) -> bool:
        source, target = arrays[i], arrays[n_in]
        entry = last[0]
        if entry is not None and entry[0] is source and entry[1] is target:
            x, out = entry[2], entry[3]
        else:
            if not (isinstance(source, np.ndarray) and isinstance(target, np.ndarray)
                    and source.dtype == target.dtype):
                return False
            x, out = views[i](source), views[n_in](target, writeable=True)
            if out.shape != reduced_shape:
                return False
            if reuse_views[0]:
                last[0] = (source, target, x, out)
        last_axis = axes
        if len(axes) > 1 and _stepwise(x, axes):
            for axis in axes[:-1]:
                x = ufunc.reduce(x, axis=axis, keepdims=True)
            last_axis = axes[-1]
        if overwrite:
            ufunc.reduce(x, axis=last_axis, keepdims=True, out=out)
        else:
            ufunc(out, ufunc.reduce(x, axis=last_axis, keepdims=True), out=out)
        return True

    return run


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
