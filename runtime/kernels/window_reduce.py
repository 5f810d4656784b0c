"""Pooling windows reduced one window axis at a time (separably), whatever the layout.

A body folding one input read through windows `o * s + k * d + c` into its output (`max(x, acc)`,
`x + acc`) is reduced along one window axis, then the other: K_h + K_w - 2 ufunc calls over arrays
no larger than the data instead of K_h * K_w passes, the outermost (contiguous) axis first. A body
folding an elementwise function of its input (LRN's sum of squares) applies it once, then reduces
the windows the same way (`window_program` runs both)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, memref, tensor
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir.affine import AffineMap

from xrelay.runtime.kernels.affine_views import ExecutionError, data_axes, is_bare_permutation
from xrelay.runtime.kernels.body_program import BodyProgram, reduction_combine
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
    # The part of the data the windows read, per data axis (a loop's first `extent` entries).
    region = tuple(slice(0, ranges[a[1]]) if a[0] == "loop"
                   else slice(a[5], a[5] + (ranges[a[1]] - 1) * a[3] + (ranges[a[2]] - 1) * a[4] + 1) for a in axes)
    stages = []  # (axis, [(start, stop, step)] in the region per tap), outermost window axis first
    for axis, a in enumerate(axes):
        if a[0] == "window":
            _, o_loop, k_loop, stride, dilation, _ = a
            stages.append((axis, [(k * dilation, k * dilation + (ranges[o_loop] - 1) * stride + 1, stride)
                                  for k in range(ranges[k_loop])]))
    stages = [s for s in stages if len(s[1]) > 1] + [s for s in stages if len(s[1]) == 1]

    def run(ins: list, target: np.ndarray, accumulate: bool) -> bool:
        x = ins[data]
        if not (isinstance(x, np.ndarray) and isinstance(target, np.ndarray) and x.dtype == target.dtype):
            return False
        result = target.transpose(to_data_order)
        current = x[region]
        for k, (axis, slices) in enumerate(stages):
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
        if len(loops) > 2 or len(windows) > 2 or not (isinstance(x, np.ndarray) and isinstance(target, np.ndarray)):
            return None
        result = target.transpose(to_data_order)
        x = x[region]
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

    run.window_views, run.region = window_views, region
    return run


IDENTITIES = {np.maximum: -np.inf, np.fmax: -np.inf, np.minimum: np.inf, np.fmin: np.inf, np.add: 0.0}
"""The value a reduction's output may start from without changing it (its fill can be dropped)."""


def _mapped_input(op, value, ranges: Sequence[int]) -> tuple[int, BodyProgram] | None:
    """(the index of the one input that `value`, a reduction body's folded value, is an elementwise
    function of, its program): every body op it needs computes per element from that input's block
    argument and body constants (no loop indices, no reads of other operands, no captured values);
    else None."""
    block, n_in = op.body.block, len(op.inputs)
    try:
        body = BodyProgram(block, [value], ranges)
    except ExecutionError:
        return None
    made, args = {result for result, _, _ in body.steps}, set()
    for result, _, operands in body.steps:
        if isinstance(result.owner, linalg.IndexOp | tensor.ExtractOp | memref.LoadOp | arith.IndexCastOp):
            return None  # (they depend on where in the loop space, not only on the element)
        for v in operands:
            if v in block.args[:n_in]:
                args.add(v)
            elif v not in made:
                return None  # an output's or a captured value: the loop space's shape may matter
    return (block.args.index(args.pop()), body) if len(args) == 1 else None


def window_program(op, maps: Sequence[AffineMap], ranges: Sequence[int], reduction: Sequence[int],
                   zero_init: Sequence[bool]) -> Callable[[list], bool] | None:
    """For a reduction whose one output folds `combine(x, acc)` (a pooling) or `combine(f(x), acc)`
    (`f` an elementwise function of one input `x`, `_mapped_input`: LRN's sum of squares over a
    channel window), `combine` one of `IDENTITIES`' ufuncs and `x` read through pooling windows
    (`window_reduction`): a function of the operand arrays running `window_reduction` (True), `f`
    first evaluated once over the part of `x` the windows read, into a per-thread buffer; or
    returning False when it cannot (the caller then runs the general path, which accumulates: an
    output whose fill was dropped, `zero_init[0]`, is first set to the identity). A pooling's also has
    `native_call(arrays)`: `call(threads)` of the compiled window kernel, or None (`native_window`).
    None for any other op."""
    combine = reduction_combine(op, 0) if reduction and len(op.outputs) == 1 else None
    if combine is None or combine[0] not in IDENTITIES:
        return None
    ufunc, value = combine
    block, n_in = op.body.block, len(op.inputs)
    pooling = value in block.args[:n_in]
    mapping = None if pooling else _mapped_input(op, value, ranges)  # (the input, the program of `f`)
    data = block.args.index(value) if pooling else None if mapping is None else mapping[0]
    reduce = None if data is None else window_reduction(maps, ranges, reduction, data, n_in, ufunc)
    if reduce is None:
        return None
    accumulate = not (zero_init and zero_init[0])
    mapped = None if pooling else _mapping(mapping[1], block.args[data], reduce.region)

    def run(arrays: list) -> bool:
        ins = arrays[:n_in]
        if mapped is not None and isinstance(ins[data], np.ndarray) and isinstance(arrays[n_in], np.ndarray):
            ins[data] = mapped(ins[data], arrays[n_in].dtype)
        if reduce(ins, arrays[n_in], accumulate):
            return True
        if not accumulate:
            arrays[n_in][...] = IDENTITIES[ufunc]
        return False

    def native_call(arrays: list):
        views = reduce.window_views(arrays[:n_in], arrays[n_in])
        return None if views is None else native_window(views[0], views[1], views[2], ufunc, accumulate)

    if pooling:
        run.native_call = native_call
    return run


def _mapping(body: BodyProgram, x_arg, region: tuple) -> Callable:
    """`mapped(x, dtype)`: a per-thread buffer of `x`'s shape holding `body`'s value (an elementwise
    function of block argument `x_arg`) over `region`, the part of `x` the windows read."""
    local = threading.local()

    def mapped(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
        buffer = getattr(local, "buffer", None)
        if buffer is None or buffer.shape != x.shape or buffer.dtype != dtype:
            buffer = local.buffer = np.empty(x.shape, dtype)
        part = buffer[region]
        values = body({x_arg: x[region]}, out=part)
        if values is not None:
            np.copyto(part, values[0], casting="unsafe")
        return buffer

    return mapped
