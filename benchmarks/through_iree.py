"""IREE benchmark: ResNet-18/50 latency through IREE against xrelay's linalg executor and ONNX Runtime.

    .venv/bin/python benchmarks/through_iree.py [--models resnet18,resnet50] [--threads 2] [--rounds 6] [--block 3]
        [--contenders opt3-nhwc,iree-nhwc,iree-img2col,ort]

Models: batch 1, 3x224x224, weights bound as constants, after the opt-level-3 graph passes
(SimplifyInference, FoldScaleAxis, FoldConstant). Contenders, each in a process of its own (a worker:
this script with `--worker`), taking turns round after round (`workers.py`) as in `execution.py`
(whose contenders and models this script reuses):
- xrelay's linalg executor on the NHWC graph (execution.py's `opt3-nhwc`);
- IREE (`runtime.iree_backend`, llvm-cpu for the host CPU), by default in two configurations of the
  NHWC graph (xrelay's ConvertLayout to NHWC/HWIO + FoldConstant before lowering, the fastest layout
  measured: what `backend="iree"` does): `iree-nhwc` (IREE's default flags) and `iree-img2col`
  (`IMG2COL_FLAGS`: --iree-opt-level=O3 and IREE's conv-to-im2col+matmul preprocessing, 2-2.5x
  faster on ResNet-50 in a loaded 1-thread comparison, not better on ResNet-18); with `--contenders`
  also `iree-flag` (the NCHW graph, IREE's own `iree-preprocessing-convert-conv-to-channels-last`
  pass) and `iree-nchw` (the NCHW graph, IREE's defaults); IREE's task executor gets `--threads`
  worker threads; the flags of each IREE contender are printed;
- ONNX Runtime (the `bench` extra), `--threads` intra-op threads: the reference for the ratios.
Compile time (IREE) is printed once per contender; every output is checked against the nn level.
The measured processes run without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
from workers import Worker, alternate, close_all, serve

import execution  # the sibling benchmark (its contenders, models and ONNX graph builder)

CONTENDERS = {
    "opt3-nhwc": "xrelay linalg executor (NHWC)",
    "iree-nhwc": "IREE, xrelay's NHWC ConvertLayout",
    "iree-img2col": "IREE, xrelay's NHWC, O3 + im2col",
    "iree-flag": "IREE, NCHW + IREE channels-last pass",
    "iree-nchw": "IREE, NCHW, IREE defaults",
    "ort": "onnxruntime",
}
CHANNELS_LAST_FLAG = ("--iree-preprocessing-pass-pipeline="
                      "builtin.module(util.func(iree-preprocessing-convert-conv-to-channels-last))")
IMG2COL_FLAGS = ("--iree-opt-level=O3", "--iree-preprocessing-pass-pipeline="
                 "builtin.module(util.func(iree-global-opt-convert-conv2d-to-img2col))")
"""Every convolution as im2col + matmul (IREE's data tiling, --iree-opt-data-tiling, would pack those
matmuls, but IREE 3.13 then fails on ResNet-50: 'operations with large vector sizes (32768 bytes)')."""
KIND_FLAGS = {"iree-flag": (CHANNELS_LAST_FLAG,), "iree-img2col": IMG2COL_FLAGS}


class IreeContender(execution.Contender):
    """The opt-level-3 graph compiled by IREE in one of the three layouts; `fn` runs it once (turns as
    execution.py's contenders take them)."""

    def __init__(self, kind: str, model: str, threads: int):
        import iree.runtime

        from xrelay import passes, transform
        from xrelay.frontend import bind_params_by_name
        from xrelay.runtime import iree_backend
        from xrelay.runtime.interpreter import run as run_nn

        iree.runtime.flags.parse_flags(f"--task_topology_group_count={threads}")  # before the device exists
        module, params, self.data, _, input_name = execution.load_model(model)
        reference = run_nn(module, {input_name: self.data}, params)
        with transform.PassContext(opt_level=3):
            graph = transform.Sequential([passes.SimplifyInference(), passes.FoldScaleAxis(), passes.FoldConstant()])(
                bind_params_by_name(module, params))
        start = time.perf_counter()
        self.program = iree_backend.compile_module(
            graph, channels_last=kind in ("iree-nhwc", "iree-img2col"), flags=KIND_FLAGS.get(kind, ()))
        self.compile_s = time.perf_counter() - start
        self.fn = lambda threads: self.program(self.data)
        out = self.fn(threads)[0]
        self.error = float(np.max(np.abs(out - reference) / np.maximum(np.abs(reference), 1e-30)))


def worker(kind: str, model: str, threads: int) -> None:
    """Serve one contender (`workers.serve`), as `execution.worker` does."""
    if kind.startswith("iree"):
        contender = IreeContender(kind, model, threads)
        info = {"error": contender.error, "compile_s": contender.compile_s, "version": None}
    else:
        contender = execution.Contender(kind, model)
        info = {"error": contender.error, "compile_s": None,
                "version": contender.ort.__version__ if hasattr(contender, "ort") else None}
    serve(info, lambda command: {"times": contender.turn(command["threads"], command["block"])})


def bench_model(model: str, threads: int, rounds: int, block: int, kinds: list[str]) -> None:
    workers = {}
    try:
        for kind in kinds:
            workers[kind] = Worker(__file__, [kind, model, str(threads)], threads)
        print(f"\n{model}, batch 1, 3x224x224, opt-level-3 graph, {threads} thread(s) "
              f"(contenders in processes of their own, {os.cpu_count()} CPUs)")
        for kind, w in workers.items():
            compiled = f"; IREE compile {w.info['compile_s']:.1f} s" if w.info["compile_s"] is not None else ""
            print(f"  {CONTENDERS[kind]:<40} max relative error vs nn level: {w.info['error']:.2e}{compiled}")
        if any(k.startswith("iree") for k in kinds):
            from xrelay.runtime import iree_backend

            print(f"  IREE flags (all): {' '.join((*iree_backend.TARGET_FLAGS, '--iree-llvmcpu-target-cpu=host'))}")
            for kind in (k for k in kinds if k in KIND_FLAGS):
                print(f"  IREE flags ({kind}): {' '.join(KIND_FLAGS[kind])}")
        results, loads = alternate(workers, rounds, threads=threads, block=block)
    finally:
        close_all(workers)
    medians = {k: statistics.median(r[0]) * 1e3 for k, r in results.items()}
    ort_ms = medians.get("ort")
    print(f"  medians of {rounds} rounds x {block} runs; 1-min load average {min(loads):.1f}-{max(loads):.1f}")
    for kind, ms in medians.items():
        ratio = f"{ms / ort_ms:6.2f}x ORT" if ort_ms else ""
        label = CONTENDERS[kind] + (f" {workers[kind].info['version']}" if kind == "ort" else "")
        print(f"  {label:<40} {ms:7.1f} ms  {ratio}")
    iree = {k: ms for k, ms in medians.items() if k.startswith("iree")}
    if iree:
        best = min(iree, key=iree.get)
        print(f"  fastest IREE layout: {CONTENDERS[best]}"
              + (f" ({iree[best] / ort_ms:.2f}x ONNX Runtime; goal 1.5x)" if ort_ms else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet18,resnet50")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--block", type=int, default=3, help="timed runs per turn (default 3)")
    default = "opt3-nhwc,iree-nhwc,iree-img2col,ort"
    parser.add_argument("--contenders", default=default, help="comma-separated subset of: "
                        + ", ".join(CONTENDERS) + f" (default: {default})")
    parser.add_argument("--worker", nargs=3, metavar=("CONTENDER", "MODEL", "THREADS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker[0], args.worker[1], int(args.worker[2]))
        return 0
    kinds = [k for k in args.contenders.split(",") if k]
    unknown = [k for k in kinds if k not in CONTENDERS]
    if unknown:
        parser.error(f"unknown contender(s) {', '.join(unknown)}; expected some of {', '.join(CONTENDERS)}")
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        print("onnxruntime not installed (pip install -e '.[bench]'): ONNX Runtime skipped")
        kinds = [k for k in kinds if k != "ort"]
    for model in [m for m in args.models.split(",") if m]:
        bench_model(model, args.threads, args.rounds, args.block, kinds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
