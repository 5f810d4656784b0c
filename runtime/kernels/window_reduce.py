"""Pooling windows reduced one window axis at a time (separably), whatever the layout.

A structured op whose body folds one input into its output (`yield max(x, acc)`, `yield x + acc`)
and whose input map reads windows `o * s + k * d + c` (pooling, in NCHW or NHWC) is reduced by
`compile_structured` one tap at a time: a 3x3 max pool is nine passes over the output, each
through a strided view of the data. Reduced along one window axis and then the other, it is
K_h + K_w - 2 ufunc calls over arrays no larger than the data: `max_h(max_w(x))`. The outermost
window axis (H in NHWC and NCHW) goes first: its taps are whole contiguous rows, and the next stage
reads an array already `s` times shorter.

A body that folds an elementwise function of its input instead (`yield f(x) + acc`: LRN's sum of
squares over a channel window) applies `f` once over the input, then reduces the windows the same
way (`mapped_window_program`).
"""

from __future__ import annotations

import bisect
import functools
import threading
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, memref, tensor
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import OpResult
from xdsl.ir.affine import AffineDimExpr, AffineMap

from xrelay.runtime.kernels.affine_views import ExecutionError, is_bare_permutation, window_form
from xrelay.runtime.kernels.body_program import BodyProgram, body_op_fn, depends_on


def window_axes(data_map: AffineMap, out_map: AffineMap, reduction: Sequence[int]):
    """Per data axis, ("loop", loop) for a bare parallel loop of the output or ("window", output
    loop, kernel loop, stride, dilation, offset); None unless every reduction loop is the kernel
    loop of exactly one window and every output loop is read by exactly one data axis."""
    out_loops = [e.position for e in out_map.results]
    axes, kernels, outs = [], [], []
    for expr in data_map.results:
        if isinstance(expr, AffineDimExpr):
            if expr.position not in out_loops:
                return None
            axes.append(("loop", expr.position))
            outs.append(expr.position)
            continue
        window = window_form(expr, out_loops, reduction)
        if window is None:
            return None
        axes.append(("window", *window))
        outs.append(window[0])
        kernels.append(window[1])
    if sorted(kernels) != sorted(reduction) or sorted(outs) != sorted(out_loops):
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

    return run


IDENTITIES = {np.maximum: -np.inf, np.fmax: -np.inf, np.minimum: np.inf, np.fmin: np.inf, np.add: 0.0}
"""The value a reduction's output may start from without changing it (its fill can be dropped)."""


def pooling_reducer(op, reducers: dict) -> tuple[int, np.ufunc] | None:
    """(input index, ufunc) when `op` has one output and its body is only `yield combine(x, acc)`:
    x that input's block argument, acc the output's, `combine` in `reducers`; else None."""
    block = op.body.block
    n_in = len(op.inputs)
    ops = list(block.ops)
    if len(op.outputs) != 1 or len(ops) != 2:
        return None
    combine, yielded = ops
    if type(combine) not in reducers or list(yielded.operands) != [combine.results[0]]:
        return None
    acc = block.args[n_in]
    operands = list(combine.operands)
    if acc not in operands or len(operands) != 2:
        return None
    x = operands[1] if operands[0] is acc else operands[0]
    if x not in block.args[:n_in]:
        return None
    return block.args.index(x), reducers[type(combine)]


def starts_from_identity(op, value: float, reducers: dict) -> bool:
    """Whether `op` is a pooling that `pooling_program` runs and `value` is its reduction's identity:
    a fill of `value` before it may be dropped (the window reduction then writes its output)."""
    found = pooling_reducer(op, reducers)
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
                    reducers: dict, zero_init: Sequence[bool]) -> Callable[[list], bool] | None:
    """For a pooling (`pooling_reducer`, `window_reduction`): a function of the operand arrays
    running `window_reduction` (True), or returning False when it cannot (the caller then runs the
    general path, which accumulates: an output whose fill was dropped, `zero_init[0]`, is first
    set to the identity). None for any other op."""
    found = pooling_reducer(op, reducers)
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

    return run


def reduction_calls(ufunc: np.ufunc, into: np.ndarray, taps: list[tuple[bool, np.ndarray, np.ndarray]]) -> list:
    """The calls (of no arguments) that make `into` the reduction by `ufunc` of window taps `(covers
    every position, slice of into, view)`: two taps that cover every position in one ufunc call (one:
    a copy; none: the identity first), then each other tap in place on the positions where it lands."""
    taps = sorted(taps, key=lambda t: not t[0])
    if len(taps) >= 2 and taps[1][0]:
        calls = [functools.partial(ufunc, taps[0][2], taps[1][2], out=into)]
        taps = taps[2:]
    elif taps and taps[0][0]:
        calls = [functools.partial(np.copyto, into, taps[0][2])]
        taps = taps[1:]
    else:
        calls = [functools.partial(into.fill, IDENTITIES[ufunc])]
    return calls + [functools.partial(ufunc, part, view, out=part) for _, part, view in taps]


class ClippedPooling:
    """A pooling (`pooling_reducer`, `window_axes`) whose data is a pad of `source` by `low` on each
    data axis with the reduction's identity, computed from the unpadded source: each window tap
    reduces only the output positions where it lands inside the source (a tap in the border adds
    the identity, which changes nothing), so the padded copy is never made.

    `rows(source, target, o0, o1)` writes output positions [o0, o1) along the outermost window axis
    (`row_axis` of the data, `row_loop` of the loops); `within(r0, r1)` gives the output rows whose
    windows lie within source rows [r0, r1) along that axis, and `progress` a `PoolingProgress`."""

    def __init__(self, axes: list, ranges: Sequence[int], to_data_order: list[int], low: Sequence[int],
                 source_shape: Sequence[int], ufunc: np.ufunc):
        self.axes, self.to_data_order, self.ufunc = axes, to_data_order, ufunc
        self.low, self.source_shape = tuple(low), tuple(source_shape)
        windows = [axis for axis, a in enumerate(axes) if a[0] == "window"]
        self.row_axis = windows[0]
        self.row_loop = axes[self.row_axis][1]
        self.rows_out = ranges[self.row_loop]
        self.stages = []  # (axis, output length, [(tap, first source index)] per tap)
        for axis in windows:
            _, o_loop, k_loop, stride, dilation, offset = axes[axis]
            start = [k * dilation + offset - self.low[axis] for k in range(ranges[k_loop])]
            self.stages.append((axis, ranges[o_loop], stride, start))
        # Per output row, the first and the end source row of its window clipped to the source (a
        # window wholly in the padding: empty at the top or the bottom), widened so that neither
        # decreases with the row (a dilated window's first tap inside can go back one row when the
        # window moves down), so the rows within a range of source rows are one run (`within`).
        _, length, stride, start = self.stages[0]
        n = self.source_shape[self.row_axis]
        lows, highs = [], []
        for o in range(length):
            taps = [o * stride + s for s in start]
            inside = [t for t in taps if 0 <= t < n]
            edge = n if min(taps) >= n else 0
            lows.append(min(inside, default=edge))
            highs.append(max(inside, default=edge - 1) + 1)
        for o in range(length - 2, -1, -1):
            lows[o] = min(lows[o], lows[o + 1])
        for o in range(1, length):
            highs[o] = max(highs[o], highs[o - 1])
        self.spans = (lows, highs)

    @staticmethod
    def of(op, reducers: dict, low: Sequence[int], source_shape: Sequence[int], fill: float) -> ClippedPooling | None:
        """The pooling `op` over a pad of `source_shape` by `low` with `fill`, or None when `op` is not a
        pooling `window_reduction` runs, `fill` is not its reduction's identity, its output does not
        start from that identity (a fill kept before it: it accumulates), or the pad also widens an
        axis the windows do not slide along."""
        found = pooling_reducer(op, reducers)
        if found is None or IDENTITIES.get(found[1]) != fill:
            return None
        data, ufunc = found
        maps = [m.data for m in op.get_indexing_maps()]
        out = len(op.inputs)
        iterators = [str(it.data) for it in op.get_iterator_types()]
        reduction = [i for i, it in enumerate(iterators) if it == "reduction"]
        try:
            ranges = op.get_static_loop_ranges()
        except NotImplementedError:
            return None
        if window_reduction(maps, ranges, reduction, data, out, ufunc) is None:
            return None
        axes = window_axes(maps[data], maps[out], reduction)
        if len(low) != len(axes) or len(source_shape) != len(axes):
            return None
        for axis, a in enumerate(axes):
            if a[0] == "loop" and (low[axis] != 0 or source_shape[axis] != ranges[a[1]]):
                return None
        out_loops = [e.position for e in maps[out].results]
        return ClippedPooling(axes, ranges, [out_loops.index(a[1]) for a in axes], low, source_shape, ufunc)

    def within(self, r0: int, r1: int) -> tuple[int, int]:
        """The output rows [o0, o1) whose windows, clipped to the source, lie within source rows
        [r0, r1) (o1 <= o0 when there are none)."""
        lows, highs = self.spans
        return bisect.bisect_left(lows, r0), bisect.bisect_right(highs, r1)

    def progress(self, source: np.ndarray, target: np.ndarray) -> PoolingProgress:
        """A `PoolingProgress` computing this pooling from `source` into `target` as source rows finish."""
        return PoolingProgress(self, source, target)

    def rows(self, source: np.ndarray, target: np.ndarray, o0: int, o1: int) -> None:
        """Output rows [o0, o1) of `target` (the pooling's output) from `source`, one window axis at a
        time as `window_reduction` does: the taps that land inside the source for every output position
        first (two of them: one ufunc call), then each other tap on the positions where it lands inside."""
        for call in self.calls(source, target, o0, o1):
            call()

    def calls(self, source: np.ndarray, target: np.ndarray, o0: int, o1: int) -> list:
        """The calls (of no arguments) that `rows` makes, in order, with their intermediate arrays made
        here: the same calls compute those rows again while `source` and `target` are the same arrays."""
        if o1 <= o0:
            return []
        made = []
        rows = (slice(None),) * self.row_axis + (slice(o0, o1),)
        current = source
        for k, (axis, length, stride, start) in enumerate(self.stages):
            lo, hi = (o0, o1) if k == 0 else (0, length)
            n = current.shape[axis]
            before = (slice(None),) * axis
            if k == len(self.stages) - 1:
                into = target.transpose(self.to_data_order)[rows]
            else:
                shape = list(current.shape)
                shape[axis] = hi - lo
                into = np.empty(shape, current.dtype)
            taps = []  # (covers every position, slice of into, view of current)
            for first in start:
                a, b = max(lo, -(first // stride)), min(hi, (n - 1 - first) // stride + 1)
                if b > a:
                    begin = a * stride + first
                    view = current[before + (slice(begin, begin + (b - a - 1) * stride + 1, stride),)]
                    taps.append(((a, b) == (lo, hi), into[before + (slice(a - lo, b - lo),)], view))
            made += reduction_calls(self.ufunc, into, taps)
            current = into
        return made


class PoolingProgress:
    """A `ClippedPooling` of a source whose rows are finished block by block, in any order and on
    several threads at once (the row blocks of a convolution's parts): `finished(r0, r1)`, called
    once source rows [r0, r1) are final, computes there and then the output rows that block
    completes, the windows of the rows where two blocks meet once both are done; each output row is
    computed once. `unclaimed()` hands out the rows no call has computed (all of them when no block
    was reported), for the caller to compute after."""

    def __init__(self, pool: ClippedPooling, source: np.ndarray, target: np.ndarray):
        self.pool, self.source, self.target = pool, source, target
        self.lock = threading.Lock()
        self.done: list[list[int]] = []  # disjoint sorted [start, end) runs of finished source rows
        self.claimed = [False] * pool.rows_out

    def finished(self, r0: int, r1: int) -> None:
        with self.lock:
            runs = self.done
            k = bisect.bisect_left(runs, [r0])
            if k > 0 and runs[k - 1][1] >= r0:  # joins the run before
                k -= 1
                runs[k][1] = max(runs[k][1], r1)
            else:
                runs.insert(k, [r0, r1])
            while k + 1 < len(runs) and runs[k + 1][0] <= runs[k][1]:  # and the runs after
                runs[k][1] = max(runs[k][1], runs.pop(k + 1)[1])
            ranges = self._claim(*self.pool.within(*runs[k]))
        for o0, o1 in ranges:
            self.pool.rows(self.source, self.target, o0, o1)

    def unclaimed(self) -> list[tuple[int, int]]:
        with self.lock:
            return self._claim(0, self.pool.rows_out)

    def _claim(self, o0: int, o1: int) -> list[tuple[int, int]]:
        """The runs of rows in [o0, o1) nobody has claimed, now claimed (under the lock)."""
        ranges, claimed = [], self.claimed
        o = o0
        while o < o1:
            if claimed[o]:
                o += 1
                continue
            start = o
            while o < o1 and not claimed[o]:
                claimed[o] = True
                o += 1
            ranges.append((start, o))
        return ranges


def _mapped_input(op, value, reducers: dict) -> int | None:
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
                          reducers: dict, zero_init: Sequence[bool]) -> Callable[[list], bool] | None:
    """For a reduction whose one output folds `combine(f(x), acc)` (`combine` in `reducers`, `f` an
    elementwise function of one input `x`, `_mapped_input`) with `x` read through pooling windows
    (`window_reduction`): a function of the operand arrays that evaluates `f` once over the part of
    `x` the windows read, into a per-thread buffer, then reduces its windows with `window_reduction`
    (True); False when the operands are not numpy arrays (the caller runs the general path, which
    accumulates: an output that was to be written whole is first set to the identity). None for any
    other op. LRN's sum of squares over 5 channels of
    1x55x55x192 (Inception v1): 12-19 ms over the 5-D loop space, ~2 ms so."""
    if not reduction or len(op.outputs) != 1:
        return None
    block = op.body.block
    n_in = len(op.inputs)
    acc = block.args[n_in]
    combine = block.last_op.operands[0].owner
    if type(combine) not in reducers or len(combine.operands) != 2 or acc not in combine.operands:
        return None
    lhs, rhs = combine.operands
    value = rhs if lhs is acc else lhs
    if value is acc or depends_on(value, {acc}):
        return None
    data = _mapped_input(op, value, reducers)
    ufunc = reducers[type(combine)]
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
