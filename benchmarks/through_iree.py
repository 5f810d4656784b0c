"""IREE benchmark: ResNet-18/50 latency through IREE against xrelay's linalg executor and ONNX Runtime.

    .venv/bin/python benchmarks/through_iree.py [--models resnet18,resnet50] [--threads 2] [--rounds 6] [--block 3]
        [--contenders opt3-nhwc,iree,iree-nhwc,ort]

Models: batch 1, 3x224x224, weights bound as constants, after the opt-level-3 graph passes
(SimplifyInference, FoldScaleAxis, FoldConstant). Contenders, each in a process of its own (a worker:
this script with `--worker`), taking turns round after round (`workers.py`) as in `execution.py`
(whose contenders and models this script reuses):
- `opt3-nhwc`: xrelay's linalg executor on the NHWC graph (execution.py's);
- `iree`: what `backend="iree"` does by default: xrelay's ConvertLayout to NHWC/HWIO, lowering to
  linalg, `conv-space-to-depth` (the stride-2 RGB stem as a stride-1 convolution over 12 channels),
  `conv-to-matmul` (1x1 convolutions as `linalg.matmul`), `pool-as-window-slices` (pools as an
  elementwise max of their strided window slices), compiled with
  `iree_backend.DEFAULT_FLAGS` (data tiling of matmuls and convolutions, IREE's microkernels), the
  data-tiled convolutions of at most 7 output rows given workgroup tiles of whole rows;
- `iree-nhwc`: the last release's default: NHWC linalg without the rewrites, IREE's default flags;
- with `--contenders` also: `iree-rows-off` (`iree` with the workgroup tiles IREE configures for the
  data-tiled convolutions, not the whole-row tiles of `runtime/iree/conv_tiles.py`),
  `iree-c2m` (NHWC + the rewrites, IREE's default flags), `iree-tiling`
  (NHWC without the rewrites, DEFAULT_FLAGS), `iree-img2col` (NHWC, --iree-opt-level=O3 and IREE's
  conv-to-im2col preprocessing), `iree-flag` (the NCHW graph, IREE's own
  `iree-preprocessing-convert-conv-to-channels-last` pass), `iree-nchw` (NCHW, IREE's defaults);
- `ort`: ONNX Runtime (the `bench` extra), `--threads` intra-op threads: the reference for the ratios.
IREE's task executor gets `--threads` worker threads; every IREE contender's flags and compile time
are printed, every output is checked against the nn level. Each contender's CPU time per run (all
its threads) is printed beside the wall-clock medians: on a loaded machine it moves less.
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
    "iree": "IREE, backend=\"iree\" default",
    "iree-rows-off": "IREE, default without whole-row tiles",
    "iree-nhwc": "IREE, NHWC, IREE default flags",
    "iree-c2m": "IREE, NHWC + rewrites, IREE flags",
    "iree-tiling": "IREE, NHWC, data tiling flags",
    "iree-img2col": "IREE, NHWC, O3 + im2col",
    "iree-flag": "IREE, NCHW + IREE channels-last pass",
    "iree-nchw": "IREE, NCHW, IREE default flags",
    "ort": "onnxruntime",
}
CHANNELS_LAST_FLAG = ("--iree-preprocessing-pass-pipeline="
                      "builtin.module(util.func(iree-preprocessing-convert-conv-to-channels-last))")
REWRITES = "conv-space-to-depth, conv-to-matmul, pool-as-window-slices"
"""The lowering passes `passes/iree_lowering.py` runs after lowering (the `iree` contender's, and `iree-c2m`'s)."""
IMG2COL_FLAGS = ("--iree-opt-level=O3", "--iree-preprocessing-pass-pipeline="
                 "builtin.module(util.func(iree-global-opt-convert-conv2d-to-img2col))")


def iree_configuration(kind: str) -> tuple[bool, bool, tuple[str, ...]]:
    """(NHWC, the rewrites (REWRITES), iree-compile flags) of an IREE contender."""
    from xrelay.runtime.iree.backend import DEFAULT_FLAGS

    return {"iree": (True, True, DEFAULT_FLAGS), "iree-rows-off": (True, True, DEFAULT_FLAGS), "iree-nhwc": (True, False, ()), "iree-c2m": (True, True, ()),
            "iree-tiling": (True, False, DEFAULT_FLAGS), "iree-img2col": (True, False, IMG2COL_FLAGS),
            "iree-flag": (False, False, CHANNELS_LAST_FLAG), "iree-nchw": (False, False, ())}[kind]


class IreeContender(execution.Contender):
    """The opt-level-3 graph compiled by IREE in one configuration (`iree_configuration`); `fn` runs
    it once (turns as execution.py's contenders take them)."""

    def __init__(self, kind: str, model: str, threads: int):
        import iree.runtime

        from xrelay import passes, transform
        from xrelay.frontend import bind_params_by_name
        from xrelay.lowering import lower
        from xrelay.lowering.conv_as_matmul import ConvToMatmul
        from xrelay.lowering.conv_space_to_depth import ConvSpaceToDepth
        from xrelay.lowering.pool_as_window_slices import PoolAsWindowSlices
        from xrelay.runtime.iree import backend as iree_backend
        from xrelay.runtime.reference.interpreter import run as run_nn

        iree.runtime.flags.parse_flags(f"--task_topology_group_count={threads}")  # before the device exists
        module, params, self.data, _, input_name = execution.load_model(model)
        reference = run_nn(module, {input_name: self.data}, params)
        nhwc, rewrites, flags = iree_configuration(kind)
        with transform.PassContext(opt_level=3):
            graph = transform.Sequential([passes.SimplifyInference(), passes.FoldScaleAxis(), passes.FoldConstant()])(
                bind_params_by_name(module, params))
            if kind not in ("iree", "iree-rows-off"):  # the others lowered here, as the configuration says
                if nhwc:
                    graph = transform.Sequential(
                        [passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}), passes.FoldConstant()])(graph)
                graph = lower(graph, to="linalg")
                if rewrites:
                    graph = transform.Sequential([ConvSpaceToDepth(), ConvToMatmul(), PoolAsWindowSlices()])(graph)
        start = time.perf_counter()
        # `iree` is backend="iree" itself: its own lowering (iree_backend.prepare) and default flags
        if kind == "iree":
            self.program = iree_backend.compile_module(graph)
        elif kind == "iree-rows-off":
            self.program = iree_backend.compile_text(str(iree_backend.prepare(graph)))  # tiles not read
        else:
            self.program = iree_backend.compile_text(str(graph), flags)
        self.compile_s = time.perf_counter() - start
        self.fn = lambda threads: self.program(self.data)
        out = self.fn(threads)[0]
        self.error = float(np.max(np.abs(out - reference) / np.maximum(np.abs(reference), 1e-30)))


def worker(kind: str, model: str, threads: int) -> None:
    """Serve one contender (`workers.serve`), as `execution.worker` does; each turn also reports the
    process's CPU time per run (the untimed run and the timed ones)."""
    if kind.startswith("iree"):
        contender = IreeContender(kind, model, threads)
        info = {"error": contender.error, "compile_s": contender.compile_s, "version": None}
    else:
        contender = execution.Contender(kind, model)
        info = {"error": contender.error, "compile_s": None,
                "version": contender.ort.__version__ if hasattr(contender, "ort") else None}

    cpu_per_run: list[float] = []  # every turn's, sent with each reply (the last reply has them all)

    def turn(command: dict) -> dict:
        cpu = time.process_time()
        times = contender.turn(command["threads"], command["block"])
        cpu_per_run.append((time.process_time() - cpu) / (command["block"] + 1))
        return {"times": times, "cpu_per_run": cpu_per_run}

    serve(info, turn)


def bench_model(model: str, threads: int, rounds: int, block: int, kinds: list[str]) -> None:
    workers = {}
    try:
        for kind in kinds:
            workers[kind] = Worker(__file__, [kind, model, str(threads)], threads)
        print(f"\n{model}, batch 1, 3x224x224, opt-level-3 graph, {threads} thread(s) "
              f"(contenders in processes of their own, {os.cpu_count()} CPUs)")
        for kind, w in workers.items():
            compiled = f"; IREE compile {w.info['compile_s']:.1f} s" if w.info["compile_s"] is not None else ""
            print(f"  {kind:<12} max relative error vs nn level: {w.info['error']:.2e}{compiled}")
        if any(k.startswith("iree") for k in kinds):
            from xrelay.runtime.iree import backend as iree_backend

            print(f"  IREE flags (all): {' '.join((*iree_backend.TARGET_FLAGS, '--iree-llvmcpu-target-cpu=host'))}")
            for kind in (k for k in kinds if k.startswith("iree")):
                nhwc, rewrites, flags = iree_configuration(kind)
                form = ("NHWC" if nhwc else "NCHW") + (f" + {REWRITES}" if rewrites else "")
                print(f"  {kind:<12} {form}; flags: {' '.join(flags) or '(none: IREE defaults)'}")
        results, loads = alternate(workers, rounds, threads=threads, block=block)
    finally:
        close_all(workers)
    medians = {k: statistics.median(r[0]) * 1e3 for k, r in results.items()}
    cpu_ms = {k: statistics.median(r[3]["cpu_per_run"]) * 1e3 for k, r in results.items()}
    ort_ms, ort_cpu = medians.get("ort"), cpu_ms.get("ort")
    print(f"  medians of {rounds} rounds x {block} runs; 1-min load average {min(loads):.1f}-{max(loads):.1f}")
    print(f"  {'contender':<12} {'':<40} {'wall':>8}  {'vs ORT':>8}  {'CPU/run':>8}  {'vs ORT':>8}")
    for kind, ms in medians.items():
        label = CONTENDERS[kind] + (f" {workers[kind].info['version']}" if kind == "ort" else "")
        ratio = f"{ms / ort_ms:7.2f}x" if ort_ms else ""
        cpu_ratio = f"{cpu_ms[kind] / ort_cpu:7.2f}x" if ort_cpu else ""
        print(f"  {kind:<12} {label:<40} {ms:6.1f}ms  {ratio:>8}  {cpu_ms[kind]:6.1f}ms  {cpu_ratio:>8}")
    iree = {k: ms for k, ms in medians.items() if k.startswith("iree")}
    if iree:
        best = min(iree, key=iree.get)
        print(f"  fastest IREE configuration: {best}"
              + (f" ({iree[best] / ort_ms:.2f}x ONNX Runtime; goal 1.5x)" if ort_ms else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet18,resnet50")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--block", type=int, default=3, help="timed runs per turn (default 3)")
    default = "opt3-nhwc,iree,iree-nhwc,ort"
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
