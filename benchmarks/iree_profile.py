"""Where IREE spends a ResNet run: IREE's time per dispatch beside ONNX Runtime's time per node.

    .venv/bin/python benchmarks/iree_profile.py [--models resnet18,resnet50] [--threads 1] [--runs 30] [--top 20]

Builds each model as benchmarks/through_iree.py's `iree` contender (the opt-level-3 graph, lowered and
compiled exactly as `backend="iree"` does: `iree_backend.prepare`, `compile_vmfb` with DEFAULT_FLAGS),
then, each in a process of its own, one after the other:
- IREE: `iree-benchmark-module` runs it `--runs` times on `--threads` task workers with host-execution
  profiling on, and `iree-profile dispatch` reads the bundle back. Per dispatch (IREE's name says what
  it computes: `conv_7x7x512x3x3x512`, `matmul_49x512x2048`, `_encoding_...` for packing a tensor into
  the data-tiled layout, `slow_memcpy` for a pad's copy): its calls per run, wall time per run (the
  minimum and the mean over runs), the workgroups' summed time per run (with 2 threads, wall below
  half of it means the threads overlapped) and its workgroup count;
- ONNX Runtime (the `bench` extra) with `--threads` intra-op threads and its per-node profiler, on the
  same graph exported to ONNX: per node, the minimum and mean over runs (the first 5 runs dropped).
Both lists are sorted by mean time, followed by totals and times per kind of op. The minimum is the
steadier figure on a shared VM (a vCPU's speed changes by 1.5x over seconds: compare minimums).
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
    from xrelay.runtime import iree_backend

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


def profile_iree(vmfb: Path, data: Path, threads: int, runs: int, work: Path) -> tuple[list[dict], int]:
    """(one record per dispatch, as `iree-profile dispatch --format=jsonl` gives it; runs profiled)."""
    bundle = work / "run.ireeprof"
    subprocess.run([iree_tool("iree-benchmark-module"), f"--module={vmfb}", "--device=local-task",
                    f"--task_topology_group_count={threads}", "--function=main", f"--input=@{data}",
                    "--benchmark_repetitions=1", f"--benchmark_min_time={runs}x",
                    "--device_profiling_mode=host-execution", f"--device_profiling_output={bundle}"],
                   check=True, capture_output=True, env=CLEAN_ENV)
    out = subprocess.run([iree_tool("iree-profile"), "dispatch", "--format=jsonl", str(bundle)],
                         check=True, capture_output=True, text=True).stdout
    groups = [json.loads(line) for line in out.splitlines() if '"host_dispatch_group"' in line]
    return groups, min(g["count"] for g in groups)  # every dispatch runs at least once per run


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


def print_rows(title: str, rows: list[tuple[str, str, float, float, str]], top: int) -> None:
    """`rows`: (name, kind, min ms per run, mean ms per run, extra columns)."""
    print(f"  {title}")
    for name, _, low, mean, extra in sorted(rows, key=lambda r: -r[3])[:top]:
        print(f"    {low:7.3f} {mean:7.3f}  {extra}  {name[:72]}")
    if len(rows) > top:
        print(f"    ... {len(rows) - top} more")
    kinds: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for _, kind, low, mean, _ in rows:
        kinds[kind][0] += low
        kinds[kind][1] += mean
        kinds[kind][2] += 1
    for kind, (low, mean, n) in sorted(kinds.items(), key=lambda k: -k[1][1]):
        print(f"    {low:7.3f} {mean:7.3f}  {n:3d} x {kind}")
    print(f"    {sum(r[2] for r in rows):7.3f} {sum(r[3] for r in rows):7.3f}  total (min, mean ms per run)")


def profile_model(model: str, threads: int, runs: int, top: int, with_ort: bool) -> None:
    from xrelay.runtime import iree_backend

    text, data = lowered_model(model)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "model.vmfb").write_bytes(iree_backend.compile_vmfb(text))
        np.save(work / "input.npy", data)
        load = os.getloadavg()[0]
        groups, n_runs = profile_iree(work / "model.vmfb", work / "input.npy", threads, runs, work)
        ort_nodes = None
        if with_ort:
            subprocess.run([sys.executable, __file__, "--ort-worker", model, str(threads), str(runs),
                            str(work / "ort.json")], check=True, env=CLEAN_ENV)
            ort_nodes = json.loads((work / "ort.json").read_text())
    print(f"\n{model}, {threads} thread(s), {n_runs} profiled runs, 1-min load average {load:.1f}-"
          f"{os.getloadavg()[0]:.1f}; columns: min and mean ms per run")
    rows = []
    for g in groups:
        calls = g["count"] // n_runs
        workgroups = "x".join(str(c) for c in g["last_workgroup_count"] if c > 1) or "1"
        extra = (f"x{calls:<2d} wg time {g['total_tile_duration_sum_ns'] / n_runs / 1e6:7.3f}  "
                 f"{workgroups:>6s} wg")
        rows.append((g["key"], kind_of(g["key"]), g["min_ns"] * calls / 1e6, g["total_ns"] / n_runs / 1e6, extra))
    print_rows(f"IREE (backend=\"iree\"): {len(groups)} dispatch kinds, "
               f"{sum(g['count'] for g in groups) // n_runs} dispatches per run", rows, top)
    busy = sum(g["total_tile_duration_sum_ns"] for g in groups) / n_runs / 1e6
    wall = sum(g["total_ns"] for g in groups) / n_runs / 1e6
    print(f"    workgroups' summed time {busy:.3f} ms per run over {wall:.3f} ms of dispatch wall time: "
          f"{busy / wall:.2f} of {threads} thread(s) busy inside dispatches on average")
    if ort_nodes is not None:
        ort_rows = []
        for name, (op, shape, micros) in ort_nodes.items():
            kept = micros[5:] or micros
            dims = "x".join(str(d) for d in next(iter(shape[0].values()))) if shape else "?"
            ort_rows.append((f"{name} -> {dims}", kind_of(op), min(kept) / 1e3, float(np.mean(kept)) / 1e3,
                             f"{op:<18s}"))
        print_rows(f"ONNX Runtime: {len(ort_rows)} nodes", ort_rows, top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet18,resnet50")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--top", type=int, default=20, help="dispatches and nodes listed (default 20)")
    parser.add_argument("--ort-worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.ort_worker:
        model, threads, runs, output = args.ort_worker
        ort_worker(model, int(threads), int(runs), output)
        return 0
    if args.threads < 1 or args.runs < 1:
        parser.error("--threads and --runs must be at least 1")
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if not re.fullmatch(r"resnet(18|50)", m)]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; expected resnet18 or resnet50")
    from xrelay.runtime import iree_backend

    if not iree_backend.available():
        parser.error(iree_backend.INSTALL_HINT)
    try:
        import onnxruntime  # noqa: F401
        with_ort = True
    except ImportError:
        print("onnxruntime not installed (pip install -e '.[bench]'): ONNX Runtime skipped")
        with_ort = False
    for model in models:
        profile_model(model, args.threads, args.runs, args.top, with_ort)
    return 0


if __name__ == "__main__":
    sys.exit(main())
