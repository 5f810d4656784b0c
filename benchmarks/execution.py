"""Execution benchmark: ResNet-18/50 and depthwise-separable nets (MobileNet v2, EfficientNet-B0-like)
latency and peak memory, xrelay's linalg executor against ONNX Runtime and a plain numpy forward;
and the loops-level executor.

    .venv/bin/python benchmarks/execution.py [--models resnet18,resnet50,mobilenet_v2,efficientnet_b0]
        [--threads 1,2] [--rounds 8] [--block 3] [--onnx-models squeezenet,resnet50,...]
        [--skip-inprocess] [--skip-loops] [--skip-stock]

1. Models (batch 1, 3x224x224, weights bound as constants). Every contender runs in a process of its
   own (a worker: this script with `--worker`), set up once and then driven over a pipe:
   - xrelay at the linalg level, as built (batch_norm lowered as is), after the opt-level-3 graph
     passes (SimplifyInference, FoldScaleAxis, FoldConstant: BN folded into the convs; ConcatFirst,
     MaxPoolFirst: biases and ReLUs moved behind concatenations and max pools; PoolAfterPointwiseConv:
     an average pool moved behind the 1x1 conv that projects it to fewer channels; ShuffleIntoConv: a
     channel shuffle after a grouped conv with few channels per group folded into a dense conv;
     PreActivationShift: a ReLU of a constant add before a 1x1 conv as a maximum, the add folded into
     the conv's bias), and after
     those plus the tutorial's ConvertLayout to NHWC/HWIO and FoldConstant;
   - a plain numpy forward: the same graph evaluated op by op with xrelay's reference numpy kernels
     (`runtime.kernels.KERNELS`), no interpreter in between;
   - ONNX Runtime (optional `bench` extra: `pip install -e '.[bench]'`) on an ONNX graph built with
     `onnx.helper` from the same module and weights, intra-op threads = the thread count.
   For each thread count the contenders take turns, round after round (the order rotating), each
   turn one untimed run and `--block` timed ones, with a pause between turns so that no process's
   spinning threads (OpenBLAS's, ONNX Runtime's) eat into the next one's time. Figures are medians
   over all rounds; the 1-minute load average (the machine is shared) is printed with them.
   Peak memory is the worker's resident-set high-water mark (VmHWM) over its timed runs, reset
   before them to the resident set at rest (/proc/self/clear_refs), and how far above that rest
   the runs went (the worker also holds the model at the nn level, for checking); xrelay programs
   that plan their memory also report the planned peak of their activation buffers.
   Every worker checks its output against the nn level (xDSL interpreter) before it is timed.
   The measured processes run without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (this machine sets
   them; they halve sgemm on AVX-512 and users do not have them); each worker prints the OpenBLAS
   build, kernel and thread count numpy got.
   Once, ResNet-18 at the highest thread count: ONNX Runtime measured in the same process as the
   numpy forward (interleaved blocks, as this benchmark used to do), against its own process.
   `--onnx-models`: the same over ONNX light models (xrelay after opt-level-3 + NHWC, and ONNX
   Runtime on the ONNX model itself).
   The "opt3" rows are lowered without kernel passes: the executor runs them op by op, so against
   "build" they show what kernel formation buys.
2. Loops level: a small conv → bias → relu → max-pool network lowered to scf loops, run by
   xrelay's loops executor (every nest scalar, and nests raised to whole-array numpy) and by xDSL's
   stock interpreter on the same IR; dynamic scalar ops per second (ops executed counted from the
   loop trip counts) and the speed-up. Then ResNet-18 at the loops level: lowering, translation
   and run time, checked against the nn level (in this process).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
from workers import UNSET_FOR_MEASUREMENT, Worker, alternate, close_all, serve, timed_runs

CONTENDERS = {
    "as-built": "xrelay linalg, as built",
    "opt3": "xrelay linalg, opt-level-3 passes",
    "opt3-nhwc": "xrelay linalg, opt-level-3 + NHWC",
    "build": "xrelay.build (opt level 3)",
    "numpy": "plain numpy forward",
    "ort": "onnxruntime",
}
"""Worker kinds → labels; `ort` is the reference the ratios are taken against."""


def median_ms(fn, repeat: int) -> float:
    """Median wall time of `fn` over `repeat` runs after one warm-up, in ms (this process)."""
    fn()
    return statistics.median(timed_runs(fn, repeat)) * 1e3


# --- a plain numpy forward ---------------------------------------------------------------


def numpy_forward(module):
    """A closure running `@main` op by op on the reference numpy kernels (no interpreter)."""
    from xdsl.dialects import func

    from xrelay.runtime.reference.nn_kernels import KERNELS

    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    steps = []
    for op in main.body.block.ops:
        if isinstance(op, func.ReturnOp):
            results = list(op.operands)
            break
        if op.name == "nn.constant":
            steps.append((op, None, op.numpy()))
        else:
            steps.append((op, KERNELS[type(op)], op.attrs()))
    args = list(main.body.block.args)

    def run(*arrays):
        env = dict(zip(args, arrays))
        for op, kernel, attrs in steps:
            if kernel is None:
                env[op.results[0]] = attrs
                continue
            out = kernel(attrs, *(env[v] for v in op.operands))
            for res, value in zip(op.results, out if isinstance(out, tuple) else (out,)):
                env[res] = value
        return [env[r] for r in results]

    return run


# --- ONNX ------------------------------------------------------------------------------------


def onnx_model(module):
    """An ONNX model (opset 17) of an nn-level `@main` whose parameters are nn.constants."""
    from onnx import TensorProto, helper, numpy_helper
    from xdsl.dialects import func

    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    names: dict = {}
    nodes, initializers = [], []

    def name(value) -> str:
        if value not in names:
            names[value] = getattr(value, "name_hint", None) or f"v{len(names)}"
        return names[value]

    for arg in main.body.block.args:
        name(arg)
    counter = 0

    def node(op_type, inputs, outputs, **attrs):
        nonlocal counter
        counter += 1
        nodes.append(helper.make_node(op_type, inputs, outputs, name=f"n{counter}", **attrs))

    for op in main.body.block.ops:
        if isinstance(op, func.ReturnOp):
            outputs = [name(v) for v in op.operands]
            break
        a = op.attrs()
        ins = [name(v) for v in op.operands]
        out = name(op.results[0])
        if op.name == "nn.constant":
            initializers.append(numpy_helper.from_array(np.ascontiguousarray(op.numpy()), out))
        elif op.name == "nn.conv2d":
            assert a["data_layout"] == "NCHW" and a["kernel_layout"] == "OIHW"
            kernel = op.operands[1].type.get_shape()[2:]
            node("Conv", ins, [out], strides=list(a["strides"]), pads=list(a["padding"]),
                 dilations=list(a["dilation"]), group=a["groups"], kernel_shape=list(kernel))
        elif op.name == "nn.batch_norm":
            data, gamma, beta, mean, var = ins
            if not a["scale"]:
                ones = f"ones_{out}"
                initializers.append(numpy_helper.from_array(np.ones(op.operands[1].type.get_shape(), np.float32), ones))
                gamma = ones
            node("BatchNormalization", [data, gamma, beta, mean, var], [out], epsilon=a["epsilon"])
            names[op.results[1]], names[op.results[2]] = mean, var
        elif op.name == "nn.relu":
            node("Relu", ins, [out])
        elif op.name == "nn.max_pool2d":
            node("MaxPool", ins, [out], kernel_shape=list(a["pool_size"]), strides=list(a["strides"]),
                 pads=list(a["padding"]), ceil_mode=int(a["ceil_mode"]))
        elif op.name == "nn.global_avg_pool2d":
            node("GlobalAveragePool", ins, [out])
        elif op.name == "nn.batch_flatten":
            node("Flatten", ins, [out], axis=1)
        elif op.name == "nn.dense":
            node("Gemm", ins, [out], transB=1)
        elif op.name == "nn.bias_add" and a["axis"] % len(op.results[0].type.get_shape()) != len(op.results[0].type.get_shape()) - 1:
            # A per-channel bias on a middle axis: reshaped to [C, 1, ...] for ONNX's trailing broadcast.
            rank, axis = len(op.results[0].type.get_shape()), a["axis"] % len(op.results[0].type.get_shape())
            shape = f"shape_{out}"
            initializers.append(numpy_helper.from_array(np.array([-1] + [1] * (rank - axis - 1), np.int64), shape))
            node("Reshape", [ins[1], shape], [f"{ins[1]}_{out}"])
            node("Add", [ins[0], f"{ins[1]}_{out}"], [out])
        elif op.name in ("nn.bias_add", "nn.add"):
            node("Add", ins, [out])  # ResNet's bias_add is on the last axis of the dense output
        elif op.name == "nn.multiply":
            node("Mul", ins, [out])
        elif op.name == "nn.sigmoid":
            node("Sigmoid", ins, [out])
        elif op.name == "nn.clip":
            bounds = [f"min_{out}", f"max_{out}"]
            for bound, value in zip(bounds, (a["a_min"], a["a_max"])):
                initializers.append(numpy_helper.from_array(np.array(value, np.float32), bound))
            node("Clip", [*ins, *bounds], [out])
        elif op.name == "nn.softmax":
            node("Softmax", ins, [out], axis=a["axis"])
        else:
            raise NotImplementedError(f"onnx_model: no translation for {op.name}")

    def info(value, value_name):
        return helper.make_tensor_value_info(value_name, TensorProto.FLOAT, list(value.type.get_shape()))

    graph_inputs = [info(arg, name(arg)) for arg in main.body.block.args]
    graph_outputs = [info(v, n) for v, n in zip(op.operands, outputs)]
    graph = helper.make_graph(nodes, "xrelay", graph_inputs, graph_outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


# --- loops level ---------------------------------------------------------------------------


def dynamic_op_count(module) -> int:
    """Scalar ops executed by `@main`: every op weighted by the trip counts of its enclosing loops."""
    from xdsl.dialects import arith, scf

    def constant(value) -> int:
        owner = value.owner
        assert isinstance(owner, arith.ConstantOp), "loop bounds must be constants"
        return owner.value.value.data

    def count(block, weight: int) -> int:
        total = 0
        for op in block.ops:
            total += weight
            if isinstance(op, scf.ForOp):
                trips = max(0, -(-(constant(op.ub) - constant(op.lb)) // constant(op.step)))
                total += count(op.body.block, weight * trips)
        return total

    main = next(op for op in module.ops if op.name == "func.func")
    return count(main.body.block, 1)


def small_loops_network():
    from xdsl.dialects import func
    from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f32
    from xdsl.ir import Block, Region

    from xrelay.dialects import nn

    types = [TensorType(f32, s) for s in ((1, 4, 8, 8), (8, 4, 3, 3), (8,))]
    block = Block(arg_types=types)
    for arg, hint in zip(block.args, ("data", "weight", "bias")):
        arg.name_hint = hint
    conv = nn.Conv2DOp(block.args[0], block.args[1], padding=(1, 1, 1, 1))
    bias = nn.BiasAddOp(conv.results[0], block.args[2])
    relu = nn.ReluOp(bias.results[0])
    pool = nn.MaxPool2DOp(relu.results[0], pool_size=(2, 2), strides=(2, 2))
    block.add_ops([conv, bias, relu, pool, func.ReturnOp(pool.results[0])])
    main = func.FuncOp("main", FunctionType.from_lists(types, [pool.results[0].type]), Region(block))
    return ModuleOp([main])


def stock_interpreter_run(module, arrays):
    from xdsl.interpreter import Interpreter
    from xdsl.interpreters.affine import AffineFunctions
    from xdsl.interpreters.arith import ArithFunctions
    from xdsl.interpreters.builtin import BuiltinFunctions
    from xdsl.interpreters.func import FuncFunctions
    from xdsl.interpreters.math import MathFunctions
    from xdsl.interpreters.memref import MemRefFunctions
    from xdsl.interpreters.scf import ScfFunctions
    from xdsl.interpreters.shaped_array import ShapedArray
    from xdsl.interpreters.utils.ptr import TypedPtr

    interpreter = Interpreter(module)
    for functions in (FuncFunctions(), ArithFunctions(), MemRefFunctions(), ScfFunctions(), AffineFunctions(),
                      MathFunctions(), BuiltinFunctions()):
        interpreter.register_implementations(functions)
    shaped = [ShapedArray(TypedPtr.new_float32(a.ravel().tolist()), list(a.shape)) for a in arrays]
    (result,) = interpreter.call_op("main", tuple(shaped))
    return np.array(result.data, np.float32).reshape(result.shape)


# --- workers: one contender per process --------------------------------------------------


def load_model(name: str):
    """(nn module, params, input array, the ONNX model for ONNX Runtime or None) of `resnet18`,
    `resnet50`, a depthwise-separable net of `frontend.mobilenet` (`mobilenet_v2`, `efficientnet_b0`),
    `onnx:<light model>` (the ONNX backend test data's light models with the
    re-randomised weights of tests/onnx_models.py, imported by `from_onnx`), `vit_tiny` (ViT-Tiny's
    sizes with random weights, tests/onnx_transformer.py) or the path of an `.onnx` file with one
    1x3x224x224 image input, weights as given."""
    from xrelay.frontend import mobilenet, resnet

    if name.startswith("onnx:") or name.endswith(".onnx") or name == "vit_tiny":
        import onnx
        import onnxruntime

        onnxruntime.set_default_logger_severity(3)  # the IR-3 models list initializers as inputs: warnings
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests"))
        from onnx_models import light_model, randomised, zoo_inputs
        from onnx_transformer import vision_transformer

        from xrelay.frontend import from_onnx

        if name == "vit_tiny":
            proto = vision_transformer()
        else:
            proto = onnx.load(name) if name.endswith(".onnx") else randomised(light_model(name[5:]))
        ((input_name, data),) = zoo_inputs(proto).items()
        module, params = from_onnx(proto)
        return module, params, data, proto, input_name
    layers = {"resnet18": 18, "resnet50": 50}.get(name)
    if name in mobilenet.NETWORKS:
        module, params = mobilenet.get_workload(name, batch_size=1, image_shape=(3, 224, 224))
    elif layers is None:
        raise SystemExit(f"unknown model {name!r}; expected resnet18, resnet50, "
                         f"{', '.join(mobilenet.NETWORKS)}, vit_tiny, onnx:<light model> or a path ending in .onnx")
    else:
        module, params = resnet.get_workload(num_layers=layers, batch_size=1, image_shape=(3, 224, 224))
    data = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    return module, params, data, None, "data"


class Contender:
    """One contender set up in this process: `run(threads)` runs it once with `threads` threads."""

    def __init__(self, kind: str, model: str):
        from xrelay import passes, transform
        from xrelay.frontend import bind_params_by_name
        from xrelay.lowering import lower
        from xrelay.runtime.reference.interpreter import run as run_nn
        from xrelay.runtime.executor.linalg_exec import compile_linalg

        module, params, self.data, proto, self.input_name = load_model(model)
        reference = run_nn(module, {self.input_name: self.data}, params)
        bound = bind_params_by_name(module, params)
        self.kind, self.program, self.sessions = kind, None, {}
        if kind in ("as-built", "opt3", "opt3-nhwc"):
            graph = bound
            if kind != "as-built":
                with transform.PassContext(opt_level=3):
                    graph = transform.Sequential(
                        [passes.SimplifyInference(), passes.FoldScaleAxis(), passes.FoldConstant(), passes.ConcatFirst(), passes.MaxPoolFirst(),
                         passes.PoolAfterPointwiseConv(), passes.ShuffleIntoConv(), passes.PreActivationShift()])(graph)
                    if kind == "opt3-nhwc":  # the tutorial's pipeline: NHWC/HWIO convolutions
                        graph = transform.Sequential(
                            [passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}), passes.FoldConstant()])(graph)
            self.program = compile_linalg(lower(graph, to="linalg"))
            self.fn = lambda threads: self.program(self.data)
        elif kind == "build" or kind.startswith("build-without:"):
            # xrelay.build's defaults at opt level 3 (what a user calls), or without the passes named
            # after "build-without:" (class names, "+"-separated: TVM's disabled_pass).
            import xrelay

            disabled = [name for name in kind.partition(":")[2].split("+") if name]
            with transform.PassContext(opt_level=3, disabled_pass=disabled):
                self.executable = xrelay.build(module, params)
            self.program = self.executable.program
            self.fn = lambda threads: self.program(self.data)
        elif kind == "numpy":
            forward = numpy_forward(bound)
            self.fn = lambda threads: forward(self.data)
        elif kind in ("ort", "ort-inprocess"):
            import onnxruntime as ort

            self.ort = ort
            self.onnx_bytes = (proto if proto is not None else onnx_model(bound)).SerializeToString()
            forward = numpy_forward(bound) if kind == "ort-inprocess" else None
            self.forward = forward
            self.fn = lambda threads: self.session(threads).run(None, {self.input_name: self.data})
        else:
            raise SystemExit(f"unknown contender {kind!r}")
        out = self.fn(2)[0]
        reference = reference[0] if isinstance(reference, list) else reference
        # Relative to the largest magnitude (softmax outputs have entries near 0).
        self.error = float(np.max(np.abs(out - reference)) / max(float(np.max(np.abs(reference))), 1e-30))

    def session(self, threads: int):
        if threads not in self.sessions:
            options = self.ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3  # no warning about the unused BN gamma initializer
            self.sessions[threads] = self.ort.InferenceSession(self.onnx_bytes, options,
                                                               providers=["CPUExecutionProvider"])
        return self.sessions[threads]

    def turn(self, threads: int, block: int) -> list[float]:
        """One untimed run and `block` timed ones (for `ort-inprocess`, each block after `block`
        runs of the numpy forward in this process, as the old in-process benchmark did)."""
        from xrelay.runtime.parallel.threads import set_blas_threads

        set_blas_threads(threads)
        if self.forward is not None:
            for _ in range(block):
                self.forward(self.data)
        self.fn(threads)
        return timed_runs(lambda: self.fn(threads), block)

    forward = None


def blas_config() -> str:
    """numpy's OpenBLAS build and the kernel it picked for this CPU (e.g. "OpenBLAS 0.3.29 DYNAMIC_ARCH
    ... core SkylakeX"), or a note that numpy's BLAS is not OpenBLAS."""
    import ctypes

    from xrelay.runtime.parallel.threads import openblas_functions

    functions = openblas_functions("get_config", "get_corename")
    if functions is None:
        return "numpy's BLAS is not OpenBLAS (or not found)"
    for function in functions:
        function.restype = ctypes.c_char_p
    return f"{functions[0]().decode().strip()}; kernel {functions[1]().decode().strip()}"


def worker(kind: str, model: str) -> None:
    """Serve one contender (`workers.serve`)."""
    from xrelay.runtime.parallel.threads import blas_threads

    contender = Contender(kind, model)
    info = {"error": contender.error, "blas": blas_config(), "blas_threads_max": blas_threads(),
            "env": {v: os.environ.get(v) for v in UNSET_FOR_MEASUREMENT},
            "version": contender.ort.__version__ if hasattr(contender, "ort") else None}
    serve(info, lambda command: {"times": contender.turn(command["threads"], command["block"]),
                                 "planned_peak": getattr(contender.program, "peak_bytes", None)})


def start_workers(kinds, model: str, threads: int) -> dict[str, Worker]:
    workers = {}
    for kind in kinds:
        if kind.startswith("ort"):
            try:
                import onnxruntime  # noqa: F401
            except ImportError:
                print("  onnxruntime not installed (pip install -e '.[bench]'): ONNX Runtime skipped")
                continue
        workers[kind] = Worker(__file__, [kind, model], threads)
    return workers


def bench_model(model: str, thread_counts: list[int], rounds: int, block: int,
                kinds=tuple(CONTENDERS)) -> None:
    workers = start_workers(list(kinds), model, max(thread_counts))
    try:
        print(f"\n{model}, batch 1, 3x224x224 (contenders in processes of their own, "
              f"{os.cpu_count()} CPUs)")
        first = next(iter(workers.values())).info
        print(f"  measured processes: {', '.join(f'{v} unset' for v in UNSET_FOR_MEASUREMENT)}; "
              f"numpy's BLAS: {first['blas']}")
        for kind, w in workers.items():
            print(f"  {CONTENDERS.get(kind, kind):<36} max error vs nn level (of the largest): {w.info['error']:.2e}")
        for threads in thread_counts:
            results, loads = alternate(workers, rounds, threads=threads, block=block)
            ort = results.get("ort")
            ort_ms = statistics.median(ort[0]) * 1e3 if ort else None
            ort_best = min(ort[0]) * 1e3 if ort else None
            print(f"\n  {threads} thread(s): medians of {rounds} rounds x {block} runs; 1-min load average "
                  f"{min(loads):.1f}-{max(loads):.1f} (this benchmark adds ~{threads})")
            print(f"  {'':<36} {'median':>9}  {'/ ORT':>6}  {'best':>8}  {'/ ORT':>6}  {'peak RSS (+ over rest)':>22}  {'planned':>10}")
            for kind, (ts, hwm_kb, growth_kb, reply) in results.items():
                planned = reply["planned_peak"]
                ms, best = statistics.median(ts) * 1e3, min(ts) * 1e3
                ratio = f"{ms / ort_ms:6.2f}" if ort_ms else f"{'-':>6}"
                best_ratio = f"{best / ort_best:6.2f}" if ort_best else f"{'-':>6}"
                plan = f"{planned / 2**20:6.1f} MiB" if planned else f"{'-':>10}"
                label = CONTENDERS.get(kind, kind) + (f" {workers[kind].info['version']}" if kind == "ort" else "")
                print(f"  {label:<36} {ms:6.1f} ms  {ratio}  {best:5.1f} ms  {best_ratio}  "
                      f"{hwm_kb / 1024:6.0f} MiB (+{growth_kb / 1024:5.1f} MiB)  {plan}")
    finally:
        close_all(workers)


def bench_inprocess(model: str, threads: int, rounds: int, block: int) -> None:
    """ONNX Runtime in the numpy forward's process (interleaved) against ORT in its own process."""
    workers = start_workers(["ort", "ort-inprocess"], model, threads)
    if len(workers) < 2:
        return
    try:
        results, loads = alternate(workers, rounds, threads=threads, block=block)
    finally:
        close_all(workers)
    own, shared = (statistics.median(results[k][0]) * 1e3 for k in ("ort", "ort-inprocess"))
    print(f"\nONNX Runtime, {model}, {threads} thread(s), load {min(loads):.1f}-{max(loads):.1f}: "
          f"{own:.1f} ms in a process of its own, {shared:.1f} ms in the same process as the numpy "
          f"forward (its OpenBLAS threads still spinning): {shared / own:.2f}x")


def bench_loops(skip_stock: bool) -> None:
    from xrelay.lowering import lower
    from xrelay.runtime.reference.interpreter import run as run_nn
    from xrelay.runtime.reference.loops_exec import compile_loops

    module = small_loops_network()
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((1, 4, 8, 8), (8, 4, 3, 3), (8,))]
    reference = run_nn(module, dict(zip(("data", "weight", "bias"), arrays)))
    loops = lower(module, to="loops")
    ops = dynamic_op_count(loops)
    print(f"\nLoops level: conv3x3(4->8, 8x8) + bias + relu + maxpool2x2, {ops} scalar ops per run")
    for vectorize, label in ((False, "scalar nests"), (True, "whole-array nests")):
        start = time.perf_counter()
        program = compile_loops(loops, vectorize=vectorize)
        compile_s = time.perf_counter() - start
        seconds = median_ms(lambda: program(*arrays), 5) / 1e3
        np.testing.assert_allclose(program(*arrays)[0], reference, rtol=1e-4, atol=1e-5)
        print(f"  xrelay loops, {label + ':':<19} {seconds * 1e3:8.2f} ms/run  {ops / seconds / 1e6:8.2f} M ops/s "
              f"(one-time translation {compile_s * 1e3:.1f} ms)")
        if not vectorize:
            scalar_s = seconds
    if not skip_stock:
        from xdsl.utils.exceptions import InterpretationError

        start = time.perf_counter()
        try:
            stock_out = stock_interpreter_run(loops, arrays)
        except InterpretationError as error:  # e.g. memref.subview (padding) has no implementation
            print(f"  xDSL stock interpreter: cannot run this IR ({str(error).splitlines()[0]})")
        else:
            stock = time.perf_counter() - start
            np.testing.assert_allclose(stock_out, reference, rtol=1e-4, atol=1e-5)
            print(f"  xDSL stock interpreter: {stock * 1e3:8.1f} ms/run  {ops / stock / 1e6:7.3f} M ops/s; "
                  f"scalar nests {stock / scalar_s:.0f}x faster (same IR, same outputs)")

    from xrelay.frontend import bind_params_by_name

    module, params, data, _, _ = load_model("resnet18")
    reference = run_nn(module, {"data": data}, params)
    start = time.perf_counter()
    loops = lower(bind_params_by_name(module, params), to="loops")
    lower_s = time.perf_counter() - start
    start = time.perf_counter()
    program = compile_loops(loops)
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    out = program(data)[0]
    first_s = time.perf_counter() - start
    error = float(np.max(np.abs(out - reference) / np.maximum(np.abs(reference), 1e-30)))
    seconds = median_ms(lambda: program(data), 3) / 1e3
    print(f"\nLoops level, ResNet-18 (bound weights): lowering to loops {lower_s:.1f} s, translation "
          f"{compile_s:.1f} s ({program.raised_nests} nests over whole arrays, {program.scalar_nests} scalar), "
          f"first run {first_s:.2f} s, then {seconds:.2f} s/run (numpy's default BLAS threads in this "
          f"process); max relative error vs nn level {error:.1e}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet18,resnet50")
    parser.add_argument("--threads", default="1,2", help="thread counts, comma-separated (default 1,2)")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--block", type=int, default=3, help="timed runs per turn (default 3)")
    parser.add_argument("--skip-inprocess", action="store_true", help="skip the in-process ORT comparison")
    parser.add_argument("--onnx-models", default="",
                        help="ONNX light models (squeezenet,resnet50,...) to run after opt-level-3 + NHWC against ORT")
    parser.add_argument("--kinds", default="",  # also build-without:<Pass>[+<Pass>...]
                        help="contenders to run (comma-separated, e.g. build,opt3-nhwc,ort; default: all)")
    parser.add_argument("--skip-loops", action="store_true")
    parser.add_argument("--skip-stock", action="store_true", help="skip xDSL's (slow) stock interpreter")
    parser.add_argument("--worker", nargs=2, metavar=("CONTENDER", "MODEL"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(*args.worker)
        return 0
    thread_counts = [int(t) for t in args.threads.split(",")]
    models = [m for m in args.models.split(",") if m]
    chosen = tuple(k for k in args.kinds.split(",") if k)
    unknown = [k for k in chosen if k not in CONTENDERS and not k.startswith("build-without:")]
    if unknown:
        raise SystemExit(f"unknown contender(s) {', '.join(unknown)}; expected {', '.join(CONTENDERS)}")
    for model in models:
        bench_model(model, thread_counts, args.rounds, args.block,
                    kinds=chosen or tuple(CONTENDERS))
    for name in [m for m in args.onnx_models.split(",") if m]:
        bench_model(f"onnx:{name}", thread_counts, args.rounds, args.block,
                    kinds=chosen or ("build", "opt3-nhwc", "ort"))
    if not args.skip_inprocess and models:
        bench_inprocess(models[0], max(thread_counts), args.rounds, args.block)
    if not args.skip_loops:
        bench_loops(args.skip_stock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
