"""Depthwise (per-channel window) contractions as one einsum whose inner loop runs over a whole row.

A channels-last depthwise convolution `out[h, w, c] += data[h + kh, w + kw, c] * weight[kh, kw, c]`
runs in `depthwise_taps.tap_contraction` as one einsum over the window view, its inner loop along the
channels. numpy's einsum cannot merge the (w, c) axes into one because the weight is broadcast
along w, so the inner loop is only C long and is entered H * W * KH * KW times (7056 times for a
28x28x136 layer). With the weight tiled along w once (it is a constant), the data's and output's
(w, c) axes merge into one axis of W * C elements: data index `(w + kw) * C + c` is the merged index
shifted by `kw * C`. The inner loop then runs W * C long, H * KH * KW times.

Measured (one process alternating the two, ShuffleNet's stride-1 depthwise convs, NHWC): 28x28x136
452 -> 289 us, 14x14x272 156 -> 132 us, 7x7x544 72 -> 74 us. So it is used while C is below
`MAX_CHANNELS` (a long channel loop gains nothing and the tiled weight costs memory).

The merged axis runs over chunks of w: the weight is tiled along one chunk of columns, its tile
(taps x chunk x C) at most `TILE_BYTES`, and the einsum's extra chunk axis reads that tile again for
each chunk, from L1/L2, where a whole-width tile (137 KB for 28x28x136) streamed for every output row.

`DepthwiseStep` is the step of such a convolution, which may split its output rows over threads (the
einsum over a range of h is the same einsum over slices of the merged views). The depthwise convolutions that do not merge (stride 2, `MAX_CHANNELS` or more channels) run as
`depthwise_taps.tap_contraction`'s one einsum over the window view, which splits over output rows
the same way (`RowsRunner`), and get the step too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided
from xdsl.ir.affine import AffineMap

from xrelay.runtime.kernels.affine_views import LoopView, is_bare_permutation, linear_form, loop_order, used_loops
from xrelay.runtime.native.conv_kernels import available as native_available
from xrelay.runtime.parallel.threads import decide_split, run_alone, run_parts

MAX_CHANNELS = 512
"""Below this many channels the merged einsum replaces the per-pixel one (see the module docstring)."""
MIN_SPLIT_MACS = float("inf")
"""A `DepthwiseStep` splits its rows over the worker threads from this many multiply-adds: never in the
thread mode (ShuffleNet's largest, 28x28x136 at 290 us, would pay a 64-69 us hand-off per split)."""
TILE_BYTES = 1 << 16
"""The weight's tile along a chunk of w is at most this big (float32 bytes; whole columns, a divisor of
the width, at least one)."""

Runner = Callable[[list, np.ndarray, bool], bool]


class RowsRunner:
    """A contraction's runner `self(ins, target, accumulate) -> bool` and `rows(ins, target)`: (`part(r0,
    r1)`, the same computation over a range of output rows, the row count) once the runner keeps the
    views of its last call for these arrays, else None."""

    def __init__(self, run: Runner, rows: Callable):
        self.run, self.rows = run, rows

    def __call__(self, ins: list, target: np.ndarray, accumulate: bool) -> bool:
        return self.run(ins, target, accumulate)


def kept_entry(last: list, ins: list, ia: int, ib: int, target) -> tuple | None:
    """`last[0]` (a, b, target, einsum operands, einsum output) when it was made for `ins[ia]`,
    `ins[ib]` and `target`."""
    entry = last[0]
    return entry if entry is not None and entry[0] is ins[ia] and entry[1] is ins[ib] and entry[2] is target \
        else None


def einsum_again(last: list, subscripts: str, ins: list, ia: int, ib: int, target) -> bool:
    """Run the einsum of the last call again if `last[0]` was made for these arrays; whether it ran."""
    entry = kept_entry(last, ins, ia, ib, target)
    if entry is None:
        return False
    np.einsum(subscripts, *entry[3], out=entry[4])
    return True


def float_arrays(a, b, target) -> bool:
    """Whether the operands and the target are numpy arrays of one float dtype."""
    return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and isinstance(target, np.ndarray)
            and a.dtype == b.dtype == target.dtype and a.dtype.kind == "f")


class MergedDepthwise(RowsRunner):
    """`merged_depthwise`'s runner (see there); `chunk`: the columns of w per chunk of its einsum."""

    chunk = 0


def merged_depthwise(maps: Sequence[AffineMap], ranges: Sequence[int], ia: int, ib: int, out: int,
                     constant_inputs: Sequence[bool], reuse_views: Sequence[bool], fallback: Runner) -> Runner | None:
    """`run(ins, target, accumulate) -> bool` for the contraction `maps[out] += maps[ia] * maps[ib]`
    when it is a depthwise window product with a constant weight (see the module docstring), calling
    `fallback` when the arrays' strides do not allow merging; None when the contraction is not of
    that kind. While `reuse_views[0]` (a planned program) the merged views made for the last call's
    arrays are reused when the next call passes the same arrays."""
    rank = len(ranges)
    if not is_bare_permutation(maps[out]):
        return None
    bare = [is_bare_permutation(maps[i]) for i in (ia, ib)]
    if bare == [True, False]:
        data, weight = ib, ia
    elif bare == [False, True]:
        data, weight = ia, ib
    else:
        return None
    if not (weight < len(constant_inputs) and constant_inputs[weight]):
        return None
    used_d, used_k, used_o = used_loops(maps[data]), used_loops(maps[weight]), used_loops(maps[out])
    reduction = set(range(rank)) - used_o
    if not reduction or not reduction <= (used_d & used_k) or (used_d | used_k | used_o) != set(range(rank)):
        return None
    significant = [d for d in loop_order(maps[out]) if ranges[d] > 1]
    if len(significant) < 2:
        return None
    w, c = significant[-2:]
    # The rows a split cuts: a loop of the output and the data, not of the (tiled) weight.
    h = significant[-3] if len(significant) > 2 and significant[-3] in used_d - used_k else None
    if not (c in used_d and c in used_k and w in used_d and w not in used_k) or ranges[c] >= MAX_CHANNELS:
        return None
    # The data must read w with coefficient 1 (stride 1) and c bare, each in one result.
    coefficients = {}
    for expr in maps[data].results:
        form = linear_form(expr)
        if form is None:
            return None
        for d, k in form[0].items():
            if d in (w, c):
                if d in coefficients:
                    return None
                coefficients[d] = (k, len(form[0]))
    if coefficients.get(w, (0,))[0] != 1 or coefficients.get(c) != (1, 1):
        return None

    width, channels = ranges[w], ranges[c]
    taps = int(np.prod([ranges[d] for d in reduction], dtype=np.int64))
    # Columns per chunk: the widest that divides the width with its tile of the weight within TILE_BYTES.
    chunk = max((n for n in range(1, width + 1) if width % n == 0 and n * channels * taps * 4 <= TILE_BYTES),
                default=1)
    views = {i: LoopView(maps[i], ranges) for i in (data, weight, out)}
    letters = "abcdefghijklmnopqrstuvwxyz"
    # Loop `rank` stands for the chunks of w (before w), w then for the merged (w, c) axis of a chunk.
    kept = {i: [e for d in range(rank) if d != c and (d in used or d == w) for e in ((rank, d) if d == w else (d,))]
            for i, used in ((data, used_d), (weight, used_k), (out, used_o))}
    subscripts = (",".join("".join(letters[d] for d in kept[i]) for i in (data, weight))
                  + "->" + "".join(letters[d] for d in kept[out]))

    def merged(view: np.ndarray, operand: int, writeable: bool = False) -> np.ndarray:
        """`view` (loop space) without the c axis, with `rank` standing for the chunks of w and w for
        the merged (w, c) axis of a chunk (the weight's tile: the same for every chunk)."""
        shape = [width // chunk if d == rank else chunk * channels if d == w else view.shape[d]
                 for d in kept[operand]]
        strides = [(0 if operand == weight else chunk * view.strides[w]) if d == rank
                   else view.strides[c] if d == w else view.strides[d] for d in kept[operand]]
        return as_strided(view, shape, strides, writeable=writeable)

    tiled: list = [None, None]  # the weight array seen, its merged tiled form

    def tiled_weight(array: np.ndarray) -> np.ndarray:
        if tiled[0] is not array:
            k = views[weight](array)
            k = np.broadcast_to(k, tuple(chunk if d == w else n for d, n in enumerate(k.shape)))
            order = [d for d in range(rank) if d not in (w, c)] + [w, c]
            copy = np.ascontiguousarray(k.transpose(order)).transpose(np.argsort(order))
            tiled[0], tiled[1] = array, merged(copy, weight)
        return tiled[1]

    last: list = [None]  # (a, b, target, einsum operands, einsum output) of the last call

    def run(ins: list, target: np.ndarray, accumulate: bool) -> bool:
        a, b = ins[data], ins[weight]
        if native_available():  # one C call (`fallback`, the tap contraction, makes it)
            return fallback(ins, target, accumulate)
        if not accumulate and einsum_again(last, subscripts, ins, data, weight, target):
            return True
        if not float_arrays(a, b, target):
            return fallback(ins, target, accumulate)
        x, y = views[data](a), views[out](target, writeable=True)
        if x.strides[w] != channels * x.strides[c] or y.strides[w] != channels * y.strides[c]:
            return fallback(ins, target, accumulate)
        operands = (merged(x, data), tiled_weight(b))
        y = merged(y, out, writeable=True)
        if accumulate:
            y += np.einsum(subscripts, *operands)
            return True
        np.einsum(subscripts, *operands, out=y)
        if reuse_views[0]:  # views only: the same arrays give the same views next run
            last[0] = (a, b, target, operands, y)
        return True

    parts: list = [None, None]  # the kept views `part` was made for, and `part`

    def rows(ins: list, target: np.ndarray) -> tuple[Callable[[int, int], None], int] | None:
        """(`part(r0, r1)`: the einsum of output rows [r0, r1), the row count) when the last call's
        views are kept for these arrays and the output has rows (else None)."""
        entry = kept_entry(last, ins, data, weight, target)
        if h is None or entry is None:
            return None
        if parts[0] is not entry:
            (x, k), y = entry[3], entry[4]
            before_x, before_y = (slice(None),) * kept[data].index(h), (slice(None),) * kept[out].index(h)

            def part(r0: int, r1: int) -> None:
                if r0 == 0 and r1 == ranges[h]:
                    np.einsum(subscripts, x, k, out=y)
                else:
                    np.einsum(subscripts, x[before_x + (slice(r0, r1),)], k, out=y[before_y + (slice(r0, r1),)])

            parts[:] = entry, part
        return parts[1], ranges[h]

    runner = MergedDepthwise(run, rows)
    runner.chunk = chunk
    return runner


class DepthwiseStep:
    """The step of a structured op whose one output is a depthwise convolution run by a `RowsRunner` (a
    `MergedDepthwise` or a tap contraction's einsum, the fast path `compile_structured` took for it)
    with its zero fill dropped:
    `prepare(env)` gives its operand arrays, `run(arrays)` computes it as `compile_structured` does,
    `finish(env, arrays)` binds its result. With the views of the last call kept (a planned program,
    from its first run on) it runs as parts over output rows (`run_parts`); else the whole op runs by `run_alone`."""

    def __init__(self, merged: RowsRunner, run: Callable, prepare: Callable, finish: Callable, n_in: int,
                 macs: int):
        self.merged, self.run, self.prepare, self.finish, self.n_in = merged, run, prepare, finish, n_in
        self.macs = macs
        self.split: int | None = None  # its kernel's `split` parts, or None: decided by size

    @staticmethod
    def of(op, run: Callable, prepare: Callable, finish: Callable, zero_init: Sequence[bool]) -> DepthwiseStep | None:
        merged = getattr(run, "fast_only", None)
        if not (isinstance(merged, RowsRunner) and zero_init and zero_init[0]):
            return None
        macs = int(np.prod(op.get_static_loop_ranges(), dtype=np.int64))
        return DepthwiseStep(merged, run, prepare, finish, len(op.inputs), macs)

    def __call__(self, env: list) -> None:
        arrays = self.prepare(env)
        rows = self.merged.rows(arrays[:self.n_in], arrays[self.n_in])
        if rows is None:
            run_alone(functools.partial(self.run, arrays))
        else:
            run_parts(rows[0], rows[1], *decide_split(self.split, self.macs, MIN_SPLIT_MACS))
        self.finish(env, arrays)
