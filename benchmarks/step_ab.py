"""A change measured A/B on chosen steps: their time in program order, without and with the change.

    .venv/bin/python benchmarks/step_ab.py --model resnet18
        --off xrelay.runtime.kernels.elementwise_programs.SHORT_AXIS=0
        (--match "7x7/2" | --steps 243-271) [--rounds 80]

Builds the model twice as benchmarks/change_ab.py does ("without": every `--off` flag False, set
around its every run too; "with": as the code stands), then runs both on one thread, alternating
(the order flipped every round), every step in program order, and times only the chosen steps: those
whose label (split_profile.step_label) contains `--match`, or the step indices `--steps` (a list of
`a-b` ranges and indices). Prints the medians of the chosen steps' summed time and the median of the
per-round ratios with/without. A change worth a fraction of a percent of a run (one step's Python,
a few fills) is below what whole runs resolve on this VM (benchmarks/change_ab.py drifts by 1-2%);
its steps, run in place, with the caches as the steps before leave them, are not. Steps are matched
by index, so with --steps both builds must keep the steps' indices (a change that adds or drops
steps: give the whole range around them). OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset for the
measured process, as in benchmarks/change_ab.py.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from workers import UNSET_FOR_MEASUREMENT

from change_ab import build, flags_off


def chosen_steps(program, match: str | None, steps: str | None) -> set[int]:
    from split_profile import step_label

    if steps:
        chosen = set()
        for item in steps.split(","):
            first, _, last = item.partition("-")
            chosen.update(range(int(first), int(last or first) + 1))
        return chosen
    return {i for i, step in enumerate(program.steps) if match in step_label(step)}


def timed_run(contender, chosen: set[int]) -> int:
    """One run of the contender's program, step by step; the chosen steps' summed time in ns."""
    from xrelay.runtime.parallel.threads import split_blas_threads

    program = contender.program
    env: list = [None] * len(program.slots)
    env[0] = contender.data
    total = 0
    with split_blas_threads():
        for index, step in enumerate(program.steps):
            if index in chosen:
                start = time.perf_counter_ns()
                step(env)
                total += time.perf_counter_ns() - start
            else:
                step(env)
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet18", help="resnet18, resnet50 or onnx:<light model>")
    parser.add_argument("--off", action="append", default=[], help="module.FLAG set False without the change")
    parser.add_argument("--match", help="time the steps whose label contains this")
    parser.add_argument("--steps", help="time these step indices (e.g. 243-271,17)")
    parser.add_argument("--rounds", type=int, default=80)
    args = parser.parse_args(argv)
    if not args.off or bool(args.match) == bool(args.steps):
        parser.error("give --off and one of --match and --steps")
    if any(var in os.environ for var in UNSET_FOR_MEASUREMENT):
        env = {k: v for k, v in os.environ.items() if k not in UNSET_FOR_MEASUREMENT}
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), *sys.argv[1:]], env)
    from xrelay.runtime.parallel.threads import set_blas_threads

    without, with_ = build(args.model, args.off, []), build(args.model, [], [])
    set_blas_threads(1)
    chosen = {name: chosen_steps(c.program, args.match, args.steps) for name, c in (("without", without), ("with", with_))}
    print(f"{args.model}: steps timed without the change {sorted(chosen['without'])}, with it {sorted(chosen['with'])}")

    def run_without() -> int:
        with flags_off(args.off):
            return timed_run(without, chosen["without"])

    for _ in range(3):
        run_without(), timed_run(with_, chosen["with"])
    times: dict[str, list[int]] = {"without": [], "with": []}
    ratios = []
    for r in range(args.rounds):
        if r % 2:
            a, b = run_without(), timed_run(with_, chosen["with"])
        else:
            b, a = timed_run(with_, chosen["with"]), run_without()
        times["without"].append(a)
        times["with"].append(b)
        ratios.append(b / a)
    print(f"  1 thread, {args.rounds} rounds, 1-min load average {os.getloadavg()[0]:.1f}: without "
          f"{statistics.median(times['without']) / 1e6:.3f} ms, with {statistics.median(times['with']) / 1e6:.3f} ms, "
          f"median per-round ratio with/without {statistics.median(ratios):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
