"""An ONNX model through the tutorial's instruments: import, the timing tree and the op-count diff of
the opt-level-3 pipeline, then a run at the nn and linalg levels.

    .venv/bin/python examples/onnx_model_instruments.py [model.onnx] [--shape NAME=1,3,224,224]

Without a model it takes the ResNet-50 of the ONNX model zoo's "light" set shipped inside the `onnx`
package (every weight 0.02, so the output is uniform; any real .onnx file works the same way).
"""

from __future__ import annotations

import argparse
import pathlib
import time
from pprint import pprint

import numpy as np
import onnx

from xrelay import passes, transform
from xrelay.dialects.arguments import argument_names
from xrelay.frontend import bind_params_by_name, from_onnx
from xrelay.instrument import PassTimingInstrument
from xrelay.instrument.op_count import OpCountDiff, count_ops
from xrelay.lowering import lower
from xrelay.runtime import run

SHIPPED = pathlib.Path(onnx.__file__).parent / "backend/test/data/light/light_resnet50.onnx"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default=str(SHIPPED))
    parser.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...")
    args = parser.parse_args()
    shape = {name: tuple(int(d) for d in dims.split(",")) for name, _, dims in (s.rpartition("=") for s in args.shape)}

    start = time.perf_counter()
    mod, params = from_onnx(args.model, shape=shape or None)  # TVM: relay.frontend.from_onnx(model, shape)
    print(f"imported {args.model} in {time.perf_counter() - start:.2f} s: "
          f"{sum(count_ops(mod).values())} nn ops, {len(params)} parameters")
    main_func = next(iter(mod.ops))
    inputs = [n for n in argument_names(main_func) if n not in params]
    print("inputs:", inputs, "ops:", count_ops(mod))

    # The tutorial's instruments on the real opt-level-3 pipeline, on bound parameters.
    bound = bind_params_by_name(mod, params)
    timing, differ = PassTimingInstrument(), OpCountDiff()
    pipeline = transform.Sequential([
        passes.SimplifyInference(), passes.FoldScaleAxis(), passes.FoldConstant(),
        passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}), passes.FoldConstant(),
    ])
    with transform.PassContext(opt_level=3, instruments=[timing, differ]):
        optimised = pipeline(bound)
        print("\nPass timing:\n" + timing.render())
    print("Op-count diff per pass:")
    pprint(differ.get_pass_to_op_diff())

    # Run both the imported and the optimised model at two levels on one random input.
    rng = np.random.default_rng(0)
    feeds = {}
    for name, arg in zip(argument_names(main_func), main_func.body.block.args):
        if name not in params:
            feeds[name] = rng.random(tuple(arg.type.get_shape())).astype(np.float32)
    reference = run(mod, feeds, params)
    reference = reference[0] if isinstance(reference, list) else reference
    for label, module in (("optimised, nn level", optimised), ("optimised, linalg level", lower(optimised))):
        start = time.perf_counter()
        out = run(module, feeds)
        out = out[0] if isinstance(out, list) else out
        error = np.max(np.abs(out - reference)) / max(np.max(np.abs(reference)), 1e-30)
        print(f"{label}: {time.perf_counter() - start:.2f} s, max error vs the imported model {error:.1e}")


if __name__ == "__main__":
    main()
