"""Contenders in processes of their own, taking turns: what the benchmarks here share.

A benchmark script runs itself once per contender as a worker (`script.py --worker ARGS...`):
`serve` is the worker's side (it answers `turn`, `reset-peak` and `quit` commands, one JSON object
a line on stdin/stdout), `Worker` starts and drives one from the main process, and `alternate`
gives every worker its turns round after round, the starting one rotating, with a pause between
turns so that no process's spinning threads (OpenBLAS's, ONNX Runtime's) eat into the next one's
time. The workers run without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE: this machine sets them, they
halve sgemm on AVX-512, and users do not have them.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

UNSET_FOR_MEASUREMENT = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
PAUSE_S = 0.2
"""Pause between two contenders' turns: spinning BLAS/ORT threads of the last one go to sleep."""


def timed_runs(fn: Callable[[], object], block: int) -> list[float]:
    """Wall times of `block` runs of `fn`, in seconds."""
    times = []
    for _ in range(block):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def in_turn(calls: dict[str, Callable[[], object]], rounds: int,
            around: Callable[[str], contextlib.AbstractContextManager] | None = None) -> dict[str, list[float]]:
    """Wall times in seconds of `calls` taking turns in this process, one call of each a round, the
    starting one rotating (as `alternate`); `around(name)`, if given, is entered before that call's
    timing starts and left after it ends."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    names = list(calls)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            with around(name) if around else contextlib.nullcontext():
                start = time.perf_counter()
                calls[name]()
                times[name].append(time.perf_counter() - start)
    return times


def medians_line(times: dict[str, list[float]], base: str) -> str:
    """Each contender's median in ms and, for the others, the median of its per-round ratios to `base`
    (which the machine's speed changes over seconds move less than either median)."""
    parts = []
    for name, seconds in times.items():
        part = f"{name} {statistics.median(seconds) * 1e3:.3f} ms"
        if name != base:
            ratio = statistics.median(t / b for t, b in zip(seconds, times[base]))
            part += f" (median per-round ratio to {base} {ratio:.3f})"
        parts.append(part)
    return ", ".join(parts)


def memory_kb() -> dict[str, int]:
    """VmRSS and VmHWM (resident set now and its high-water mark) of this process, in KiB."""
    found = {}
    with open("/proc/self/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0])
    return found


def reset_peak_rss() -> bool:
    """Reset VmHWM to the current resident set (Linux: write 5 to /proc/self/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def serve(info: dict, turn: Callable[[dict], dict]) -> None:
    """The worker's side: print `info` (what the contender reports once, e.g. its error against the
    nn level), then answer commands until `quit`: `turn` with `turn(command)` (its timed runs),
    `reset-peak` by resetting the resident-set high-water mark; both replies carry `memory_kb()`."""
    print(json.dumps(info), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        if command["op"] == "quit":
            return
        if command["op"] == "reset-peak":
            print(json.dumps({"reset": reset_peak_rss(), **memory_kb()}), flush=True)
        elif command["op"] == "turn":
            print(json.dumps({**turn(command), **memory_kb()}), flush=True)


class Worker:
    """A contender's process (`script --worker *args`), driven from the main process; `info` is
    what it reported when ready. BLAS and OpenMP get `threads` threads (the most any turn uses)."""

    def __init__(self, script: str, args: Sequence[str], threads: int):
        env = {k: v for k, v in os.environ.items() if k not in UNSET_FOR_MEASUREMENT}
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(threads)
        self.name = " ".join(args)
        self.process = subprocess.Popen([sys.executable, os.path.abspath(script), "--worker", *args],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.info = self.receive()

    def receive(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"worker {self.name} died (exit status {self.process.wait()})")
        return json.loads(line)

    def ask(self, **command) -> dict:
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        return self.receive()

    def close(self) -> None:
        try:
            self.ask(op="quit")
        except (BrokenPipeError, SystemExit, json.JSONDecodeError):
            pass
        self.process.wait()


def close_all(workers: dict[str, Worker]) -> None:
    for worker in workers.values():
        worker.close()


def alternate(workers: dict[str, Worker], rounds: int, **turn) -> tuple[dict, list[float]]:
    """Turns of every worker (`turn` is the command's arguments, e.g. threads=, block=), round after
    round, the starting worker rotating. Returns per worker (times, peak KiB, KiB above its resident
    set at rest, its last reply), and the 1-min load averages seen before each round and at the end."""
    rest = {kind: w.ask(op="reset-peak")["VmRSS"] for kind, w in workers.items()}
    times: dict[str, list[float]] = {kind: [] for kind in workers}
    last: dict[str, dict] = {}
    loads = []
    kinds = list(workers)
    for r in range(rounds):
        loads.append(os.getloadavg()[0])
        for kind in kinds[r % len(kinds):] + kinds[:r % len(kinds)]:
            time.sleep(PAUSE_S)
            last[kind] = workers[kind].ask(op="turn", **turn)
            times[kind] += last[kind]["times"]
    loads.append(os.getloadavg()[0])
    return {k: (times[k], last[k]["VmHWM"], last[k]["VmHWM"] - rest[k], last[k]) for k in kinds}, loads
