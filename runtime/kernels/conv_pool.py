"""A convolution and the pooling of its padded result computed together, a few output rows at a time.

ResNet's stem is a 7x7/2 convolution of 3 channels to 112x112x64, then a 3x3/2 max pool (pad 1)
of its result (the bias and ReLU follow the pool: passes/max_pool_first.py). As im2col + GEMM the
convolution writes a 7.4 MB patch matrix and a 3.2 MB result, and the pooling reads the result
back: each pass goes out of cache. `BlockedConvPool` instead computes a block of the convolution's
output rows (`BLOCK_BYTES` of patches) into a small buffer and pools the output rows whose windows
those rows complete, keeping the rows the next windows still need (`window - stride` of them) for
the next block: everything stays in cache, and the convolution's result is never written (its only
reader is the pad that the pooling replaces, `conv_epilogue._fuse_pool`, or the pooling itself when it
reads the result unpadded: SqueezeNet's and Inception v1's stems). Not for a convolution computed by
Winograd: its per-row GEMMs do 2.25-4x Winograd's multiply-adds; nor a 1x1 stride-1 one, whose data
is its patch matrix, one GEMM in place (`conv_epilogue._fuse_pool`).

No patch matrix is copied. Channels-last, a kernel row's (kw, c) is one contiguous run of an input
row (21 floats for the stem), so the block's input rows are copied once into *strips*: per output
column, the runs of every input row one after the other. Output row r's patches (kh runs each) are
then contiguous in the strips, output row r + 1's start `stride` runs later, and the patch matrices
of all rows of the block are one strided view of the strips, multiplied by one batched matmul
(a GEMM per output row): a 3.4x smaller copy (each run copied once instead of once per kernel row
that reads it), in 3.4x fewer numpy inner loops.

Pooling along the width reads every `stride`-th pixel of a row: with 64 channels, runs of 64
floats, one numpy inner loop each. So the strips (and so the convolution's rows) hold each row's
pixels by phase (all pixels `ow % stride == 0`, then `== 1`, ...); each window tap along the width
is then one contiguous run of the row (pixels `j * stride + tap`, j = 0, 1, ...).

Split over threads (or the two processes of runtime/parallel/spmd.py) by rows of the pooled output, each
part computing the convolution rows its windows read: where two parts meet, `window - stride`
rows are computed twice (one row of 112 for the stem). Each thread plans its part's numpy calls on
its own buffers once (`_plan`) and replays them on every run.
"""

from __future__ import annotations

import bisect
import functools
import threading
from collections.abc import Sequence

import numpy as np

from xrelay.runtime.kernels.linalg_conv import MIN_SPLIT_MACS, PROCESSES_MIN_SPLIT_MACS, ConvGeometry
from xrelay.runtime.parallel.threads import run_parts, worth_splitting
from xrelay.runtime.kernels.window_reduce import ClippedPooling, reduction_calls

BLOCK_BYTES = 1 << 20
"""Bytes of patch matrix (views of the strips, a third of that copied) per block of convolution rows:
15 of the stem's 112 rows, whose strips, results and half-pooled rows (1 MB) stay in a core's L2
cache (2 MB here). Measured on the stem, step time with/without, one thread, alternating: 2^18
0.73, 2^19 0.67, 2^20 0.66, 2^21 0.68, 2^22 0.76."""

SMALL_GEMM_MACS = 1_000_000
"""A convolution row's GEMM of more multiply-adds than this runs as GEMMs of equal column chunks of
at most this many. OpenBLAS's SkylakeX kernels (used on this Sapphire Rapids VM)
multiply matrices of at most 100^3 multiply-adds without packing them (its small-matrix kernels); a
packed GEMM of the stem's row, 112 x 147 @ 147 x 64 (1.05 M), copies the patches once more. Measured
alone (one thread, per 112 output columns): 31 us as one GEMM of 112 rows, 26 us as two of 56 (or
one of 104, 96, 64, 48, 32)."""


def column_chunks(columns: int, macs_per_column: int) -> list[tuple[int, int]]:
    """[c0, c1) ranges cutting `columns` into the fewest near-equal chunks of at most `SMALL_GEMM_MACS`
    multiply-adds each (one column per chunk at least)."""
    pieces = -(-columns // max(1, SMALL_GEMM_MACS // macs_per_column))
    bounds = [i * columns // pieces for i in range(pieces + 1)]
    return list(zip(bounds[:-1], bounds[1:]))


class BlockedConvPool:
    """`run(ins, result, target) -> bool`: the convolution `geometry` of `ins` and the pooling `pool`
    of its result (as if padded), written into `target`; `result` is not written. False, having
    done nothing, when the arrays do not fit (not one float dtype, the data or the pooled output not
    channels-last); the caller then runs both as before."""

    def __init__(self, geometry: ConvGeometry, pool: ClippedPooling, constant_weight: bool,
                 reuse_views: Sequence[bool]):
        self.geometry, self.pool = geometry, pool
        self.constant_weight, self.reuse_views = constant_weight, reuse_views
        _, _, self.row_stride, self.row_taps = pool.stages[0]  # (axis, length, stride, first source row per tap)
        _, _, self.col_stride, self.col_taps = pool.stages[1]
        self.last: tuple | None = None  # (data, weight, target, prepared) of the last call
        self.scratch = threading.local()

    @staticmethod
    def of(geometry: ConvGeometry, pool: ClippedPooling, accumulate: bool, constant_weight: bool,
           reuse_views: Sequence[bool] = (False,)) -> BlockedConvPool | None:
        """The blocked form of a convolution step and its fused pooling, or None when it does not
        apply: an accumulating convolution, or a pooling with windows on other axes than the
        convolution's output rows and columns (two windows, rows first)."""
        if accumulate or len(pool.stages) != 2:
            return None
        if (pool.stages[0][0], pool.stages[1][0]) != (geometry.out_axes[2], geometry.out_axes[3]):
            return None
        return BlockedConvPool(geometry, pool, constant_weight, reuse_views)

    def __call__(self, ins: list, result: np.ndarray, target: np.ndarray) -> bool:
        g = self.geometry
        data, weight = ins[g.data], ins[g.weight]
        last = self.last
        if last is not None and last[0] is data and last[1] is weight and last[2] is target:
            prepared = last[3]
        else:
            if not all(isinstance(a, np.ndarray) for a in (data, weight, result, target)):
                return False
            if not (data.dtype == weight.dtype == result.dtype == target.dtype and data.dtype.kind == "f"):
                return False
            prepared = self._prepare(data, weight, result, target)
            if prepared is None:
                return False
            if self.reuse_views[0]:  # views only: the same arrays give the same views next run
                self.last = (data, weight, target, prepared)
        self._matrix(weight, prepared)
        run_parts(functools.partial(self._part, prepared), self.pool.rows_out,
                  worth_splitting(prepared["macs"], MIN_SPLIT_MACS, PROCESSES_MIN_SPLIT_MACS))
        return True

    def _prepare(self, data: np.ndarray, weight: np.ndarray, result: np.ndarray, target: np.ndarray) -> dict | None:
        """The views of one call's arrays, or None when the data's pixels are not packed channels-last
        (or the pooled output's channels not contiguous), or the convolution is dilated."""
        g = self.geometry
        x = data.transpose(g.data_axes)[:, :, g.offset[0]:, g.offset[1]:]  # N, C, H, W
        w = weight.transpose(g.weight_axes)  # F, C, KH, KW
        n, f, oh, ow = result.transpose(g.out_axes).shape
        _, c, kh, kw = w.shape
        # The pooled output as N, OH', OW', F (its axes are the result's).
        pooled = target.transpose(self.pool.to_data_order).transpose(
            (g.out_axes[0], g.out_axes[2], g.out_axes[3], g.out_axes[1]))
        sn, sc, sh, sw = x.strides
        if sc != x.itemsize or sw != c * sc or pooled.strides[3] != pooled.itemsize or g.dilation != (1, 1):
            return None
        s_oh, s_ow = g.strides
        run = kw * c  # a kernel row's (kw, c) in one input row: contiguous
        # Per image, per phase of the columns: (first column of the phase in the strips, columns,
        # the runs of every input row as (columns, H, run)); one view of all phases (P, OW / P, H,
        # run) when they are equally long.
        p = self.col_stride
        counts = [len(range(q, ow, p)) for q in range(p)]
        offsets = np.cumsum([0, *counts])[:-1].tolist()
        height = (oh - 1) * s_oh + kh
        strided = np.lib.stride_tricks.as_strided
        phases = []
        for i in range(n):
            if ow % p == 0:
                phases.append([(0, ow, strided(x[i], (p, ow // p, height, run), (sw * s_ow, sw * s_ow * p, sh, sc),
                                               writeable=False))])
            else:
                phases.append([(start, count, strided(x[i, :, :, q * s_ow:], (count, height, run),
                                                      (sw * s_ow * p, sh, sc), writeable=False))
                               for q, (start, count) in enumerate(zip(offsets, counts)) if count])
        lows, highs = self.pool.spans
        carry = max(h - lo for lo, h in zip(lows, highs))  # rows of one window, at most
        block = max(1, BLOCK_BYTES // (ow * kh * run * x.itemsize))
        strip_rows = (block - 1) * s_oh + kh
        matrix = np.empty((kh * run, f), x.dtype)
        return {"w": w, "matrix": matrix, "weight": None, "phases": phases, "offsets": offsets, "pooled": pooled, "shape": (n, f, oh, ow),
                "kernel": (kh, run, s_oh), "block": block, "strip_rows": strip_rows, "rows": block + carry,
                "macs": n * oh * ow * kh * run * f}

    def _matrix(self, weight: np.ndarray, prepared: dict) -> None:
        """Fill the (KH * KW * C, F) weight matrix the plans read; once for a constant weight."""
        if prepared["weight"] is weight:
            return
        w = prepared["w"]
        np.copyto(prepared["matrix"], w.transpose(2, 3, 1, 0).reshape(prepared["matrix"].shape))
        prepared["weight"] = weight if self.constant_weight else None

    def _buffers(self, prepared: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """This thread's buffers, kept between calls: the strips (OW, strip rows, run) and the patch
        matrices over them (block, OW, KH * run: output row r's patches start `s_oh` input rows after
        row r - 1's), the convolution's rows and the rows pooled along the rows only."""
        n, f, oh, ow = prepared["shape"]
        kh, run, s_oh = prepared["kernel"]
        dtype = prepared["matrix"].dtype
        key = (dtype, ow, f, kh, run, s_oh, prepared["block"], prepared["strip_rows"], prepared["rows"])
        held = getattr(self.scratch, "buffers", None)
        if held is None or held[0] != key:
            strips = np.empty((ow, prepared["strip_rows"], run), dtype)
            patches = np.lib.stride_tricks.as_strided(
                strips, (prepared["block"], ow, kh * run), (s_oh * run * strips.itemsize, strips.strides[0],
                                                             strips.itemsize), writeable=False)
            rows = np.empty((prepared["rows"], ow, f), dtype)
            held = self.scratch.buffers = (key, strips, patches, rows, np.empty_like(rows))
        return held[1:]

    def _part(self, prepared: dict, o0: int, o1: int) -> None:
        """Pooled output rows [o0, o1) of every image: the calls planned for them on this thread."""
        plans = getattr(self.scratch, "plans", None)
        if plans is None:
            plans = self.scratch.plans = {}
        plan = plans.get((o0, o1))
        if plan is None or plan[0] is not prepared:
            plan = plans[o0, o1] = (prepared, self._plan(prepared, o0, o1))
        for call in plan[1]:
            call()

    def _plan(self, prepared: dict, o0: int, o1: int) -> list:
        """The calls (of no arguments) computing pooled output rows [o0, o1) of every image in this
        thread's buffers: per block of convolution rows, the strips' copies, the GEMM, the rows it
        completes pooled, and the rows the next windows read moved to the front."""
        n, f, oh, ow = prepared["shape"]
        kh, run, s_oh = prepared["kernel"]
        strips, patches, rows, half = self._buffers(prepared)
        lows, highs = self.pool.spans
        block = prepared["block"]
        chunks = column_chunks(ow, kh * run * f)
        calls = []
        for image in range(n):
            o = o0
            first, held = lows[o0], 0  # `rows` holds convolution rows [first, first + held)
            end = highs[o1 - 1]
            r = first
            while o < o1:
                r1 = min(r + block, end)
                count = r1 - r
                h0, h1 = r * s_oh, (r1 - 1) * s_oh + kh  # the input rows they read
                for start, columns, view in prepared["phases"][image]:
                    target = strips[start:start + columns, :h1 - h0].reshape(view.shape[:-2] + (h1 - h0, run))
                    calls.append(functools.partial(np.copyto, target, view[..., h0:h1, :]))
                for c0, c1 in chunks:
                    calls.append(functools.partial(np.matmul, patches[:count, c0:c1], prepared["matrix"],
                                                   out=rows[held:held + count, c0:c1]))
                held += count
                r = r1
                done = min(o1, bisect.bisect_right(highs, r))  # the rows whose windows end by row r
                if done > o:
                    calls += self._pool_calls(prepared, image, rows, half, first, o, done)
                    o = done
                if o < o1 and lows[o] > first:  # drop the rows no window left reads
                    drop = min(lows[o], r) - first
                    if held > drop:
                        calls.append(functools.partial(np.copyto, rows[:held - drop], rows[drop:held]))
                    first, held = first + drop, held - drop
                    if lows[o] > r:  # windows that skip rows (a stride beyond the window)
                        r = first = lows[o]
        return calls

    def _pool_calls(self, prepared: dict, image: int, rows: np.ndarray, half: np.ndarray, first: int,
                    o0: int, o1: int) -> list:
        """The calls computing pooled rows [o0, o1) of `image` from the convolution rows in `rows`
        (from row `first`): along the rows into `half`, then along the columns (by phase) into the
        pooled output."""
        n, f, oh, ow = prepared["shape"]
        count = o1 - o0
        into = half[:count]
        taps = []
        for tap in self.row_taps:
            a, b = max(o0, -(tap // self.row_stride)), min(o1, (oh - 1 - tap) // self.row_stride + 1)
            if b > a:
                begin = a * self.row_stride + tap - first
                taps.append(((a, b) == (o0, o1), into[a - o0:b - o0],
                             rows[begin:begin + (b - a - 1) * self.row_stride + 1:self.row_stride]))
        calls = reduction_calls(self.pool.ufunc, into, taps)
        out = prepared["pooled"][image, o0:o1]
        width, p = out.shape[1], self.col_stride
        taps = []
        for tap in self.col_taps:
            a, b = max(0, -(tap // p)), min(width, (ow - 1 - tap) // p + 1)
            if b > a:
                begin = prepared["offsets"][tap % p] + a + tap // p
                taps.append(((a, b) == (0, width), out[:, a:b], into[:, begin:begin + b - a]))
        return calls + reduction_calls(self.pool.ufunc, out, taps)
