"""Where IREE spends a ResNet run: IREE's time per dispatch beside ONNX Runtime's time per node.

    .venv/bin/python benchmarks/iree_profile.py [--models resnet18,resnet50] [--threads 1[,2]] [--runs 30] [--top 20]

Builds each model as benchmarks/through_iree.py's `iree` contender (the opt-level-3 graph, lowered and
compiled exactly as `backend="iree"` does: `iree_backend.prepare`, `compile_vmfb` with DEFAULT_FLAGS),
then, each in a process of its own, one after the other:
- IREE: `iree-benchmark-module` runs it `--runs` times on `--threads` task workers with host-execution
  profiling on, and `iree-profile dispatch` reads the bundle back. Per dispatch (IREE's name says what
  it computes: `conv_7x7x512x3x3x512`, `matmul_49x512x2048`, `_encoding_...` for packing a tensor into
  the data-tiled layout, `slow_memcpy` for a pad's copy), from every call's own event: its calls per
  run, wall time per run (the minimum, median and 90th percentile over calls, times the calls per
  run), how many task workers were inside it on average while it ran (`busy`: the workers' summed
  time in it over its wall time; IREE 3.13 times each worker from its first claimed workgroup to its
  last, so `busy` near the thread count means no worker waited for work, whatever each workgroup
  took) and its workgroup count;
- ONNX Runtime (the `bench` extra) with `--threads` intra-op threads and its per-node profiler, on the
  same graph exported to ONNX: per node, the minimum and mean over runs (the first 5 runs dropped).
Both lists are sorted by median (ORT: mean) time, followed by totals and times per kind of op. The
minimum is the steadier figure on a shared VM (a vCPU's speed changes by 1.5x over seconds: compare
minimums). With several thread counts (`--threads 1,2`) a last table puts each dispatch's minimum and
median on every thread count side by side, with the speedup from the first to the last.
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset for the measured processes, as in workers.py.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import execution  # the sibling benchmark (its models and ONNX graph builder)

CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}


def iree_tool(name: str) -> str:
    """The path of an IREE command-line tool installed beside this Python (the `iree` extra)."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        raise SystemExit(f"error: {name} not found: pip install -e '.[iree]'")
    return found


def lowered_model(model: str) -> tuple[str, np.ndarray]:
    """(the linalg text `backend="iree"` compiles for `model`'s opt-level-3 graph, its input)."""
    from xrelay import passes, transform
    from xrelay.frontend import bind_params_by_name
    from xrelay.runtime.iree import backend as iree_backend

    module, params, data, _, _ = execution.load_model(model)
    with transform.PassContext(opt_level=3):
        graph = transform.Sequential([passes.SimplifyInference(), passes.FoldScaleAxis(), passes.FoldConstant()])(
            bind_params_by_name(module, params))
    return str(iree_backend.prepare(graph)), data


def kind_of(name: str) -> str:
    """A dispatch's or ONNX node's kind of op, from its name or op type."""
    for kind in ("batch_matmul", "matmul", "conv", "encod", "memcpy", "transpose", "pool", "reduction"):
        if kind in name.lower():
            return {"encod": "pack (encoding)", "memcpy": "copy (pad)"}.get(kind, kind)
    return "elementwise/other" if "elementwise" in name else name


def profile_iree(vmfb: Path, data: Path, threads: int, runs: int, work: Path) -> tuple[dict[str, list[dict]], int]:
    """({dispatch: its calls' `iree-profile dispatch --dispatch_events` records}, runs profiled)."""
    bundle = work / "run.ireeprof"
    subprocess.run([iree_tool("iree-benchmark-module"), f"--module={vmfb}", "--device=local-task",
                    f"--task_topology_group_count={threads}", "--function=main", f"--input=@{data}",
                    "--benchmark_repetitions=1", f"--benchmark_min_time={runs}x",
                    "--device_profiling_mode=host-execution", f"--device_profiling_output={bundle}"],
                   check=True, capture_output=True, env=CLEAN_ENV)
    out = subprocess.run([iree_tool("iree-profile"), "dispatch", "--format=jsonl", "--dispatch_events", str(bundle)],
                         check=True, capture_output=True, text=True).stdout
    calls: dict[str, list[dict]] = collections.defaultdict(list)
    for line in out.splitlines():
        if '"host_dispatch_event"' in line:
            event = json.loads(line)
            calls[event["key"]].append(event)
    return calls, min(len(c) for c in calls.values())  # every dispatch runs at least once per run


def dispatch_rows(calls: dict[str, list[dict]], n_runs: int) -> list[tuple[str, str, float, float, float, str]]:
    """Per dispatch: (name, kind, min, median and 90th percentile ms per run, extra columns)."""
    rows = []
    for key, events in calls.items():
        per_run = len(events) // n_runs
        wall = np.array([e["duration_ns"] for e in events]) / 1e6 * per_run
        busy = sum(e["tile_duration_sum_ns"] for e in events) / max(1, sum(e["duration_ns"] for e in events))
        workgroups = "x".join(str(c) for c in events[-1]["workgroup_count"] if c > 1) or "1"
        rows.append((key, kind_of(key), float(wall.min()), float(np.median(wall)), float(np.percentile(wall, 90)),
                     f"x{per_run:<2d} busy {busy:4.2f} {workgroups:>6s} wg"))
    return rows


def ort_worker(model: str, threads: int, runs: int, output: str) -> None:
    """ONNX Runtime's per-node profile of `model` written to `output` as JSON {node: [op, shape, [µs...]]}."""
    import onnxruntime as ort

    from xrelay.frontend import bind_params_by_name

    module, params, data, _, input_name = execution.load_model(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads, options.log_severity_level = threads, 1, 3
    options.enable_profiling = True
    options.profile_file_prefix = str(Path(output).with_suffix(""))
    session = ort.InferenceSession(execution.onnx_model(bind_params_by_name(module, params)).SerializeToString(),
                                   options, providers=["CPUExecutionProvider"])
    for _ in range(runs + 5):
        session.run(None, {input_name: data})
    nodes: dict[str, list] = {}
    for event in json.loads(Path(session.end_profiling()).read_text()):
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            entry = nodes.setdefault(event["name"].removesuffix("_kernel_time"),
                                     [event["args"].get("op_name", "?"), event["args"].get("output_type_shape"), []])
            entry[2].append(event["dur"])
    Path(output).write_text(json.dumps(nodes))


def print_rows(title: str, rows: list[tuple[str, str, float, float, float, str]], top: int, middle: str) -> None:
    """`rows`: (name, kind, min, `middle` (median or mean) and 90th percentile ms per run, extra columns)."""
    print(f"  {title}; ms per run: min {middle} p90")
    for name, _, low, mid, high, extra in sorted(rows, key=lambda r: -r[3])[:top]:
        print(f"    {low:7.3f} {mid:7.3f} {high:7.3f}  {extra}  {name[:72]}")
    if len(rows) > top:
        print(f"    ... {len(rows) - top} more")
    kinds: dict[str, np.ndarray] = collections.defaultdict(lambda: np.zeros(4))
    for _, kind, low, mid, high, _ in rows:
        kinds[kind] += (low, mid, high, 1)
    for kind, (low, mid, high, n) in sorted(kinds.items(), key=lambda k: -k[1][1]):
        print(f"    {low:7.3f} {mid:7.3f} {high:7.3f}  {n:3.0f} x {kind}")
    print(f"    {sum(r[2] for r in rows):7.3f} {sum(r[3] for r in rows):7.3f} {sum(r[4] for r in rows):7.3f}  total")


def profile_model(model: str, thread_counts: list[int], runs: int, top: int, with_ort: bool) -> None:
    from xrelay.runtime.iree import backend as iree_backend

    text, data = lowered_model(model)
    by_threads = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "model.vmfb").write_bytes(iree_backend.compile_vmfb(text))
        np.save(work / "input.npy", data)
        for threads in thread_counts:
            load = os.getloadavg()[0]
            calls, n_runs = profile_iree(work / "model.vmfb", work / "input.npy", threads, runs, work)
            ort_nodes = None
            if with_ort:
                subprocess.run([sys.executable, __file__, "--ort-worker", model, str(threads), str(runs),
                                str(work / "ort.json")], check=True, env=CLEAN_ENV)
                ort_nodes = json.loads((work / "ort.json").read_text())
            print(f"\n{model}, {threads} thread(s), {n_runs} profiled runs, 1-min load average {load:.1f}-"
                  f"{os.getloadavg()[0]:.1f}")
            rows = dispatch_rows(calls, n_runs)
            by_threads[threads] = rows
            print_rows(f"IREE (backend=\"iree\"): {len(rows)} dispatch kinds, "
                       f"{sum(len(c) for c in calls.values()) // n_runs} dispatches per run", rows, top, "median")
            busy = sum(e["tile_duration_sum_ns"] for c in calls.values() for e in c)
            wall = sum(e["duration_ns"] for c in calls.values() for e in c)
            print(f"    {busy / wall:.2f} of {threads} worker(s) inside the dispatches on average while they ran")
            if ort_nodes is not None:
                print_rows(f"ONNX Runtime: {len(ort_nodes)} nodes", ort_rows(ort_nodes), top, "mean")
    if len(by_threads) > 1:
        print_speedups(model, by_threads, top)


def ort_rows(ort_nodes: dict) -> list[tuple[str, str, float, float, float, str]]:
    """ONNX Runtime's per-node profile (the first 5 runs dropped) as `print_rows` rows."""
    rows = []
    for name, (op, shape, micros) in ort_nodes.items():
        kept = np.array(micros[5:] or micros) / 1e3
        dims = "x".join(str(d) for d in next(iter(shape[0].values()))) if shape else "?"
        rows.append((f"{name} -> {dims}", kind_of(op), float(kept.min()), float(kept.mean()),
                     float(np.percentile(kept, 90)), f"{op:<18s}"))
    return rows


def print_speedups(model: str, by_threads: dict[int, list], top: int) -> None:
    """Each dispatch's minimum and median per run on every thread count, and first-to-last speedups."""
    counts = list(by_threads)
    first, last = counts[0], counts[-1]
    tables = {t: {r[0]: r for r in rows} for t, rows in by_threads.items()}
    print(f"\n{model}: IREE per dispatch, ms per run (min / median) on {', '.join(map(str, counts))} thread(s); "
          f"speedup {first} -> {last} thread(s) of the minimum and of the median")
    names = sorted(tables[first], key=lambda n: -tables[first][n][3])
    for name in names[:top]:
        cells = "  ".join(f"{tables[t][name][2]:6.3f} / {tables[t][name][3]:6.3f}" for t in counts if name in tables[t])
        if name in tables[last]:
            low = tables[first][name][2] / tables[last][name][2]
            mid = tables[first][name][3] / tables[last][name][3]
            print(f"    {cells}   x{low:4.2f} x{mid:4.2f}  {name[:60]}")
    sums = {t: (sum(r[2] for r in rows), sum(r[3] for r in rows)) for t, rows in by_threads.items()}
    cells = "  ".join(f"{low:6.3f} / {mid:6.3f}" for low, mid in sums.values())
    print(f"    {cells}   x{sums[first][0] / sums[last][0]:4.2f} x{sums[first][1] / sums[last][1]:4.2f}  total")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet18,resnet50")
    parser.add_argument("--threads", default="1", help="task workers (and ORT threads); a list (1,2) "
                        "profiles each and compares them")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--top", type=int, default=20, help="dispatches and nodes listed (default 20)")
    parser.add_argument("--ort-worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.ort_worker:
        model, threads, runs, output = args.ort_worker
        ort_worker(model, int(threads), int(runs), output)
        return 0
    try:
        thread_counts = [int(t) for t in args.threads.split(",")]
    except ValueError:
        parser.error(f"--threads must be a comma-separated list of integers, not {args.threads!r}")
    if min(thread_counts) < 1 or args.runs < 1:
        parser.error("--threads and --runs must be at least 1")
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if not re.fullmatch(r"resnet(18|50)", m)]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; expected resnet18 or resnet50")
    from xrelay.runtime.iree import backend as iree_backend

    if not iree_backend.available():
        parser.error(iree_backend.INSTALL_HINT)
    try:
        import onnxruntime  # noqa: F401
        with_ort = True
    except ImportError:
        print("onnxruntime not installed (pip install -e '.[bench]'): ONNX Runtime skipped")
        with_ort = False
    for model in models:
        profile_model(model, thread_counts, args.runs, args.top, with_ort)
    return 0


if __name__ == "__main__":
    sys.exit(main())
