"""The two-process mode against the thread mode, model by model (a correctness check, not a timing).

    .venv/bin/python benchmarks/check_processes.py [model ...] [--off module.FLAG ...] [--on module.FLAG ...]

Each model (an ONNX zoo model's name, or `resnet18` for xrelay's own; default: all ten) is compiled as
`benchmarks/execution.py` compiles it (opt-level-3 + NHWC). Its output on 2 threads in the thread mode
(`threading = "split"`) is the reference; then three calls with `threading = "processes"` (the default
on 2 threads from a program's third call, runtime/parallel/spmd.py), each printed as its largest difference
relative to the reference's largest magnitude. The benchmarks' error columns check a program's first
call, which runs on threads; this checks the mode users get from then on. Above 1e-4 is a bug (exit
status 1). `--off`/`--on` set a module flag before compiling (e.g. `--on xrelay.runtime.parallel.spmd.CHECK_BINDINGS`).
"""

from __future__ import annotations

import argparse
import importlib
import sys

import numpy as np
from execution import Contender

from xrelay.runtime.parallel.threads import set_blas_threads

ZOO = ("bvlc_alexnet", "zfnet512", "vgg19", "inception_v1", "inception_v2", "resnet50", "densenet121",
       "shufflenet", "squeezenet", "resnet18")
TOLERANCE = 1e-4


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=list(ZOO))
    parser.add_argument("--off", action="append", default=[], metavar="module.FLAG")
    parser.add_argument("--on", action="append", default=[], metavar="module.FLAG")
    args = parser.parse_args(argv)
    for flags, value in ((args.off, False), (args.on, True)):
        for flag in flags:
            module, name = flag.rsplit(".", 1)
            setattr(importlib.import_module(module), name, value)
            print(f"{flag} = {value}")
    worst = 0.0
    for model in args.models:
        contender = Contender("opt3-nhwc", model if model == "resnet18" else f"onnx:{model}")
        set_blas_threads(2)
        reference = np.array(contender.fn(2)[0])
        scale = max(float(np.max(np.abs(reference))), 1e-30)
        contender.program.threading = "processes"
        diffs = [float(np.max(np.abs(np.array(contender.fn(2)[0]) - reference))) / scale for _ in range(3)]
        contender.program.close()
        worst = max(worst, *diffs)
        print(f"{model:14s} first call vs nn level {contender.error:.1e}; two processes vs threads: "
              + ", ".join(f"{d:.1e}" for d in diffs), flush=True)
    print(f"worst {worst:.1e}: " + ("a bug (above 1e-4)" if worst > TOLERANCE else "ok"))
    return 1 if worst > TOLERANCE else 0


if __name__ == "__main__":
    sys.exit(main())
