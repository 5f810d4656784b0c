"""Contractions with a one-element side per matrix product over a small reduction space (a depthwise
convolution: per channel, a window of the data times one weight), which a batched matmul runs badly:
`tap_contraction` computes them tap by tap over whole loop-space views, or as one einsum over the window
view when the output's innermost loop is long and contiguous (channels-last)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.ir.affine import AffineMap

from xrelay.runtime.kernels.affine_views import LoopView, loop_order, used_loops
from xrelay.runtime.kernels.depthwise import RowsRunner, einsum_again, float_arrays, kept_entry
from xrelay.runtime.native.conv_kernels import native_taps


MAX_TAPS = 64
"""Window reductions over at most this many points run tap by tap: a contraction (`tap_contraction`)
and a pooling window (`linalg_structured.compile_structured`); a plain reduction (each input's map
one loop per axis: a global average pool's sum, a softmax's) is one `ufunc.reduce`."""
EINSUM_MIN_INNER = 16
"""`tap_contraction` runs as one einsum when the output's innermost loop is at least this long and
contiguous in every operand (measured on ShuffleNet's depthwise convs in NHWC)."""


def tap_contraction(maps: Sequence[AffineMap], ranges: Sequence[int], ia: int, ib: int, out: int,
                    reuse_views: Sequence[bool] = (False,)):
    """`run(ins, out, accumulate) -> bool` computing the contraction `maps[out] += maps[ia] * maps[ib]`
    as one multiply-add over whole loop-space views per point of its reduction space, for the
    products a batched matmul runs badly: a side of each matrix product is one element (a
    depthwise convolution is, per channel, a window of the data times one weight) and the
    reduction space is small (the window); with the native kernels built, as one call to
    `native_taps`. False when the arrays are not all of one float dtype;
    None when the contraction is not of that kind. While `reuse_views[0]` (a planned program) the
    einsum form keeps the views made for the last call's arrays for the next call with the same arrays,
    and then runs over ranges of its output's first loop of more than one point (`RowsRunner.rows`:
    the output's rows, channels-last; each output point is its own sum)."""
    used_a, used_b, used_o = used_loops(maps[ia]), used_loops(maps[ib]), used_loops(maps[out])
    reduction = [d for d in range(len(ranges)) if d not in used_o]
    if not reduction or any(d not in used_a or d not in used_b for d in reduction):
        return None
    if len(used_o) + len(reduction) != len(ranges):
        return None
    size = lambda loops: int(np.prod([ranges[d] for d in loops], dtype=np.int64))  # noqa: E731
    if size(reduction) > MAX_TAPS or min(size(used_a - used_b), size(used_b - used_a)) != 1:
        return None
    views = [LoopView(maps[i], ranges) for i in (ia, ib, out)]
    if not all(v.linear for v in views):
        return None
    # Loop axes in the output's memory order (numpy's loops run fastest along the last axis).
    order = loop_order(maps[out]) + reduction
    position = {d: i for i, d in enumerate(order)}
    taps = []
    for point in np.ndindex(*(ranges[d] for d in reduction)):
        index = [slice(None)] * len(ranges)
        for d, t in zip(reduction, point):
            index[position[d]] = slice(t, t + 1)
        taps.append(tuple(index))

    # For einsum: each view without the loops its operand does not use, and their subscripts.
    letters = "abcdefghijklmnopqrstuvwxyz"[:len(order)]
    squeeze = [tuple(slice(None) if d in used else 0 for d in order) for used in (used_a, used_b, used_o)]
    subscripts = ",".join("".join(x for x, d in zip(letters, order) if d in used) for used in (used_a, used_b))
    subscripts += "->" + "".join(x for x, d in zip(letters, order) if d in used_o)
    # The output's innermost loop of more than one point, in `order`.
    inner = max((i for i, d in enumerate(order[:len(used_o)]) if ranges[d] > 1), default=0)
    # The loop `rows` splits (the output's outermost of more than one point), its axis in each einsum operand.
    split = next((d for d in order[:len(used_o)] if ranges[d] > 1), None)
    cuts = [[d for d in order if d in used].index(split) if split in used else None
            for used in (used_a, used_b, used_o)]

    last: list = [None]  # (a, b, target, einsum operands, einsum output) of the last einsum call
    last_native: list = [None]  # (a, b, target, accumulate, the native call) of the last native call

    def run(ins: list, target: np.ndarray, accumulate: bool) -> bool:
        a, b = ins[ia], ins[ib]
        if not accumulate and einsum_again(last, subscripts, ins, ia, ib, target):
            return True
        if not float_arrays(a, b, target):
            return False
        kept = last_native[0]
        if kept is not None and kept[0] is a and kept[1] is b and kept[2] is target and kept[3] == accumulate:
            return kept[4]()
        va, vb, vo = (v.transpose(order) for v in (views[0](a), views[1](b), views[2](target, writeable=True)))
        call = native_taps([va, vb, vo], len(used_o), inner, accumulate)
        if call is not None and call():
            if reuse_views[0]:  # the same arrays next run: the same call
                last_native[0] = (a, b, target, accumulate, call)
            return True
        if vo.shape[inner] >= EINSUM_MIN_INNER and all(v.strides[inner] == v.itemsize for v in (va, vb, vo)):
            # Channels-last depthwise: einsum's one pass over the window view, its inner loop along
            # the channels every operand has contiguous, is 2-3.5x faster than a pass per tap;
            # channels-first, its inner loop would run over the window (3x slower than taps).
            operands = (va[squeeze[0]], vb[squeeze[1]])
            if accumulate:
                vo[squeeze[2]] += np.einsum(subscripts, *operands)
            else:
                np.einsum(subscripts, *operands, out=vo[squeeze[2]])
                if reuse_views[0]:  # views only: the same arrays give the same views next run
                    last[0] = (a, b, target, operands, vo[squeeze[2]])
            return True
        scratch = np.empty(vo.shape, vo.dtype)
        for k, tap in enumerate(taps):
            if k == 0 and not accumulate:
                np.multiply(va[tap], vb[tap], out=vo)
            else:
                np.multiply(va[tap], vb[tap], out=scratch)
                np.add(vo, scratch, out=vo)
        return True

    parts: list = [None, None]  # the entry of `last` that `part` was made for, and `part`

    def rows(ins: list, target: np.ndarray) -> tuple[Callable[[int, int], None], int] | None:
        entry = kept_entry(last, ins, ia, ib, target)
        if split is None or entry is None:
            return None
        if parts[0] is not entry:
            (x, k), y = entry[3], entry[4]

            def cut(view: np.ndarray, axis: int | None, r0: int, r1: int) -> np.ndarray:
                return view if axis is None else view[(slice(None),) * axis + (slice(r0, r1),)]

            def part(r0: int, r1: int) -> None:
                if r0 == 0 and r1 == ranges[split]:
                    np.einsum(subscripts, x, k, out=y)
                else:
                    np.einsum(subscripts, cut(x, cuts[0], r0, r1), cut(k, cuts[1], r0, r1), out=cut(y, cuts[2], r0, r1))

            parts[:] = entry, part
        return parts[1], ranges[split]

    return RowsRunner(run, rows)
