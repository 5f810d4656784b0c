"""BLAS threads and the executor's own worker threads.

numpy's OpenBLAS thread count is read and set through ctypes (`blas_threads`, `set_blas_threads`).
The executor's "split" threading runs BLAS single-threaded (`split_blas_threads`) and splits a big
step over a pool of worker threads (`run_split`, `run_parts`): one hand-off per step, where
OpenBLAS's own threads synchronise on every small matmul. The compiled kernels split in C; only
numpy's steps (a matmul, a copy) hand parts to these threads, a few times a run."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import glob
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np


def _openblas_paths() -> list[str]:
    """Files that may be numpy's OpenBLAS: numpy's bundled libraries, then those mapped in this process."""
    candidates = glob.glob(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs", "*openblas*"))
    try:
        with open("/proc/self/maps") as maps:
            candidates += sorted({line.split()[-1] for line in maps if "openblas" in line and "/" in line})
    except OSError:
        pass
    return candidates


def openblas_functions(*names: str) -> list | None:
    """numpy's OpenBLAS functions `names` (e.g. "get_num_threads") as ctypes functions, from the first
    library that exports them all under one of OpenBLAS's spellings, or None if none does."""
    for path in _openblas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in (("scipy_openblas", "64_"), ("openblas", "64_"), ("openblas", "")):
            functions = [getattr(lib, f"{prefix}_{name}{suffix}", None) for name in names]
            if None not in functions:
                return functions
    return None


@functools.cache
def _openblas():
    """numpy's OpenBLAS as (get_num_threads, set_num_threads) ctypes functions, or None if not found."""
    functions = openblas_functions("get_num_threads", "set_num_threads")
    if functions is None:
        return None
    get, put = functions
    get.restype, put.argtypes = ctypes.c_int, [ctypes.c_int]
    return get, put


def blas_threads() -> int | None:
    """The number of threads numpy's OpenBLAS uses (OPENBLAS_NUM_THREADS at startup), or None if unknown."""
    lib = _openblas()
    return int(lib[0]()) if lib else None


def set_blas_threads(count: int) -> None:
    """Make numpy's OpenBLAS use `count` threads from now on (process-wide); no-op without OpenBLAS."""
    lib = _openblas()
    if lib:
        lib[1](int(count))


_split_threads: list[int] = []  # innermost `split_blas_threads` count, while one is active


@contextlib.contextmanager
def split_blas_threads():
    """Within: numpy's BLAS runs single-threaded, and the `threaded_*` helpers split their work over
    as many worker threads as BLAS had (one synchronisation per call instead of one per BLAS call).

    Process-wide while active, like `set_blas_threads`; nests."""
    before = blas_threads() or 1
    threads = _split_threads[-1] if _split_threads else before
    _split_threads.append(threads)
    if before != 1:
        set_blas_threads(1)
    try:
        yield threads
    finally:
        _split_threads.pop()
        if before != 1:
            set_blas_threads(before)


def split_threads() -> int:
    """How many worker threads `run_parts` and the `threaded_*` helpers split over here and now."""
    return (_split_threads[-1] if _split_threads else None) or blas_threads() or 1


_splitting = threading.Lock()  # held while a split's parts run on the workers


@functools.cache
def _worker_pool(workers: int) -> ThreadPoolExecutor:
    """The pool of `workers` threads a split hands its parts to, started on first use."""
    return ThreadPoolExecutor(workers, thread_name_prefix="xrelay-split")


def run_split(threads: int, calls: list) -> None:
    """Run `calls` (functions of no arguments), the first on this thread (one hand-off less) and the
    others on worker threads, all with single-threaded BLAS; return when all are done (re-raising
    the first failure). A split entered while another runs (from a part, or from a second calling
    thread) runs its parts on its own thread instead of waiting for workers that wait for it."""
    with split_blas_threads():
        if len(calls) < 2 or not _splitting.acquire(blocking=False):
            for call in calls:
                call()
            return
        try:
            pool = _worker_pool(threads - 1)
            futures = [pool.submit(call) for call in calls[1:]]
            try:
                calls[0]()
            finally:
                wait(futures)
            for future in futures:
                future.result()
        finally:
            _splitting.release()


if hasattr(os, "register_at_fork"):  # a forked child has none of its parent's threads
    os.register_at_fork(after_in_child=_worker_pool.cache_clear)


def split_parts(parts: int | None) -> int:
    """Over how many threads a step splits: the `parts` of its kernel's `split` attribute
    (passes/kernels/split_kernels.py), never more than this program has threads; 1 (it runs whole)
    without one, as outside a kernel and in a program no kernel pass has seen."""
    return min(parts, split_threads()) if parts is not None and parts > 1 else 1


def run_parts(part, rows: int, threads: int) -> None:
    """`part(r0, r1)` over `rows` split into one even range per thread (`split_parts`' count) when
    there are at least 2 rows per thread, else `part(0, rows)` here."""
    if threads <= 1 or rows < 2 * threads:
        part(0, rows)
        return
    size = -(-rows // threads)
    run_split(threads, [functools.partial(part, r, min(r + size, rows)) for r in range(0, rows, size)])
