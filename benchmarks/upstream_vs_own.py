"""Upstream's linalg against xrelay's own lowering of the same ONNX model, both run by `xrelay.build`.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python benchmarks/upstream_vs_own.py \
        [--size 112] [--threads 2] [--rounds 6] [--block 3]

The model (built here with `onnx.helper`, random weights, opset 17) is a MobileNet-like stack:
a strided 3x3 convolution, a depthwise 3x3 convolution, 1x1 and 3x3 convolutions with ReLUs, a
max pool, a global average pool and a dense layer. "upstream": IREE's ONNX import and torch-mlir's
linalg pipelines (`iree-import-onnx`, `iree-opt --torch-onnx-to-torch-backend-pipeline
--torch-backend-to-linalg-on-tensors-backend-pipeline`: the README's recipe), then `xrelay.build` (on
linalg it runs the kernel passes only); "own": xrelay's ONNX frontend, then `xrelay.build` at opt level 3.
Each contender runs in a process of its own, taking turns (benchmarks/workers.py), each checked against
ONNX Runtime first; the ratio upstream / own is issue 29's figure (target: within 1.2).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))

from workers import Worker, alternate, close_all, serve, timed_runs


def model(size: int):
    """The MobileNet-like ONNX model (see the module docstring) for a `size` x `size` image."""
    from onnx import helper, numpy_helper

    from upstream_models import _model, _tensor

    rng = np.random.default_rng(0)

    def weight(*shape):
        return rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[1:]))

    weights = {"w1": weight(32, 3, 3, 3), "b1": rng.standard_normal(32) * 0.1,
               "wd": weight(32, 1, 3, 3), "bd": rng.standard_normal(32) * 0.1,
               "w2": weight(64, 32, 1, 1), "b2": rng.standard_normal(64) * 0.1,
               "w3": weight(64, 64, 3, 3), "b3": rng.standard_normal(64) * 0.1,
               "fw": weight(10, 64), "fb": rng.standard_normal(10) * 0.1}
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "wd", "bd"], ["cd"], pads=[1, 1, 1, 1], group=32),
        helper.make_node("Relu", ["cd"], ["rd"]),
        helper.make_node("Conv", ["rd", "w2", "b2"], ["c2"]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("MaxPool", ["r2"], ["m"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["m", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c3"], ["r3"]),
        helper.make_node("GlobalAveragePool", ["r3"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1),
    ]
    return _model("mobile_like", nodes, [_tensor("x", [1, 3, size, size])], [_tensor("y", [1, 10])],
                  [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()])


def worker(kind: str, size: int) -> None:
    """Serve one contender: build it, check it against ONNX Runtime, then answer turns."""
    import onnxruntime
    from xdsl.parser import Parser

    import xrelay
    from upstream_models import import_onnx
    from xrelay import transform
    from xrelay.dialects import make_context
    from xrelay.frontend.onnx import from_onnx
    from xrelay.runtime.parallel.threads import set_blas_threads

    proto = model(size)
    x = np.random.default_rng(1).standard_normal((1, 3, size, size)).astype(np.float32)
    (expected,) = onnxruntime.InferenceSession(proto.SerializeToString()).run(None, {"x": x})
    with transform.PassContext(opt_level=3):
        if kind == "upstream":
            with tempfile.TemporaryDirectory() as tmp:
                text = import_onnx(proto, Path(tmp)).replace("func.func @mobile_like(", "func.func @main(")
            executable = xrelay.build(Parser(make_context(), text).parse_module())
        else:
            mod, params = from_onnx(proto)
            executable = xrelay.build(mod, params)
    got = executable(x)
    got = got[0] if isinstance(got, list) else got
    error = float(np.max(np.abs(got - expected)))

    def turn(command: dict) -> dict:
        set_blas_threads(command["threads"])
        return {"times": timed_runs(lambda: executable(x), command["block"])}

    serve({"error": error, "kernels": sum(op.name == "kernel.dispatch" for op in executable.module.walk())}, turn)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=112)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--block", type=int, default=3)
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker[0], int(args.worker[1]))
        return 0
    workers = {kind: Worker(__file__, [kind, str(args.size)], args.threads) for kind in ("upstream", "own")}
    try:
        for kind, w in workers.items():
            print(f"{kind:9s} kernels {w.info['kernels']:3d}, max error vs ONNX Runtime {w.info['error']:.2e}")
        results, loads = alternate(workers, args.rounds, threads=args.threads, block=args.block)
    finally:
        close_all(workers)
    medians = {kind: statistics.median(r[0]) * 1e3 for kind, r in results.items()}
    print(f"{args.size}x{args.size}, {args.threads} threads, medians of {args.rounds} rounds x {args.block} runs, "
          f"1-min load {min(loads):.1f}-{max(loads):.1f}:")
    for kind, ms in medians.items():
        print(f"  {kind:9s} {ms:7.2f} ms")
    print(f"  upstream / own: {medians['upstream'] / medians['own']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
