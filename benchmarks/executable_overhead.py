"""What calling `xrelay.build`'s executable costs over its compiled program: both called alternately on
the same input in this process (thread mode), medians and their ratio.

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


def measure(model: str, calls: int) -> tuple[float, float]:
    """(program, executable) median seconds per call over `calls` alternating calls."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from onnx_models import light_model, randomised, zoo_inputs

    import xrelay
    from xrelay import transform
    from xrelay.frontend import from_onnx

    proto = randomised(light_model(model))
    (data,) = zoo_inputs(proto).values()
    module, params = from_onnx(proto)
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(module, params)
    program = executable.program
    program.threading = "split"
    for _ in range(3):
        executable(data), program(data)
    bare, wrapped = [], []
    for _ in range(calls):
        start = time.perf_counter()
        program(data)
        bare.append(time.perf_counter() - start)
        start = time.perf_counter()
        executable(data)
        wrapped.append(time.perf_counter() - start)
    return statistics.median(bare), statistics.median(wrapped)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="squeezenet", help="ONNX light-zoo model (default squeezenet)")
    parser.add_argument("--calls", type=int, default=60)
    args = parser.parse_args(argv)
    bare, wrapped = measure(args.model, args.calls)
    print(f"{args.model}: program {bare * 1e3:.3f} ms, executable {wrapped * 1e3:.3f} ms, "
          f"ratio {wrapped / bare:.3f} (medians of {args.calls} alternating calls)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
