"""Elementwise steps of the linalg executor, and fused elementwise tails.

`ChunkedOp`: a structured op that is not a contraction (bias-add, ReLU, fill, pooling) with a
parallel loop whose rows are slices of every operand (outputs index it as `d + c`, inputs as
`k * d + c` plus other loops), which a convolution's epilogue and a pad's copy run by.
`FusedTail`: a chain of such ops each writing over the one before, run as one step: one compiled
call (runtime/native/window_kernels.py) kept while its arrays stay the same, else member by member
on numpy."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xrelay.runtime.kernels.affine_views import linear_form
from xrelay.runtime.parallel.threads import split_parts
from xrelay.runtime.native.window_kernels import chain_views, native_window
from xrelay.runtime.kernels.linalg_structured import Structured, contraction_pair


def split_loop(op: Structured, ranges: Sequence[int], only: int | None = None) -> tuple[int, int] | None:
    """(loop, the axis of the first output that indexes it) for a parallel loop the op can be cut along
    (each operand indexes it in at most one axis: outputs as `d + offset` alone, inputs possibly
    through a window), or None: the first such loop, or with `only`, that loop if it is one (which
    loop a kernel is cut along is `split-kernels`' decision, written in its `split`)."""
    iterators = [str(it.data) for it in op.get_iterator_types()]
    if any(inner.name == "linalg.index" for inner in op.body.walk()):
        return None
    if "reduction" in iterators and any(contraction_pair(op, k) for k in range(len(op.outputs))):
        return None  # contractions split themselves (conv/matmul runners)
    maps = [m.data for m in op.get_indexing_maps()]
    n_in = len(op.inputs)
    for d, size in enumerate(ranges):
        if size < 2 or iterators[d] != "parallel" or (only is not None and d != only):
            continue
        axes = []  # per operand, the axis indexing the loop, or None
        for i, amap in enumerate(maps):
            using = [(axis, linear_form(expr)) for axis, expr in enumerate(amap.results) if d in expr.used_dims()]
            forms = [form for _, form in using]
            if i >= n_in:  # an output: the loop alone, in one axis (else every part would write all of it)
                fits = len(forms) == 1 and forms[0] is not None and forms[0][0] == {d: 1}
            else:  # an input: in at most one axis, possibly through a window
                fits = len(forms) <= 1 and all(f is not None and f[0].get(d, 0) >= 1 and min(f[0].values()) >= 0
                                               for f in forms)
            if not fits:
                break
            axes.append(using[0][0] if using else None)
        else:
            return d, axes[n_in]
    return None


class ChunkedOp:
    """A structured op that runs along one of its loops (see the module docstring): `whole(arrays)`
    runs it, `loop` is that loop and `out_axis` the axis of its output that indexes it."""

    def __init__(self, op: Structured, ranges: Sequence[int], loop: int, out_axis: int, whole: Callable[[list], None]):
        self.op, self.ranges, self.loop, self.out_axis = op, tuple(ranges), loop, out_axis
        self.rows = ranges[loop]
        self.whole = whole
        self.split: int | None = None
        """Its kernel's `split` parts (passes/kernels/split_kernels.py), or None: whole."""
        self.cuttable = True
        """False when its kernel's split names a loop it cannot be cut along: it runs whole."""

    @staticmethod
    def of(op: Structured, whole: Callable[[list], None], loop: int | None = None) -> ChunkedOp | None:
        """The op run along `loop` (its kernel's split loop) when it can be cut along it, else along
        the loop `split_loop` finds, with no split (the kernel named a loop the op cannot be cut along)."""
        try:
            ranges = tuple(op.get_static_loop_ranges())
        except NotImplementedError:
            return None
        found = split_loop(op, ranges, loop)
        named = loop is None or found is not None
        found = found if found is not None else split_loop(op, ranges)
        if found is None:
            return None
        chunked = ChunkedOp(op, ranges, found[0], found[1], whole)
        chunked.cuttable = named
        return chunked


class FusedTail:
    """Chained in-place elementwise ops run as one step (see the module docstring).

    Members are added as they are compiled; `prepare(env)` of a member gives its operand arrays
    (reading the slot the previous member's result will occupy, bound before anything runs, since
    every member writes in place) and `finish(env, arrays)` binds its results."""

    def __init__(self, first: ChunkedOp, prepare: Callable, finish: Callable):
        self.members = [(first, prepare, finish)]
        self.rows, self.split = first.rows, first.split
        self.kept: tuple[list, Callable[[int], None] | None] | None = None
        """(each member's operand arrays of the last run, their compiled call (`native_tail`) given a
        thread count, or None: numpy), made once per set of arrays."""

    def accepts(self, chunked: ChunkedOp) -> bool:
        last = self.members[-1][0]
        return chunked.ranges == last.ranges and chunked.loop == last.loop

    def add(self, chunked: ChunkedOp, prepare: Callable, finish: Callable) -> None:
        self.members.append((chunked, prepare, finish))

    def __call__(self, env: list) -> None:
        prepared = []
        for chunked, prepare, finish in self.members:
            prepared.append((chunked, prepare(env)))
            finish(env, prepared[-1][1])  # in place: the results are the out buffers, bound before running
        kept = self.kept
        if kept is None or any(len(arrays) != len(before) or any(a is not b for a, b in zip(arrays, before))
                               for (_, arrays), before in zip(prepared, kept[0])):
            kept = self.kept = ([arrays for _, arrays in prepared], native_tail(prepared))
        if kept[1] is None:  # numpy: each member whole, in order
            for chunked, arrays in prepared:
                chunked.whole(arrays)
            return
        kept[1](split_parts(self.split))  # one compiled call, split into the kernel's parts in C


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
