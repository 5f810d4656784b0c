"""Compile-time benchmark of xrelay's graph passes on bound ResNets.

    .venv/bin/python benchmarks/compile_time.py [--depths 18,34,50,101,152] [--repeat 5]

Reports, from PassTimingInstrument:
1. per-pass self time (summed over every run of that pass, nested InferTypes included under
   their own name) of the opt-level-3 pipeline SimplifyInference -> FoldScaleAxis ->
   FoldConstant -> ConvertLayout(NHWC) -> FoldConstant on bound ResNet-18/34/50/101/152;
2. the tutorial's Sequential (FoldConstant, ConvertLayout, FoldConstant at opt_level 3) on bound
   ResNet-18 (target: <= 300 ms);
3. pipeline time against op count across depths (target: ResNet-152's time over ResNet-18's is
   at most 1.5x the ratio of their op counts, i.e. the passes scale linearly).

Times are the median over `--repeat` runs on the same bound module (each run starts from it:
passes are functional). The first run in a process is reported separately for the tutorial.
"""

from __future__ import annotations

import argparse
import gc
import re
import statistics
import sys
import time
from collections import defaultdict

from xrelay import passes, transform
from xrelay.dialects import nn
from xrelay.frontend import bind_params_by_name, resnet
from xrelay.instrument import PassTimingInstrument

_LINE = re.compile(r"^(\t*)(.+): (\d+)us \[(-?\d+)us\]")
DESIRED = {"nn.conv2d": ["NHWC", "HWIO"]}


def opt3_pipeline() -> transform.Sequential:
    return transform.Sequential(
        [
            passes.SimplifyInference(),
            passes.FoldScaleAxis(),
            passes.FoldConstant(),
            passes.ConvertLayout(DESIRED),
            passes.FoldConstant(),
        ],
        name="opt3",
    )


def tutorial_sequential() -> transform.Sequential:
    return transform.Sequential([passes.FoldConstant(), passes.ConvertLayout(DESIRED), passes.FoldConstant()])


def self_times_ms(render: str) -> dict[str, float]:
    """Self time per pass name (ms), summed over the runs in a PassTimingInstrument render."""
    totals: dict[str, float] = defaultdict(float)
    for line in render.splitlines():
        match = _LINE.match(line)
        if match:
            totals[match.group(2)] += int(match.group(4)) / 1000.0
    return dict(totals)


def timed_run(make_pipeline, module) -> tuple[float, dict[str, float]]:
    """(wall ms, self ms per pass) of one run at opt_level 3."""
    gc.collect()  # start each run with the same heap, so a full collection does not land in one pass
    timing = PassTimingInstrument()
    with transform.PassContext(opt_level=3, instruments=[timing]):
        start = time.perf_counter()
        make_pipeline()(module)
        wall = (time.perf_counter() - start) * 1000.0
        render = timing.render()
    return wall, self_times_ms(render)


def median_run(make_pipeline, module, repeat: int) -> tuple[float, dict[str, float], float]:
    """(median wall ms, self times of the median run, first run's wall ms)."""
    runs = [timed_run(make_pipeline, module) for _ in range(repeat)]
    walls = [wall for wall, _ in runs]
    median = statistics.median(walls)
    closest = min(runs, key=lambda run: abs(run[0] - median))
    return median, closest[1], walls[0]


def op_count(module) -> int:
    """nn ops other than constants (what a pass walks and rewrites)."""
    return sum(isinstance(op, nn.NNOp) for op in module.walk())


def bound_resnet(depth: int):
    start = time.perf_counter()
    module, params = resnet.get_workload(num_layers=depth, batch_size=1, image_shape=(3, 224, 224))
    bound = bind_params_by_name(module, params)
    return bound, (time.perf_counter() - start) * 1000.0, sum(p.size for p in params.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", default="18,34,50,101,152", help="comma-separated ResNet depths")
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (median)")
    args = parser.parse_args(argv)
    depths = [int(d) for d in args.depths.split(",")]

    rows = []
    per_pass: dict[int, dict[str, float]] = {}
    tutorial = None
    for depth in depths:
        module, build_ms, n_params = bound_resnet(depth)
        if depth == 18:
            timed_run(tutorial_sequential, module)  # warm-up: imports, first allocations
            first = timed_run(tutorial_sequential, module)[0]
            median, times, _ = median_run(tutorial_sequential, module, max(args.repeat, 5))
            tutorial = (median, times, first)
        wall, times, first = median_run(opt3_pipeline, module, args.repeat)
        per_pass[depth] = times
        rows.append((depth, op_count(module), n_params, build_ms, wall, first))
        del module

    names = sorted({name for times in per_pass.values() for name in times}, key=lambda n: (n != "opt3", n))
    print("Per-pass self time (ms, median run) of the opt-level-3 pipeline on bound ResNets")
    print("SimplifyInference -> FoldScaleAxis -> FoldConstant -> ConvertLayout(NHWC) -> FoldConstant:")
    print(f"{'pass':<24}" + "".join(f"{f'ResNet-{d}':>12}" for d in depths))
    for name in names:
        print(f"{name:<24}" + "".join(f"{per_pass[d].get(name, 0.0):>12.1f}" for d in depths))
    print()
    print(f"{'depth':>6} {'nn ops':>7} {'params':>11} {'build+bind ms':>14} {'pipeline ms':>12} "
          f"{'first ms':>9} {'us/op':>8}")
    for depth, ops, n_params, build_ms, wall, first in rows:
        print(f"{depth:>6} {ops:>7} {n_params:>11} {build_ms:>14.0f} {wall:>12.1f} {first:>9.1f} "
              f"{wall / ops * 1000:>8.0f}")

    status = 0
    if tutorial is not None:
        median, times, first = tutorial
        print()
        print("Tutorial Sequential([FoldConstant, ConvertLayout, FoldConstant]) at opt_level 3, bound ResNet-18:")
        print(f"  median {median:.1f} ms (first run after warm-up {first:.1f} ms); self ms: "
              + ", ".join(f"{n} {t:.1f}" for n, t in sorted(times.items())))
        ok = median <= 300.0
        status |= not ok
        print(f"  target <= 300 ms: {'PASS' if ok else 'FAIL'}")
    by_depth = {row[0]: row for row in rows}
    if 18 in by_depth and 152 in by_depth:
        time_ratio = by_depth[152][4] / by_depth[18][4]
        op_ratio = by_depth[152][1] / by_depth[18][1]
        ok = time_ratio <= 1.5 * op_ratio
        status |= not ok
        print()
        print(f"ResNet-152 / ResNet-18: pipeline time x{time_ratio:.2f}, op count x{op_ratio:.2f} "
              f"(time ratio / op ratio = {time_ratio / op_ratio:.2f}; target <= 1.5): {'PASS' if ok else 'FAIL'}")
    return status


if __name__ == "__main__":
    sys.exit(main())
