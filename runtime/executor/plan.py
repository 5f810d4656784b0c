"""Elementwise steps of the linalg executor split over worker threads, and fused elementwise tails.

`ChunkedOp` runs a structured op that is not a contraction (bias-add, ReLU, residual add, fill,
pooling) over parts of one parallel loop, one part per worker thread, so the work between two GEMMs
no longer runs on one core while the other waits. The loop split is one that every output indexes
as `d + c` only and every input as `k * d + c` plus other loops (a pooling window): a part is then a
slice of each operand. The body must not read `linalg.index`; each part length gets its own
`compile_structured` program.

`FusedTail` is a chain of such ops each writing over the previous one's result (what follows a
convolution: bias-add, then ReLU, then the residual add): it runs as one step, each worker taking
its part of the rows through the whole chain while they are in cache, instead of one full pass over
the activation per op. A tail that runs whole (too small to split) and whose members are each one
ufunc keeps, in a planned program, the ufunc calls it made while its arrays stay the same: a run
then makes no views and looks nothing up for it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from xrelay.runtime.kernels.affine_views import linear_form
from xrelay.runtime.parallel.threads import decide_split, run_parts, split_threads
from xrelay.runtime.native.window_kernels import chain_views, native_window
from xrelay.runtime.kernels.linalg_structured import Structured, compile_structured, contraction_pair

MIN_SPLIT_ELEMENTS = 1 << 18
"""Below this many loop points a step runs whole on the calling thread. Measured by
benchmarks/split_threshold.py (the CPU time a split adds against the work it halves, under load
4.7-7.1): a fused bias-add + ReLU step split over 2 threads costs 60-360 us of extra CPU time (the
parts' Python serialised by the GIL, the worker's wake-up), which pays only from 262144 points;
at 1 << 15 (the earlier value) ShuffleNet, SqueezeNet and Inception v2 ran slower on 2 threads
than on 1."""


SPLIT_LOOP_MIN_ROWS = 4
"""`split_loop` passes over a loop shorter than this for a later one that is long enough (a
channels-first image's 3 channels are too few rows): two parts of at least two rows
(`threads.run_parts`). Not more: a 7x7 stage's rows are the loop its tails run along inside the
convolution's epilogue (runtime/kernels/conv_epilogue.py)."""
LONG_SPLIT_LOOP_MIN_POINTS = 1 << 16
"""... for ops of at least this many loop points (the least that splits in either mode): a smaller
one never splits, and a tail over a 2x2 or 3x3 map keeps its rows, the loop a convolution's epilogue
runs it along."""


def split_loop(op: Structured, ranges: Sequence[int]) -> tuple[int, list[tuple[int, int, int, bool] | None]] | None:
    """(loop, per operand: (axis, coefficient, offset, whether alone) where the operand indexes that
    loop as `coefficient * d + offset` (alone) or with other loops added, or None when it does not
    use it) for a parallel loop the op can be cut along; None if there is none. Outputs must index it
    as `d + offset` alone (the parts write disjoint slices); inputs may read it through a window
    (`d * 2 + kh`: pooling). The first such loop, or the first of at least `SPLIT_LOOP_MIN_ROWS`
    iterations when the first is shorter (ops of `LONG_SPLIT_LOOP_MIN_POINTS`)."""
    iterators = [str(it.data) for it in op.get_iterator_types()]
    if any(inner.name == "linalg.index" for inner in op.body.walk()):
        return None
    if "reduction" in iterators and any(contraction_pair(op, k) for k in range(len(op.outputs))):
        return None  # contractions split themselves (conv/matmul runners)
    maps = [m.data for m in op.get_indexing_maps()]
    n_in = len(op.inputs)
    first, points = None, int(np.prod(ranges, dtype=np.int64))
    for d, size in enumerate(ranges):
        if size < 2 or iterators[d] != "parallel":
            continue
        cuts: list[tuple[int, int, int, bool] | None] = []
        for i, amap in enumerate(maps):
            cut = None
            for axis, expr in enumerate(amap.results):
                if d not in expr.used_dims():
                    continue
                form = linear_form(expr)
                ok = form is not None and (form[0] == {d: 1} if i >= n_in
                                           else form[0].get(d, 0) >= 1 and min(form[0].values()) >= 0)
                if cut is not None or not ok:
                    cut = False
                    break
                cut = (axis, form[0][d], form[1], form[0] == {d: 1})
            if cut is False or (cut is None and i >= n_in):  # every part would write all of it
                break
            cuts.append(cut)
        else:
            if size >= SPLIT_LOOP_MIN_ROWS or points < LONG_SPLIT_LOOP_MIN_POINTS:
                return d, cuts
            first = first or (d, cuts)
    return first


class ChunkedOp:
    """A structured op that can run over parts [r0, r1) of one of its loops (see the module docstring)."""

    def __init__(self, op: Structured, zero_init: Sequence[bool], constant: Sequence[bool], ranges: Sequence[int],
                 loop: int, cuts: list[tuple[int, int] | None], whole: Callable[[list], None]):
        self.op, self.zero_init, self.constant = op, zero_init, constant
        self.ranges, self.loop, self.cuts = tuple(ranges), loop, cuts
        self.rows = ranges[loop]
        self.points = int(np.prod(ranges, dtype=np.int64))
        self.whole = whole
        self.split: int | None = None
        """Its kernel's `split` parts (passes/kernels/split_kernels.py), or None: decided by size."""
        self.programs: dict[int, Callable[[list], None]] = {self.rows: whole}

    @staticmethod
    def of(op: Structured, zero_init, constant, whole) -> ChunkedOp | None:
        try:
            ranges = tuple(op.get_static_loop_ranges())
        except NotImplementedError:
            return None
        found = split_loop(op, ranges)
        if found is None:
            return None
        return ChunkedOp(op, zero_init, constant, ranges, found[0], found[1], whole)

    def run_part(self, arrays: list, r0: int, r1: int) -> None:
        length = r1 - r0
        program = self.programs.get(length)
        if program is None:
            ranges = list(self.ranges)
            ranges[self.loop] = length
            program = self.programs[length] = compile_structured(self.op, self.zero_init, self.constant, ranges)
        if length == self.rows:
            program(arrays)
            return
        parts = list(arrays)
        for i, cut in enumerate(self.cuts):
            if cut is not None:
                axis, coefficient, offset, alone = cut
                stop = r1 + offset if alone else None  # a window reads past coefficient * r1
                index = (slice(None),) * axis + (slice(coefficient * r0, stop),)
                parts[i] = arrays[i][index]
        program(parts)

    def run(self, arrays: list) -> None:
        run_parts(lambda r0, r1: self.run_part(arrays, r0, r1), self.rows,
                  *decide_split(self.split, self.points, MIN_SPLIT_ELEMENTS))


def _call_all(calls: list, threads: int = 1) -> None:
    for ufunc, args, out in calls:
        ufunc(*args, out=out, casting="unsafe")


class FusedTail:
    """Chained in-place elementwise ops run as one step, part by part (see the module docstring).

    Members are added as they are compiled; `prepare(env)` of a member gives its operand arrays
    (reading the slot the previous member's result will occupy, bound before anything runs, since
    every member writes in place) and `finish(env, arrays)` binds its results."""

    def __init__(self, first: ChunkedOp, prepare: Callable, finish: Callable):
        self.members = [(first, prepare, finish)]
        self.rows, self.points, self.split = first.rows, first.points, first.split
        self.bind_once = True
        """Whether a run that ran whole keeps its calls (`_keep`; False once a member is not one ufunc)."""
        self.kept: tuple[list, Callable[[int], None], bool] | None = None
        """(each member's operand arrays, a call of all members over them given a thread count,
        whether that call splits itself) of the last run: its compiled kernel (`native_tail`), or,
        when it ran whole, while `bind_once` and every member is one ufunc call, those calls."""

    def accepts(self, chunked: ChunkedOp) -> bool:
        last = self.members[-1][0]
        return chunked.ranges == last.ranges and chunked.loop == last.loop

    def add(self, chunked: ChunkedOp, prepare: Callable, finish: Callable) -> None:
        self.members.append((chunked, prepare, finish))

    def __call__(self, env: list) -> None:
        prepared = []
        kept = self.kept
        same = kept is not None
        for chunked, prepare, finish in self.members:
            arrays = prepare(env)
            finish(env, arrays)  # in place: the results are the out buffers, bound before running
            if same:
                before = kept[0][len(prepared)]
                same = len(arrays) == len(before) and all(a is b for a, b in zip(arrays, before))
            prepared.append((chunked, arrays))
        split, threads = decide_split(self.split, self.points, MIN_SPLIT_ELEMENTS)
        parts = (threads or split_threads()) if split else 1
        if same and (kept[2] or not split):
            kept[1](parts)
            return
        native = native_tail(prepared)
        if native is not None:  # one compiled call, split into `parts` in C
            native(parts)
            self.kept = ([arrays for _, arrays in prepared], native, True)
            return

        def part(r0: int, r1: int) -> None:
            for chunked, arrays in prepared:
                chunked.run_part(arrays, r0, r1)

        run_parts(part, self.rows, split, threads)
        if self.bind_once and not split:
            self._keep(prepared)

    def _keep(self, prepared: list) -> None:
        """Keep this run's ufunc calls, if every member is one ufunc whose call keeps its views for the
        same arrays (a planned program's); else stop trying."""
        calls = [getattr(chunked.whole, "ufunc_call", None) for chunked, _ in prepared]
        if not all(call is not None and call.keeps_views[0] for call in calls):
            self.bind_once = False
            return
        made = [call(arrays) for call, (_, arrays) in zip(calls, prepared)]  # the views this run made
        self.kept = ([arrays for _, arrays in prepared], functools.partial(_call_all, made), False)


def native_tail(prepared: list) -> Callable[[int], None] | None:
    """`call(threads)` running a tail's members (`(ChunkedOp, arrays)`, as `FusedTail` prepared them)
    as one compiled kernel (runtime/native/window_kernels.py): a pooling alone, or a chain of ufuncs
    each over the one before; None when the kernel is unavailable or the tail is another."""
    if len(prepared) == 1 and getattr(prepared[0][0].whole, "native_call", None) is not None:
        return prepared[0][0].whole.native_call(prepared[0][1])
    calls = [getattr(chunked.whole, "ufunc_call", None) for chunked, _ in prepared]
    if None in calls:
        return None
    views = chain_views([call(arrays) for call, (_, arrays) in zip(calls, prepared)])
    return None if views is None else native_window(views[0], views[1], ops=views[2])
