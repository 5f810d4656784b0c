"""Pooling windows reduced one window axis at a time (separably), whatever the layout.

A body folding one input read through windows `o * s + k * d + c` into its output (`max(x, acc)`,
`x + acc`) is reduced along one window axis, then the other: K_h + K_w - 2 ufunc calls over arrays
no larger than the data instead of K_h * K_w passes, the outermost (contiguous) axis first. A body
folding an elementwise function of its input (LRN's sum of squares) applies it once, then reduces
the windows the same way (`mapped_window_program`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, memref, tensor
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import OpResult
from xdsl.ir.affine import AffineMap

from xrelay.runtime.kernels.affine_views import ExecutionError, data_axes, is_bare_permutation
from xrelay.runtime.kernels.body_program import BodyProgram, body_op_fn, reduction_combine
from xrelay.runtime.native.window_kernels import native_window


def window_axes(data_map: AffineMap, out_map: AffineMap, reduction: Sequence[int]):
    """`affine_views.data_axes` of a pooling's data: ("loop", loop) for a bare parallel loop of the
    output or ("window", output loop, kernel loop, stride, dilation, offset); None unless every
    reduction loop is the kernel loop of exactly one window and every output loop is read by exactly
    one data axis."""
    out_loops = [e.position for e in out_map.results]
    axes = data_axes(data_map, out_loops, reduction)
    if axes is None or sorted(a[2] for a in axes if a[0] == "window") != sorted(reduction) \
            or sorted(a[1] for a in axes) != sorted(out_loops):
        return None
    return axes


def window_reduction(maps: Sequence[AffineMap], ranges: Sequence[int], reduction: Sequence[int], data: int,
                     out: int, ufunc: np.ufunc) -> Callable[[list, np.ndarray, bool], bool] | None:
    """`run(ins, target, accumulate) -> bool` computing `target (op)= reduce(ufunc) of the windows
    of ins[data]` separably (see the module docstring); False when the operands are not numpy
    arrays of one dtype. None unless `maps[data]`/`maps[out]` are a pooling's (see `window_axes`:
    the output map a permutation of the parallel loops) and there is more than one tap."""
    if not is_bare_permutation(maps[out]) or len(maps[out].results) != len(maps[data].results):
        return None
    axes = window_axes(maps[data], maps[out], reduction)
    if axes is None or int(np.prod([ranges[d] for d in reduction], dtype=np.int64)) < 2:
        return None
    out_loops = [e.position for e in maps[out].results]
    # The output's axes in the data's axis order: each data axis stands for one output loop.
    data_loops = [a[1] for a in axes]
    to_data_order = [out_loops.index(d) for d in data_loops]
    stages = []  # (axis, [(start, stop, step)] per tap, output length), outermost window axis first
    for axis, a in enumerate(axes):
        if a[0] != "window":
            continue
        _, o_loop, k_loop, stride, dilation, offset = a
        length, taps = ranges[o_loop], ranges[k_loop]
        slices = [(offset + k * dilation, offset + k * dilation + (length - 1) * stride + 1, stride)
                  for k in range(taps)]
        stages.append((axis, slices, length))
    stages = [s for s in stages if len(s[1]) > 1] + [s for s in stages if len(s[1]) == 1]
    extents = [ranges[a[1]] for a in axes]  # the data extent each stage leaves behind

    def run(ins: list, target: np.ndarray, accumulate: bool) -> bool:
        x = ins[data]
        if not (isinstance(x, np.ndarray) and isinstance(target, np.ndarray) and x.dtype == target.dtype):
            return False
        result = target.transpose(to_data_order)
        # Loop axes the windows do not cover read only their first `extent` entries.
        current = x[tuple(slice(0, extents[i]) if axes[i][0] == "loop" else slice(None) for i in range(len(axes)))]
        for k, (axis, slices, _) in enumerate(stages):
            before = (slice(None),) * axis
            views = [current[before + (slice(*s),)] for s in slices]
            last = k == len(stages) - 1
            into = result if last and not accumulate else np.empty(views[0].shape, x.dtype)
            if len(views) == 1:
                np.copyto(into, views[0])
            else:
                ufunc(views[0], views[1], out=into)
                for view in views[2:]:
                    ufunc(into, view, out=into)
            current = into
        if accumulate:
            ufunc(result, current, out=result)
        return True

    loops = [i for i, a in enumerate(axes) if a[0] == "loop"]
    windows = [i for i, a in enumerate(axes) if a[0] == "window"]

    def window_views(ins: list, target: np.ndarray):
        """(data, output, (kh, kw, sh, sw, dh, dw)) as `native_window` takes them: the data axes
        reordered (a loop, the windows, the loop the output holds densest) with unit axes added; None
        for more than two loops or windows."""
        x = ins[data]
        if len(loops) > 2 or len(windows) > 2 or any(axes[i][5] < 0 for i in windows) \
                or not (isinstance(x, np.ndarray) and isinstance(target, np.ndarray)):
            return None
        result = target.transpose(to_data_order)
        x = x[tuple(slice(0, extents[i]) if a[0] == "loop" else slice(a[5], None) for i, a in enumerate(axes))]
        inner = min(loops, key=lambda i: abs(result.strides[i])) if loops else None
        order = [i for i in loops if i != inner] + windows + ([inner] if inner is not None else [])
        x, result = x.transpose(order), result.transpose(order)
        geometry = [(ranges[axes[i][2]], axes[i][3], axes[i][4]) for i in windows]
        slots = [len(loops) == 2, True, len(windows) == 2, inner is not None]  # (n, h, w, c): which are axes
        for position in [p for p, present in enumerate(slots) if not present]:
            x, result = np.expand_dims(x, position), np.expand_dims(result, position)
        if len(windows) == 1:
            geometry.append((1, 1, 1))
        (kh, sh, dh), (kw, sw, dw) = geometry
        return x, result, (kh, kw, sh, sw, dh, dw)

    run.window_views = window_views
    return run


IDENTITIES = {np.maximum: -np.inf, np.fmax: -np.inf, np.minimum: np.inf, np.fmin: np.inf, np.add: 0.0}
"""The value a reduction's output may start from without changing it (its fill can be dropped)."""


def pooling_reducer(op) -> tuple[int, np.ufunc] | None:
    """(input index, ufunc) when `op` has one output and its body is only `yield combine(x, acc)`:
    x that input's block argument, acc the output's, `combine` one of `REDUCERS`; else None."""
    block = op.body.block
    if len(op.outputs) != 1 or len(block.ops) != 2 or (combine := reduction_combine(op, 0)) is None:
        return None
    ufunc, x = combine
    return (block.args.index(x), ufunc) if x in block.args[:len(op.inputs)] else None


def starts_from_identity(op, value: float) -> bool:
    """Whether `op` is a pooling that `pooling_program` runs and `value` is its reduction's identity:
    a fill of `value` before it may be dropped (the window reduction then writes its output)."""
    found = pooling_reducer(op)
    if found is None or IDENTITIES.get(found[1]) != value:
        return False
    maps = [m.data for m in op.get_indexing_maps()]
    iterators = [str(it.data) for it in op.get_iterator_types()]
    reduction = [i for i, it in enumerate(iterators) if it == "reduction"]
    try:
        ranges = op.get_static_loop_ranges()
    except NotImplementedError:
        return False
    return window_reduction(maps, ranges, reduction, found[0], len(op.inputs), found[1]) is not None


def pooling_program(op, maps: Sequence[AffineMap], ranges: Sequence[int], reduction: Sequence[int],
                    zero_init: Sequence[bool]) -> Callable[[list], bool] | None:
    """For a pooling (`pooling_reducer`, `window_reduction`): a function of the operand arrays
    running `window_reduction` (True), or returning False when it cannot (the caller then runs the
    general path, which accumulates: an output whose fill was dropped, `zero_init[0]`, is first
    set to the identity). None for any other op."""
    found = pooling_reducer(op)
    if found is None or not reduction:
        return None
    data, ufunc = found
    n_in = len(op.inputs)
    reduce = window_reduction(maps, ranges, reduction, data, n_in, ufunc)
    if reduce is None:
        return None
    accumulate = not (zero_init and zero_init[0])

    def run(arrays: list) -> bool:
        if reduce(arrays[:n_in], arrays[n_in], accumulate):
            return True
        if not accumulate:
            arrays[n_in][...] = IDENTITIES[ufunc]
        return False

    def native_call(arrays: list):
        """`call(threads)` of the compiled window kernel for these arrays, or None (`native_window`)."""
        views = reduce.window_views(arrays[:n_in], arrays[n_in])
        return None if views is None else native_window(views[0], views[1], views[2], ufunc, accumulate)

    run.native_call = native_call
    return run


def _mapped_input(op, value) -> int | None:
    """The index of the one input that `value` (a reduction body's folded value) is an elementwise
    function of: every body op it needs computes per element from that input's block argument and
    body constants (no loop indices, no reads of other operands, no captured values); else None."""

    block = op.body.block
    n_in = len(op.inputs)
    args: set = set()
    seen: set = set()
    pending = [value]
    while pending:
        v = pending.pop()
        if v in block.args:
            if block.args.index(v) >= n_in:
                return None
            args.add(v)
            continue
        owner = v.owner
        if not (isinstance(v, OpResult) and owner.parent_block() is block):
            return None  # a captured value: the loop space's shape may matter, stay general
        if owner in seen:
            continue
        seen.add(owner)
        if isinstance(owner, arith.ConstantOp):
            continue
        if isinstance(owner, linalg.IndexOp | tensor.ExtractOp | memref.LoadOp | arith.IndexCastOp):
            return None  # (they depend on where in the loop space, not only on the element)
        try:
            body_op_fn(owner)
        except ExecutionError:
            return None
        pending.extend(owner.operands)
    if len(args) != 1 or value in block.args:  # (the input itself: a pooling, `pooling_program`'s)
        return None
    return block.args.index(args.pop())


def mapped_window_program(op, maps: Sequence[AffineMap], ranges: Sequence[int], reduction: Sequence[int],
                          zero_init: Sequence[bool]) -> Callable[[list], bool] | None:
    """For a reduction whose one output folds `combine(f(x), acc)` (`combine` one of `REDUCERS`, `f` an
    elementwise function of one input `x`, `_mapped_input`) with `x` read through pooling windows
    (`window_reduction`): a function of the operand arrays that evaluates `f` once over the part of
    `x` the windows read, into a per-thread buffer, then reduces its windows with `window_reduction`
    (True); False when the operands are not numpy arrays (the caller runs the general path, which
    accumulates: an output that was to be written whole is first set to the identity). None for any
    other op (LRN's sum of squares over a channel window)."""
    if not reduction or len(op.outputs) != 1:
        return None
    block = op.body.block
    n_in = len(op.inputs)
    combine = reduction_combine(op, 0)
    if combine is None:
        return None
    ufunc, value = combine
    data = _mapped_input(op, value)
    if data is None or ufunc not in IDENTITIES:
        return None
    reduce = window_reduction(maps, ranges, reduction, data, n_in, ufunc)
    if reduce is None:
        return None
    axes = window_axes(maps[data], maps[n_in], reduction)
    region = []  # the part of the input the windows read, per data axis
    for a in axes:
        if a[0] == "loop":
            region.append(slice(0, ranges[a[1]]))
        else:
            _, o_loop, k_loop, stride, dilation, offset = a
            region.append(slice(offset, offset + (ranges[o_loop] - 1) * stride + (ranges[k_loop] - 1) * dilation + 1))
    region = tuple(region)
    body = BodyProgram(block, [value], ranges)
    x_arg = block.args[data]
    accumulate = not (zero_init and zero_init[0])
    local = threading.local()

    def run(arrays: list) -> bool:
        x, target = arrays[data], arrays[n_in]
        if not (isinstance(x, np.ndarray) and isinstance(target, np.ndarray)):
            if not accumulate:
                target[...] = IDENTITIES[ufunc]
            return False
        mapped = getattr(local, "buffer", None)
        if mapped is None or mapped.shape != x.shape or mapped.dtype != target.dtype:
            mapped = local.buffer = np.empty(x.shape, target.dtype)
        part = mapped[region]
        values = body({x_arg: x[region]}, out=part)
        if values is not None:
            np.copyto(part, values[0], casting="unsafe")
        ins = list(arrays[:n_in])
        ins[data] = mapped
        return reduce(ins, target, accumulate)

    return run
