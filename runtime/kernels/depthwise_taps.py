"""Contractions with a one-element side per matrix product over a small reduction space (a depthwise
convolution: per channel, a window of the data times one weight), which a batched matmul runs badly:
`tap_contraction` computes them tap by tap over loop-space views. (A 2-D depthwise convolution runs
by the native depthwise kernel, `linalg_conv.ConvGeometry.depthwise`, with a built kernel's epilogue and
destination pad inside; this where that kernel cannot, and for other such contractions.)"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir.affine import AffineMap

from xrelay.runtime.kernels.affine_views import LoopView, loop_order, used_loops


MAX_TAPS = 64
"""Window reductions over at most this many points run tap by tap: a contraction (`tap_contraction`)
and a pooling window (`linalg_structured.compile_structured`); a plain reduction (each input's map
one loop per axis: a global average pool's sum, a softmax's) is one `ufunc.reduce`."""


def tap_contraction(maps: Sequence[AffineMap], ranges: Sequence[int], ia: int, ib: int, out: int):
    """`run(ins, out, accumulate) -> bool` computing the contraction `maps[out] += maps[ia] * maps[ib]`
    for the products a batched matmul runs badly: a side of each matrix product is one element (a
    depthwise convolution is, per channel, a window of the data times one weight) and the reduction
    space is small (the window), as one multiply-add over whole loop-space views per point of the
    reduction space. False when the arrays are not all of one float dtype; None when the contraction
    is not of that kind."""
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

    def run(ins: list, target: np.ndarray, accumulate: bool) -> bool:
        a, b = ins[ia], ins[ib]
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and isinstance(target, np.ndarray)
                and a.dtype == b.dtype == target.dtype and a.dtype.kind == "f"):
            return False
        va, vb, vo = (v.transpose(order) for v in (views[0](a), views[1](b), views[2](target, writeable=True)))
        scratch = np.empty(vo.shape, vo.dtype)
        for k, tap in enumerate(taps):
            if k == 0 and not accumulate:
                np.multiply(va[tap], vb[tap], out=vo)
            else:
                np.multiply(va[tap], vb[tap], out=scratch)
                np.add(vo, scratch, out=vo)
        return True

    return run
