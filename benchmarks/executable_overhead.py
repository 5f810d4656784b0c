"""What calling `xrelay.build`'s executable, and `runtime.run` on its module, cost over its compiled
program: the three called in turn on the same input in this process (thread mode), medians and their
ratios to the program.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python benchmarks/executable_overhead.py \
        [--model squeezenet] [--calls 60]

The model is an ONNX light-zoo model with random weights (tests/onnx_models.py), built at opt level 3.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path


def measure(model: str, calls: int) -> tuple[float, float, float]:
    """(program, executable, runtime.run) median seconds per call over `calls` rounds of one call each."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from onnx_models import light_model, randomised, zoo_inputs

    import xrelay
    from xrelay import transform
    from xrelay.frontend import from_onnx
    from xrelay.runtime import run
    from xrelay.runtime.executor.linalg_exec import LinalgProgram
    from xrelay.runtime.executor.program_entry import cached_program

    proto = randomised(light_model(model))
    (data,) = zoo_inputs(proto).values()
    module, params = from_onnx(proto)
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(module, params)
    program = executable.program
    program.threading = "split"
    cached_program(executable.module, LinalgProgram).threading = "split"  # the program runtime.run keeps
    for _ in range(3):
        executable(data), program(data), run(executable.module, [data])
    bare, wrapped, through_run = [], [], []
    for _ in range(calls):
        start = time.perf_counter()
        program(data)
        bare.append(time.perf_counter() - start)
        start = time.perf_counter()
        executable(data)
        wrapped.append(time.perf_counter() - start)
        start = time.perf_counter()
        run(executable.module, [data])
        through_run.append(time.perf_counter() - start)
    return statistics.median(bare), statistics.median(wrapped), statistics.median(through_run)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="squeezenet", help="ONNX light-zoo model (default squeezenet)")
    parser.add_argument("--calls", type=int, default=60)
    args = parser.parse_args(argv)
    bare, wrapped, through_run = measure(args.model, args.calls)
    print(f"{args.model}: program {bare * 1e3:.3f} ms, executable {wrapped * 1e3:.3f} ms (ratio "
          f"{wrapped / bare:.3f}), runtime.run {through_run * 1e3:.3f} ms (ratio {through_run / bare:.3f}) "
          f"(medians of {args.calls} rounds, the three in turn)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
