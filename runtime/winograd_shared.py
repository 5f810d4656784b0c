"""Winograd convolutions split by output channels, whose input transform the two processes share.

`conv.winograd_conv3x3_threaded` splits a convolution by output channels when the transformed weight
is the bigger operand (ResNet's 14x14x256 stage): each part then transforms the whole input itself
and multiplies by a column slice of the weight. In the two-process mode (runtime/spmd.py: a phase
is one `run_split`) `SharedTransform` runs such a convolution in two phases instead:

1. each process transforms its half of the input tiles (a range of the flat tile index) into a
   scratch array in memory both processes see: an anonymous shared mapping made on the
   convolution's first call, before the fork;
2. after the phase's barrier, each multiplies all the tiles by a contiguous copy of its half of the
   transformed weight's filters (made once per process: OpenBLAS packs a column slice more slowly)
   and transforms its channels of the output back.

An epilogue then runs split by rows (`threads.run_epilogue`), as before. Measured on a chain of four
14x14x256 convolutions in two processes (one process alternating programs, 400 rounds): the copies
alone 0.977 and 0.948 of the time, the shared transform on top of them 0.967, 0.985, 0.975 (an A/A
run: 0.997). Not taken: convolutions split by rows of tiles (ResNet's 28x28x128 stage, 7 tile rows
split 4 and 3): in two phases 1.012 and 1.025 (the products then read every tile's transform, half
of it from the other core). The thread mode keeps the one split: a hand-off costs more than it saves.
"""

from __future__ import annotations

import functools
import mmap

import numpy as np

from xrelay.runtime.conv import whole_tiles_input, winograd_output, winograd_splits_rows, winograd_transforms
from xrelay.runtime.threads import run_epilogue, run_split, spmd, split_threads

SHARED_TRANSFORM = True
"""Whether Winograd convolutions that `shares_transform` picks run in two phases in the two-process
mode (read when the program is built: benchmarks/change_ab.py --threading processes --both --off
xrelay.runtime.winograd_shared.SHARED_TRANSFORM)."""


def shares_transform(out_shape: tuple[int, ...], m: int, threads: int) -> bool:
    """Whether a Winograd convolution of this (N, F, OH, OW) output runs in two phases on `threads`:
    when `conv.winograd_conv3x3_threaded` would split it by output channels."""
    n, f, oh, ow = out_shape
    tiles = n * -(-oh // m) * -(-ow // m)
    return threads >= 2 and tiles >= 2 * threads and not winograd_splits_rows(out_shape, m, threads)


class SharedTransform:
    """One convolution's transformed-input scratch (shared with the second process) and this
    process's contiguous shares of its transformed weight."""

    def __init__(self):
        self.scratch: np.ndarray | None = None
        """(a*a, tiles, C) in a shared mapping, made on a call in the thread mode (before any fork)."""
        self.shares: dict = {}
        """(f0, f1) -> (the transformed weight, a contiguous copy of its filters [f0, f1))."""

    def run(self, x: np.ndarray, u: np.ndarray, m: int, out: np.ndarray, accumulate: bool, epilogue=None) -> bool:
        """Compute the convolution (`conv.winograd_conv3x3`'s arguments, and its epilogue) in two
        phases and return True, in the two-process mode when `shares_transform` picks it; else
        return False having computed nothing (making the scratch on a call before the fork)."""
        a = m + 2
        n, c = x.shape[:2]
        _, f, oh, ow = out.shape
        th, tw = -(-oh // m), -(-ow // m)
        shape = (a * a, n * th * tw, c)
        scratch = self.scratch
        if spmd.rank is None:
            # Made here, before the fork (a program's first calls run in the thread mode), so that
            # both processes have it; in the two-process mode both then take the same branch.
            threads = split_threads()
            if (scratch is None or scratch.shape != shape or scratch.dtype != x.dtype) and shares_transform(
                    out.shape, m, threads):
                nbytes = int(np.prod(shape)) * x.itemsize
                self.scratch = np.frombuffer(mmap.mmap(-1, nbytes), x.dtype).reshape(shape)  # MAP_SHARED
            return False
        threads = split_threads()
        if (scratch is None or scratch.shape != shape or scratch.dtype != x.dtype
                or not shares_transform(out.shape, m, threads)):
            return False
        tiles = shape[1]
        step = -(-tiles // threads)
        run_split(threads, [functools.partial(_transform_tiles, x, m, (n, th, tw), scratch, t, min(t + step, tiles))
                            for t in range(0, tiles, step)])
        step = -(-f // threads)
        run_split(threads, [functools.partial(self._multiply, u, m, (n, th, tw), out, accumulate, k, min(k + step, f))
                            for k in range(0, f, step)])
        if epilogue is not None:
            run_epilogue(epilogue, oh, out.size)
        return True

    def _multiply(self, u: np.ndarray, m: int, tiles: tuple[int, int, int], out: np.ndarray, accumulate: bool,
                  f0: int, f1: int) -> None:
        """Output channels [f0, f1): all transformed tiles times those filters, transformed back."""
        share = self.shares.get((f0, f1))
        if share is None or share[0] is not u:
            share = self.shares[f0, f1] = (u, np.ascontiguousarray(u[:, :, f0:f1]))
        winograd_output(np.matmul(self.scratch, share[1]), m, tiles, out[:, f0:f1], accumulate)


def _transform_tiles(x: np.ndarray, m: int, tiles: tuple[int, int, int], scratch: np.ndarray, t0: int, t1: int) -> None:
    """B^T d B of tiles [t0, t1) (flat index over (N, tile rows, tile columns)) of input `x` into
    `scratch[:, t0:t1]`, gathered one run of a tile row at a time."""
    bt, _ = winograd_transforms(m, x.dtype)
    a = m + 2
    n, th, tw = tiles
    c = x.shape[1]
    x = whole_tiles_input(x, m, th, tw)  # (a copy only for sizes not a multiple of m, or NCHW data)
    _, sc, sh, sw = x.strides
    d = np.empty((a, a, t1 - t0, c), x.dtype)
    t = t0
    while t < t1:
        image, rest = divmod(t, th * tw)
        r, q = divmod(rest, tw)
        e = min(t1, t + tw - q)  # the end of this tile row
        d[:, :, t - t0:e - t0] = np.lib.stride_tricks.as_strided(
            x[image, :, r * m:, q * m:], (a, a, e - t, c), (sh, sw, sw * m, sc), writeable=False)
        t = e
    target = scratch.reshape(a, a, -1, c)[:, :, t0:t1].view()
    target.shape = (a, a, (t1 - t0) * c)  # a view: each point's tiles are contiguous
    np.matmul(bt, np.matmul(bt, d.reshape(a, -1)).reshape(a, a, -1), out=target)
