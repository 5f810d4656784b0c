"""What a split's hand-off to the worker thread costs, and whether the GIL or the wake-up is to blame.

    .venv/bin/python benchmarks/handoff.py [--splits 300] [--gap-us 500]

Runs `threads.run_split(2, [caller's part, worker's part])` over and over, each part two
256x256x256 matmuls, the splits `--gap-us` apart (the calling thread sleeps in between, as it runs
serial steps between two splits of a program). Before its matmuls the calling thread's part runs
Python for a while (its "prelude": 0, 20 or 50 us, holding the GIL, as the executor's parts do
before their first numpy call), or sleeps instead, releasing the GIL at once. Per case it prints
the medians (and 90th percentiles) of:

- the worker's start delay: from the split's start to the first line of the worker's part; the
  woken worker must take the GIL, which the calling thread holds through its prelude;
- the wait after the last part: from the end of the later part to the split's return (the calling
  thread's wake-up when the worker finishes last).

If the start delay grows with the prelude, the worker waits for the GIL; what remains with the GIL
released at once is the wake-up of a blocked thread. The process runs
with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset, as the other benchmarks here.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from workers import UNSET_FOR_MEASUREMENT

PRELUDES_US = (0, 20, 50)


def busy_python(microseconds: float) -> None:
    """Run Python (holding the GIL) for about this long."""
    end = time.perf_counter() + microseconds * 1e-6
    while time.perf_counter() < end:
        pass


def measure(prelude_us: float | None, splits: int, gap_us: float) -> tuple[list[float], list[float]]:
    """(worker start delays, waits after the last part) of `splits` splits, in seconds; a prelude of
    None: the calling thread's part sleeps 200 us (GIL released) instead of Python and matmuls."""
    from xrelay.runtime.parallel.threads import run_split

    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((256, 256), dtype=np.float32) for _ in range(2))
    marks: dict[str, float] = {}

    def caller() -> None:
        if prelude_us is None:
            time.sleep(200e-6)
        else:
            busy_python(prelude_us)
            np.matmul(a, b)
            np.matmul(a, b)
        marks["caller end"] = time.perf_counter()

    def worker() -> None:
        marks["worker start"] = time.perf_counter()
        np.matmul(a, b)
        np.matmul(a, b)
        marks["worker end"] = time.perf_counter()

    delays, waits = [], []
    for _ in range(splits + 5):  # the first 5 warm up
        time.sleep(gap_us * 1e-6)
        start = time.perf_counter()
        run_split(2, [caller, worker])
        end = time.perf_counter()
        delays.append(marks["worker start"] - start)
        waits.append(end - max(marks["caller end"], marks["worker end"]))
    return delays[5:], waits[5:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=300)
    parser.add_argument("--gap-us", type=float, default=500.0, help="sleep between two splits (default 500 us)")
    args = parser.parse_args(argv)
    if any(var in os.environ for var in UNSET_FOR_MEASUREMENT):
        env = {k: v for k, v in os.environ.items() if k not in UNSET_FOR_MEASUREMENT}
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), *sys.argv[1:]], env)

    load = os.getloadavg()[0]
    rows = []
    for prelude in (*PRELUDES_US, None):
        delays, waits = (np.array(t) * 1e6 for t in measure(prelude, args.splits, args.gap_us))
        label = "sleeps (GIL released at once)" if prelude is None else f"{prelude} us of Python, then numpy"
        rows.append(f"  {label:32s} {np.median(delays):8.1f} {np.percentile(delays, 90):8.1f} "
                    f"{np.median(waits):8.1f} {np.percentile(waits, 90):8.1f}")
    print(f"run_split on 2 threads, {args.splits} splits {args.gap_us:.0f} us apart; 1-min load average "
          f"{load:.1f}-{os.getloadavg()[0]:.1f}; microseconds:")
    print(f"  {'calling thread part':32s} {'start delay':>17s} {'wait after last':>17s}")
    print(f"  {'':32s} {'median':>8s} {'p90':>8s} {'median':>8s} {'p90':>8s}")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
