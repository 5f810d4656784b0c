"""What calling `xrelay.build`'s executable, and `runtime.run` on its module, cost over its compiled
program: the three called in turn on the same input in this process (thread mode), medians and the
medians of their per-round ratios to the program.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python benchmarks/executable_overhead.py \
        [--model squeezenet] [--calls 60]

The model is an ONNX light-zoo model with random weights (tests/onnx_models.py), built at opt level 3.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workers import in_turn, medians_line


def measure(model: str, calls: int) -> dict[str, list[float]]:
    """Seconds per call of the program, the executable and runtime.run over `calls` rounds of one
    call each, the three in turn."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from onnx_models import light_model, randomised, zoo_inputs

    import xrelay
    from xrelay import transform
    from xrelay.frontend import from_onnx
    from xrelay.runtime import run

    proto = randomised(light_model(model))
    (data,) = zoo_inputs(proto).values()
    module, params = from_onnx(proto)
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(module, params)
    program = executable.program
    contenders = {"program": lambda: program(data), "executable": lambda: executable(data),
                  "runtime.run": lambda: run(executable.module, [data])}
    in_turn(contenders, 3)  # untimed
    return in_turn(contenders, calls)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="squeezenet", help="ONNX light-zoo model (default squeezenet)")
    parser.add_argument("--calls", type=int, default=60)
    args = parser.parse_args(argv)
    times = measure(args.model, args.calls)
    print(f"{args.model}: {medians_line(times, 'program')} ({args.calls} rounds, the three in turn)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
