"""When splitting one step over the worker threads pays: the data behind the executor's split thresholds.

    .venv/bin/python benchmarks/split_threshold.py [--rounds 60]

The linalg executor splits a big step into one part per worker thread (`threads.run_parts`). On an
idle 2-core machine a split of a step of W seconds of work takes about (W + O) / 2 + L: O the
extra CPU time the split costs (the parts' Python, which the GIL serialises, slices, the
worker's wake-up) and L the hand-off latency; it pays when W > O + 2L. Wall times of parallel code
are meaningless on a shared machine, but CPU times are not: this script measures, for real
executor steps of growing size (a bias-add + ReLU over an NHWC activation, which the executor runs
as one fused step, built to split at any size), W as the CPU time of the step run whole and O as the extra CPU time of the step split over 2 threads (process CPU time, every
thread counted), the two alternated run by run; and L as the best wall time of an empty split.
It prints W, O, L and whether W > O + 2L: the smallest size from which every larger one pays is
what `split-kernels`' `min_points` (loop points of an elementwise kernel) is set from. The processes
run with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset, as benchmarks/execution.py runs them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests"))


def program(pixels: int, channels: int):
    """A compiled linalg program adding a bias to (1, pixels, 1, channels) NHWC data and taking the
    ReLU (one fused step), and its arguments."""
    from module_builder import formed, make_module

    from xrelay.dialects import nn
    from xrelay.lowering import lower
    from xrelay.runtime.executor.linalg_exec import LinalgProgram

    shapes = {"x": (1, pixels, 1, channels), "b": (1, 1, 1, channels)}
    body = lambda a, emit: [emit(nn.make("nn.relu", [emit(nn.make("nn.add", [a["x"], a["b"]]))]))]  # noqa: E731
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes.values()]
    # `min_points=0`: the kernel splits at any size, so the split's cost is measured
    return LinalgProgram(formed(lower(make_module(shapes, body), to="linalg"), min_points=0)), args


def cpu_and_wall(fn, threads: int, rounds: int) -> tuple[list[float], list[float]]:
    from xrelay.runtime.parallel.threads import set_blas_threads

    set_blas_threads(threads)
    cpu, wall = [], []
    for _ in range(rounds):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return cpu, wall


def measure(fn, rounds: int) -> tuple[float, float]:
    """(W, O): median CPU seconds of `fn` on 1 thread, and the median extra CPU seconds on 2 threads,
    in alternating blocks of 10 runs."""
    whole, split = [], []
    fn()
    for _ in range(rounds // 10):
        whole += cpu_and_wall(fn, 1, 10)[0]
        split += cpu_and_wall(fn, 2, 10)[0]
    # process_time ticks are coarse on some kernels: means over the blocks, not medians of runs.
    w, s = statistics.fmean(whole), statistics.fmean(split)
    return w, s - w


def handoff_latency(rounds: int) -> float:
    from xrelay.runtime.parallel.threads import run_parts, split_blas_threads

    times = []
    with split_blas_threads():
        for _ in range(rounds * 20):
            start = time.perf_counter()
            run_parts(lambda r0, r1: None, 4, 2)
            times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    args = parser.parse_args(argv)
    from xrelay.runtime.parallel.threads import blas_threads

    if (blas_threads() or 1) < 2:
        raise SystemExit("run with OPENBLAS_NUM_THREADS=2 (the split uses as many workers as BLAS has threads)")
    latency = handoff_latency(args.rounds)
    print(f"hand-off latency L (best empty split): {latency * 1e6:.1f} us; load {os.getloadavg()[0]:.1f}")
    channels = 64
    print(f"\nbias-add + ReLU (one fused step), NHWC, {channels} channels: W = CPU time whole, "
          f"O = extra CPU time split over 2 threads")
    print(f"  {'loop points':>12}  {'W':>9}  {'O':>9}  pays (W > O + 2L)")
    pays = []
    for pixels in [1 << e for e in range(6, 16)]:
        prog, arrays = program(pixels, channels)
        w, o = measure(lambda: prog(*arrays), args.rounds)
        pays.append((pixels * channels, w > o + 2 * latency))
        print(f"  {pixels * channels:>12}  {w * 1e6:7.1f}us  {o * 1e6:7.1f}us  {'yes' if pays[-1][1] else 'no'}")
    first = None
    for points, ok in reversed(pays):
        if not ok:
            break
        first = points
    print(f"  pays from {first} loop points (load {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
