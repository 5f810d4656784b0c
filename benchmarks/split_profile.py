"""Where a multi-threaded run of the linalg executor does not scale: per kind of step, and per split.

    .venv/bin/python benchmarks/split_profile.py [--model resnet18] [--kind build] [--threads 2] [--rounds 20]
        [--steps 30] [--ort]

Builds the model as benchmarks/execution.py's contender `--kind` (default `build`: `xrelay.build` at
opt level 3, what a user runs; `opt3-nhwc`: the same graph passes lowered without the kernel passes,
run op by op) and runs it in this process, alternating 1 thread and `--threads` threads round after round
(each round one run of each, untimed runs first), every step timed. Prints:

- per kind of step (convolutions and matmuls, fused elementwise tails, pads, the rest): how many,
  and the sum of their per-step medians on 1 thread and on N threads, with the speed-up;
- per split op on N threads (`threads.run_split`, instrumented here): how long the calling thread's
  part and the workers' parts took (wall and CPU time of the thread), how late the workers started
  after the split began, how long the split waited after its last part ended, and the split's
  wall time: the difference between the sum of split walls and the sum of the slowest parts is
  what hand-offs and imbalance cost;
- with `--steps N`, the N slowest steps on 1 thread, each with its median on N threads (a
  convolution named by its kernel, strides, channels and output size, a fused elementwise tail by
  its ops and shape, a pad by its shapes, a planned contraction's by its matmul's shape);
- with `--ort`, ONNX Runtime's per-node profile of the same model on 1 and N threads (the ONNX model
  benchmarks/execution.py gives ONNX Runtime, run in a process of its own): its N slowest nodes
  (with `--steps N`, else 20) and its time per op type, to set each step beside ORT's node;
- whole-run medians: the steps run in program order as above, and the program called as a user
  calls it (its learnt bindings and kept calls: runtime/executor/bound_steps.py);

A worker part whose CPU time is well above the calling thread's for the same work ran on a slower
core (on a shared VM one core may run at 60-70% of the other's speed for minutes). The machine's
1-minute load average is printed: on a loaded machine the N-thread figures are not meaningful.
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset for the measured process (the script re-executes
itself without them), as in benchmarks/workers.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from collections import defaultdict

import numpy as np
from workers import UNSET_FOR_MEASUREMENT

from execution import Contender


def step_kinds(program) -> list[str]:
    """A kind per step of `program`: contraction (a convolution's, a depthwise one's, a planned
    matmul's), a contraction with its fused tail, elementwise tail, pad or other."""
    from xrelay.runtime.kernels.conv_epilogue import ConvStep, TailIntoPad
    from xrelay.runtime.executor.pad_step import PadStep
    from xrelay.runtime.executor.plan import FusedTail

    kinds = []
    for step in program.steps:
        run = (getattr(step, "__defaults__", None) or (None,))[0]
        if isinstance(step, ConvStep):
            kinds.append("structured op (conv, matmul, ...)" if step.tail is None
                         else "conv + its elementwise tail (fused)")
        elif isinstance(step, FusedTail | TailIntoPad):
            kinds.append("elementwise tail (fused, in place)")
        elif isinstance(step, PadStep):
            kinds.append("pad")
        elif callable(run) and "compile_structured" in getattr(run, "__qualname__", ""):
            kinds.append("structured op (conv, matmul, ...)")
        else:
            kinds.append("other (binders, views, copies)")
    return kinds


class SplitRecorder:
    """Times every split's parts by wrapping `threads.run_split` (the calling thread's part first),
    where it is defined and where the convolution kernels call it."""

    def __init__(self):
        from xrelay.runtime.kernels import conv
        from xrelay.runtime.parallel import threads as worker_threads

        self.records: list[tuple] = []
        self.original = worker_threads.run_split
        self.modules = (worker_threads, conv)
        recorder = self

        def run(threads, calls):
            marks: list = [None] * len(calls)

            def timed(i, call):
                def part():
                    wall, cpu = time.perf_counter(), time.thread_time()
                    call()
                    marks[i] = (wall, time.perf_counter(), time.thread_time() - cpu)
                return part

            start = time.perf_counter()
            recorder.original(threads, [timed(i, call) for i, call in enumerate(calls)])
            recorder.records.append((start, time.perf_counter(), marks))

        for module in self.modules:
            module.run_split = run

    def close(self) -> None:
        for module in self.modules:
            module.run_split = self.original

    def summary(self) -> dict[str, float]:
        """Sums over the recorded splits, in ms: split wall, calling thread's part (wall, CPU),
        workers' parts (wall, CPU), worker start delay, wait after the last part, slowest part."""
        totals = defaultdict(float)
        for start, end, marks in self.records:
            if any(m is None for m in marks):
                continue
            here, workers = marks[0], marks[1:]
            totals["splits"] += 1
            totals["split wall"] += (end - start) * 1e3
            totals["calling thread's part, wall"] += (here[1] - here[0]) * 1e3
            totals["calling thread's part, CPU"] += here[2] * 1e3
            totals["workers' parts, wall"] += sum(m[1] - m[0] for m in workers) * 1e3
            totals["workers' parts, CPU"] += sum(m[2] for m in workers) * 1e3
            totals["worker start delay"] += sum(m[0] - start for m in workers) * 1e3
            totals["wait after the last part"] += (end - max(m[1] for m in marks)) * 1e3
            totals["slowest part (from the split's start)"] += (max(m[1] for m in marks) - start) * 1e3
        return totals


def step_label(step) -> str:
    """What a step computes, for the per-step listing: a convolution's kernel and weight shapes, a
    fused elementwise tail's ops and result shape, a pad's shapes, a depthwise step's einsum and
    multiply-adds, a planned contraction's matmul shape; "" for other steps."""
    from xrelay.runtime.kernels.conv_epilogue import ConvStep, TailIntoPad
    from xrelay.runtime.kernels.contraction_plan import PlannedContraction
    from xrelay.runtime.executor.pad_step import PadStep
    from xrelay.runtime.executor.plan import FusedTail

    def dims(shape) -> str:
        return "x".join(str(n) for n in shape)

    if isinstance(step, TailIntoPad):
        return f"{step_label(step.tail)} +pad"
    if isinstance(step, FusedTail):
        names = []
        for chunked, *_ in step.members:
            op = chunked.op
            body = [inner.name.split(".")[-1] for inner in op.body.block.ops
                    if inner.name not in ("linalg.yield", "arith.constant")]
            names.append(op.name.removeprefix("linalg.") + (f"({','.join(body)})" if op.name == "linalg.generic" else ""))
        return f"tail {'+'.join(names)} {dims(step.members[-1][0].op.results[0].type.get_shape())}"
    if isinstance(step, PadStep):
        return f"pad {dims(step.source_shape)} -> {dims(step.shape)}" + (" (transposed)" if step.permutation is not None else "")
    if isinstance(getattr(step, "planned", None), PlannedContraction):  # runtime/kernels/contraction_plan.py
        return f"matmul {dims(step.planned.shape)} (batch x rows x cols)"
    if not isinstance(step, ConvStep):
        return plain_step_label(step)
    g, op = step.geometry, step.op
    weight = op.inputs[g.weight].type.get_shape()
    out = op.results[0].type.get_shape()
    f, c, kh, kw = (weight[a] for a in g.weight_axes)
    n, _, oh, ow = (out[a] for a in g.out_axes)
    label = f"conv {kh}x{kw}/{g.strides[0]} {c}->{f} out {oh}x{ow}"
    return label + (" +tail" if step.tail is not None else "") + (" +pad" if step.pad is not None else "")



def plain_step_label(step) -> str:
    """A step compiled as a plain function (linalg_exec) that runs an elementwise or pooling op
    split in parts (`plan.ChunkedOp`): the op and its result shape; "" for other steps."""
    from xrelay.runtime.executor.plan import ChunkedOp

    defaults = getattr(step, "__defaults__", None) or ()
    run = defaults[0] if defaults else None
    op = getattr(getattr(run, "__self__", None), "op", None) if isinstance(getattr(run, "__self__", None),
                                                                          ChunkedOp) else None
    if op is not None:
        body = [inner.name.split(".")[-1] for inner in op.body.block.ops
                if inner.name not in ("linalg.yield", "arith.constant")]
        shape = "x".join(str(n) for n in op.outputs[0].type.get_shape())
        return f"{op.name.removeprefix('linalg.')}({','.join(body)}) {shape}"
    return ""


def function_name(step) -> str:
    """The name of the function a step is (a lambda: the function that made it)."""
    name = getattr(step, "__qualname__", type(step).__name__).replace(".<locals>", "")
    return name.split(".")[-2] if name.endswith("<lambda>") and "." in name else name.split(".")[-1]


def ort_node_profile(onnx_bytes: bytes, feeds: dict, threads: int, runs: int) -> list[tuple[str, str, str, float]]:
    """ONNX Runtime's profile of a model: per node (name, op type, output shape, median µs of its kernel
    over `runs` runs after 5 untimed ones), in the order ORT reports them."""
    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as tmp:
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads, options.log_severity_level = threads, 1, 3
        options.enable_profiling, options.profile_file_prefix = True, str(Path(tmp) / "ort")
        session = ort.InferenceSession(onnx_bytes, options, providers=["CPUExecutionProvider"])
        for _ in range(runs + 5):
            session.run(None, feeds)
        events = json.loads(Path(session.end_profiling()).read_text())
    nodes: dict[str, list] = {}
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            args = event["args"]
            shape = args.get("output_type_shape") or [{}]
            dims = "x".join(str(d) for d in next(iter(shape[0].values()), []))
            nodes.setdefault(event["name"].removesuffix("_kernel_time"), [args.get("op_name", "?"), dims, []])[2].append(
                event["dur"])
    return [(name, op, dims, float(np.median(micros[5:] or micros))) for name, (op, dims, micros) in nodes.items()]


def ort_worker(model: str, threads: int, runs: int) -> None:
    """Print `ort_node_profile` of `model` (as benchmarks/execution.py gives it to ONNX Runtime) as JSON."""
    from execution import load_model, onnx_model
    from xrelay.frontend import bind_params_by_name

    module, params, data, proto, input_name = load_model(model)
    onnx_bytes = (proto if proto is not None else onnx_model(bind_params_by_name(module, params))).SerializeToString()
    print(json.dumps(ort_node_profile(onnx_bytes, {input_name: data}, threads, runs)))


def print_ort_profile(model: str, thread_counts: list[int], runs: int, top: int) -> None:
    """ONNX Runtime's per-node profile of `model` per thread count, each in a process of its own."""
    env = {k: v for k, v in os.environ.items() if k not in UNSET_FOR_MEASUREMENT}
    for threads in thread_counts:
        done = subprocess.run([sys.executable, os.path.abspath(__file__), "--ort-worker", model, str(threads), str(runs)],
                              capture_output=True, text=True, env=env)
        if done.returncode != 0:
            print(f"  ONNX Runtime, {threads} thread(s): failed: {done.stderr.strip().splitlines()[-1:]}")
            continue
        nodes = json.loads(done.stdout)
        print(f"  ONNX Runtime, {threads} thread(s), {len(nodes)} nodes, median µs over {runs} runs: "
              f"{sum(n[3] for n in nodes) / 1e3:.2f} ms in kernels; the {top} slowest nodes:")
        for name, op, dims, micros in sorted(nodes, key=lambda n: -n[3])[:top]:
            print(f"    {micros / 1e3:7.3f} ms  {op:20s} {dims:18s} {name[:40]}")
        per_op: dict[str, list[float]] = defaultdict(list)
        for _, op, _, micros in nodes:
            per_op[op].append(micros)
        print("    per op type: " + ", ".join(f"{op} {len(t)} x {sum(t) / 1e3:.2f} ms"
                                              for op, t in sorted(per_op.items(), key=lambda kv: -sum(kv[1]))))


def timed_run(program, data, threads: int) -> list[float]:
    """One run of `program` with `threads` threads, each step's wall time in seconds."""
    from xrelay.runtime.parallel.threads import set_blas_threads, split_blas_threads

    set_blas_threads(threads)
    env: list = [None] * len(program.slots)
    env[0] = data
    times = []
    with split_blas_threads():
        for step in program.steps:
            start = time.perf_counter()
            step(env)
            times.append(time.perf_counter() - start)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet18", help="resnet18, resnet50, mobilenet_v2, efficientnet_b0 or onnx:<light model>")
    parser.add_argument("--kind", default="build", help="benchmarks/execution.py's contender (build, opt3-nhwc)")
    parser.add_argument("--threads", type=int, default=2, help="the thread count compared with 1 (at least 2)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=0, help="also list the N slowest steps (per-step medians)")
    parser.add_argument("--ort", action="store_true", help="also print ONNX Runtime's per-node profile")
    parser.add_argument("--ort-worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.ort_worker:
        model, threads, runs = args.ort_worker
        ort_worker(model, int(threads), int(runs))
        return 0
    if args.threads < 2:
        print(f"split_profile.py: --threads {args.threads}: give the thread count to compare with 1 thread, at least 2",
              file=sys.stderr)
        return 1
    if any(var in os.environ for var in UNSET_FOR_MEASUREMENT):
        env = {k: v for k, v in os.environ.items() if k not in UNSET_FOR_MEASUREMENT}
        env["OPENBLAS_NUM_THREADS"] = str(args.threads)
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), *sys.argv[1:]], env)

    from xrelay.runtime.parallel.threads import set_blas_threads

    contender = Contender(args.kind, args.model)
    program, data = contender.program, contender.data
    kinds = step_kinds(program)
    per_step: dict[int, list] = {1: [], args.threads: []}
    calls: dict[int, list] = {1: [], args.threads: []}
    for threads in per_step:  # untimed
        timed_run(program, data, threads)
    loads = [os.getloadavg()[0]]
    recorder = SplitRecorder()  # only the N-thread runs split
    try:
        for _ in range(args.rounds):
            for threads, runs in per_step.items():
                runs.append(timed_run(program, data, threads))
    finally:
        recorder.close()
    for _ in range(args.rounds):
        for threads, times in calls.items():
            set_blas_threads(threads)
            start = time.perf_counter()
            program(data)
            times.append(time.perf_counter() - start)
    loads.append(os.getloadavg()[0])

    print(f"{args.model}: {len(program.steps)} steps, {args.rounds} rounds alternating 1 and {args.threads} "
          f"threads; 1-min load average {min(loads):.1f}-{max(loads):.1f}")
    medians = {t: np.median(np.array(runs), axis=0) * 1e3 for t, runs in per_step.items()}
    print(f"  {'kind of step':40s} {'steps':>5s} {'1 thread':>10s} {f'{args.threads} threads':>10s} {'speed-up':>9s}")
    for kind in sorted(set(kinds), key=lambda k: -sum(m for m, s in zip(medians[1], kinds) if s == k)):
        one, many = (sum(m for m, s in zip(medians[t], kinds) if s == kind) for t in per_step)
        print(f"  {kind:40s} {kinds.count(kind):5d} {one:8.2f} ms {many:8.2f} ms {one / max(many, 1e-9):8.2f}x")
    if args.steps:
        labels = [step_label(step) or kind for step, kind in zip(program.steps, kinds)]
        print(f"  the {args.steps} slowest steps on 1 thread (median ms: 1 thread, {args.threads} threads):")
        for i in sorted(range(len(kinds)), key=lambda i: -medians[1][i])[:args.steps]:
            print(f"    step {i:4d} {medians[1][i]:7.3f} {medians[args.threads][i]:7.3f}  {labels[i]}")
    for label, runs_by_threads in (("whole run, steps in order (median)", {t: [sum(run) for run in runs] for t, runs
                                                                           in per_step.items()}),
                                   ("program(data) (median)", calls)):
        whole = {t: statistics.median(times) * 1e3 for t, times in runs_by_threads.items()}
        print(f"  {label:40s} {'':5s} {whole[1]:8.2f} ms {whole[args.threads]:8.2f} ms "
              f"{whole[1] / whole[args.threads]:8.2f}x")
    totals = recorder.summary()
    splits = max(totals.pop("splits", 0), 1)
    print(f"  splits on {args.threads} threads: {splits / args.rounds:.0f} per run; per run, summed over them:")
    for name, value in totals.items():
        print(f"    {name:40s} {value / args.rounds:8.2f} ms")
    if args.ort:
        print_ort_profile(args.model, [1, args.threads], max(args.rounds, 10), args.steps or 20)
    return 0



if __name__ == "__main__":
    sys.exit(main())
