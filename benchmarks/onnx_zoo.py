"""ONNX import and execution time per light-zoo graph, next to ONNX Runtime.

    .venv/bin/python benchmarks/onnx_zoo.py [--models resnet50,squeezenet] [--rounds 3] [--block 2]

For each of the nine `light` models shipped inside the `onnx` package: `from_onnx` import time, and
one inference at the nn level (numpy kernels on the imported module, weights bound) and at the
linalg level (the lowered module, compiled once), against ONNX Runtime (CPU, 1 thread each; ORT
with its default graph optimisations). Every contender runs in a process of its own; the processes
take turns round after round (the starting one rotating; `workers.py`), and the figures are medians. The measured
processes run without OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE (see benchmarks/execution.py).
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys

from workers import UNSET_FOR_MEASUREMENT, Worker, alternate, close_all, serve, timed_runs

MODELS = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet",
          "squeezenet", "vgg19", "zfnet512")
CONTENDERS = ("import", "nn", "linalg", "ort")


def model_path(name: str) -> str:
    import onnx

    return str(pathlib.Path(onnx.__file__).parent / "backend/test/data/light" / f"light_{name}.onnx")


class Contender:
    def __init__(self, kind: str, name: str):
        import numpy as np
        import onnx

        self.path = model_path(name)
        proto = onnx.load(self.path)
        inits = {i.name for i in proto.graph.initializer}
        (self.input,) = [i.name for i in proto.graph.input if i.name not in inits]
        self.data = np.random.default_rng(0).random((1, 3, 224, 224), dtype=np.float32)
        if kind == "import":
            from xrelay.frontend import from_onnx

            self.fn = lambda: from_onnx(self.path)
        elif kind in ("nn", "linalg"):
            from xrelay.frontend import bind_params_by_name, from_onnx
            from xrelay.runtime import run

            module, params = from_onnx(self.path)
            module = bind_params_by_name(module, params)
            if kind == "nn":
                self.fn = lambda: run(module, {self.input: self.data})
            else:
                from xrelay.lowering import lower
                from xrelay.runtime.executor.linalg_exec import compile_linalg

                program = compile_linalg(lower(module, to="linalg"))
                self.fn = lambda: program(self.data)
        elif kind == "ort":
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            session = ort.InferenceSession(self.path, options, providers=["CPUExecutionProvider"])
            self.fn = lambda: session.run(None, {self.input: self.data})
        self.fn()  # warm-up (and the first import's module loading)



def worker(kind: str, name: str) -> None:
    from xrelay.runtime.parallel.threads import set_blas_threads

    set_blas_threads(1)
    contender = Contender(kind, name)
    serve({"ready": True}, lambda command: {"times": timed_runs(contender.fn, command["block"])})


def bench(name: str, rounds: int, block: int) -> dict[str, float]:
    workers = {}
    try:
        for kind in CONTENDERS:
            workers[kind] = Worker(__file__, [kind, name], threads=1)
        results, _ = alternate(workers, rounds, block=block)
    finally:
        close_all(workers)
    return {kind: statistics.median(result[0]) * 1e3 for kind, result in results.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--block", type=int, default=2)
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(*args.worker)
        return 0
    from xrelay.frontend.onnx import OnnxImportError, from_onnx

    print(f"ONNX light zoo, batch 1, 3x224x224, 1 thread per contender, medians of {args.rounds} rounds x "
          f"{args.block} runs ({', '.join(f'{v} unset' for v in UNSET_FOR_MEASUREMENT)} in measured processes)")
    print(f"{'model':<14} {'import':>9} {'nn':>10} {'linalg':>10} {'ORT':>9} {'nn/ORT':>7} {'linalg/ORT':>10}")
    for name in args.models.split(","):
        try:
            from_onnx(model_path(name))
        except OnnxImportError as error:
            print(f"{name:<14} not importable here: {error}")
            continue
        ms = bench(name, args.rounds, args.block)
        print(f"{name:<14} {ms['import']:7.0f}ms {ms['nn']:8.0f}ms {ms['linalg']:8.0f}ms {ms['ort']:7.0f}ms "
              f"{ms['nn'] / ms['ort']:7.1f} {ms['linalg'] / ms['ort']:10.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
