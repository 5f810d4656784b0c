"""Execution benchmark: ResNet-18 at the linalg level, and the loops-level interpreter.

    .venv/bin/python benchmarks/execution.py [--repeat 10] [--threads 2] [--skip-stock] [--skip-resnet]

1. ResNet-18, batch 1, 3x224x224, weights bound as constants. Median latency over `--repeat`
   runs, taken in interleaved blocks (see `interleaved_medians_ms`), of
   - xrelay at the linalg level, as built (batch_norm lowered as is), after the opt-level-3
     graph passes (SimplifyInference, FoldScaleAxis, FoldConstant: BN folded into the convs), and
     after those plus the tutorial's ConvertLayout to NHWC/HWIO and FoldConstant;
   - a plain numpy forward: the same graph evaluated op by op with xrelay's reference numpy
     kernels (`runtime.kernels.KERNELS`), no interpreter in between;
   - ONNX Runtime (optional `bench` extra: `pip install -e '.[bench]'`) on an ONNX graph built
     with `onnx.helper` from the same module and weights, `--threads` intra-op threads;
   with each latency's ratio to the numpy forward's and to ONNX Runtime's. Every output is
   checked against the nn level first. `--threads` is checked to be numpy's OpenBLAS thread count
   (set through ctypes, as threadpoolctl does). On a shared machine the plain numpy forward with
   2 threads slows down many times over as soon as another process holds a core (OpenBLAS's threads
   synchronise on every call); xrelay's executor runs BLAS single-threaded and splits each big op
   over its own worker threads instead.
2. Loops level: a small conv → bias → relu → max-pool network lowered to scf loops, run by
   xrelay's compiled loops executor and by xDSL's stock interpreter on the same IR; dynamic scalar
   ops per second (ops executed counted from the loop trip counts) and the speed-up.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def set_threads(threads: int) -> None:
    """Give numpy's BLAS `threads` threads through the environment; it only takes effect before numpy
    is first imported, which is why this runs at import time below (`check_blas_threads` then sets
    and checks the count OpenBLAS actually uses)."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(threads))


if __name__ == "__main__":
    set_threads(int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 2)

import numpy as np  # noqa: E402  (after the thread count is set)


BLOCK = 5
"""Consecutive timed runs of one contender per round (after one untimed run)."""


def median_ms(fn, repeat: int) -> float:
    """Median wall time of `fn` over `repeat` runs after one warm-up, in ms."""
    return interleaved_medians_ms({"fn": fn}, repeat)["fn"]


def interleaved_medians_ms(fns: dict, repeat: int) -> dict[str, float]:
    """Median wall time (ms) of each function over `repeat` timed runs.

    Runs come in rounds: each contender in turn runs one untimed run and then up to BLOCK timed
    ones back to back (its steady state: ONNX Runtime's spinning thread pool, warm caches), so
    that load changes on the shared machine hit every contender alike.
    """
    times: dict[str, list[float]] = {label: [] for label in fns}
    while any(len(ts) < repeat for ts in times.values()):
        for label, fn in fns.items():
            fn()
            for _ in range(min(BLOCK, repeat - len(times[label]))):
                start = time.perf_counter()
                fn()
                times[label].append(time.perf_counter() - start)
    return {label: statistics.median(ts) * 1e3 for label, ts in times.items()}


# --- a plain numpy forward ---------------------------------------------------------------


def numpy_forward(module):
    """A closure running `@main` op by op on the reference numpy kernels (no interpreter)."""
    from xdsl.dialects import func

    from xrelay.runtime.kernels import KERNELS

    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    steps = []
    for op in main.body.block.ops:
        if isinstance(op, func.ReturnOp):
            results = list(op.operands)
            break
        if op.name == "nn.constant":
            steps.append((op, None, op.numpy()))
        else:
            steps.append((op, KERNELS[op.name], op.attrs()))
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
        elif op.name in ("nn.bias_add", "nn.add"):
            node("Add", ins, [out])  # ResNet's bias_add is on the last axis of the dense output
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


# --- main ----------------------------------------------------------------------------------


def check_blas_threads(threads: int) -> str:
    """Make numpy's OpenBLAS use `threads` threads even if numpy was imported before `set_threads`
    ran, and describe what is in effect."""
    from xrelay.runtime.conv import blas_threads, set_blas_threads

    set_blas_threads(threads)
    actual = blas_threads()
    if actual is None:
        return "numpy's BLAS is not OpenBLAS: its thread count is unchecked"
    if actual != threads:
        raise SystemExit(f"numpy's OpenBLAS runs {actual} threads, not --threads {threads}")
    if actual == 1:
        return "numpy's OpenBLAS: 1 thread"
    return (f"numpy's OpenBLAS: {actual} threads; the xrelay linalg executor runs BLAS single-threaded "
            f"and splits big matmuls and Winograd convs over {actual} worker threads")


def bench_resnet(repeat: int, threads: int) -> None:
    from xrelay import passes, transform
    from xrelay.frontend import bind_params_by_name, resnet
    from xrelay.lowering import lower
    from xrelay.runtime.interpreter import run as run_nn
    from xrelay.runtime.linalg_exec import compile_linalg

    module, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 224, 224))
    data = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    reference = run_nn(module, {"data": data}, params)
    bound = bind_params_by_name(module, params)
    with transform.PassContext(opt_level=3):
        optimized = transform.Sequential(
            [passes.SimplifyInference(), passes.FoldScaleAxis(), passes.FoldConstant()])(bound)
        # The tutorial's pipeline goes on to NHWC/HWIO convolutions (channels-last matmuls).
        channels_last = transform.Sequential(
            [passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}), passes.FoldConstant()])(optimized)

    def check(label: str, out: np.ndarray) -> None:
        err = float(np.max(np.abs(out - reference) / np.maximum(np.abs(reference), 1e-30)))
        print(f"  {label:<34} max relative error vs nn level: {err:.2e}")

    plain = compile_linalg(lower(bound, to="linalg"))
    fast = compile_linalg(lower(optimized, to="linalg"))
    fast_nhwc = compile_linalg(lower(channels_last, to="linalg"))
    forward = numpy_forward(bound)
    check("linalg (as built)", plain(data)[0])
    check("linalg (opt-level-3 passes)", fast(data)[0])
    check("linalg (opt-level-3 + NHWC)", fast_nhwc(data)[0])
    check("plain numpy forward", forward(data)[0])

    contenders = {
        "xrelay linalg, opt-level-3 + NHWC": lambda: fast_nhwc(data),
        "xrelay linalg, opt-level-3 passes": lambda: fast(data),
        "xrelay linalg, as built": lambda: plain(data),
        "plain numpy forward": lambda: forward(data),
    }
    try:
        import onnxruntime as ort
    except ImportError:
        print("  onnxruntime not installed (pip install -e '.[bench]'): ONNX Runtime skipped")
    else:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(onnx_model(bound).SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        check("onnxruntime", session.run(None, {"data": data})[0])
        contenders[f"onnxruntime {ort.__version__} ({threads} threads)"] = lambda: session.run(None, {"data": data})
    print(f"  {check_blas_threads(threads)}")
    load_before = os.getloadavg()[0]
    results = interleaved_medians_ms(contenders, repeat)
    ort_ms = next((ms for label, ms in results.items() if label.startswith("onnxruntime")), None)
    numpy_ms = results["plain numpy forward"]
    print(f"\nResNet-18, batch 1, 224x224: median of {repeat} runs in interleaved blocks of {BLOCK} "
          f"(1-min load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, {os.cpu_count()} CPUs)")
    print(f"  {'':<40} {'median':>9}      {'/ numpy':>8} {'/ ORT':>8}")
    for label, ms in results.items():
        vs_ort = f"{ms / ort_ms:8.2f}" if ort_ms else f"{'-':>8}"
        print(f"  {label:<40} {ms:9.1f} ms   {ms / numpy_ms:8.2f} {vs_ort}")


def bench_loops(skip_stock: bool) -> None:
    from xrelay.lowering import lower
    from xrelay.runtime.interpreter import run as run_nn
    from xrelay.runtime.loops_exec import compile_loops

    module = small_loops_network()
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((1, 4, 8, 8), (8, 4, 3, 3), (8,))]
    reference = run_nn(module, dict(zip(("data", "weight", "bias"), arrays)))
    loops = lower(module, to="loops")
    ops = dynamic_op_count(loops)
    start = time.perf_counter()
    program = compile_loops(loops)
    compile_s = time.perf_counter() - start
    ours = median_ms(lambda: program(*arrays), 5) / 1e3
    np.testing.assert_allclose(program(*arrays)[0], reference, rtol=1e-4, atol=1e-5)
    print(f"\nLoops level: conv3x3(4->8, 8x8) + bias + relu + maxpool2x2, {ops} scalar ops per run")
    print(f"  xrelay compiled loops: {ours * 1e3:8.1f} ms/run  {ops / ours / 1e6:7.2f} M ops/s "
          f"(one-time translation {compile_s * 1e3:.1f} ms)")
    if skip_stock:
        return
    start = time.perf_counter()
    stock_out = stock_interpreter_run(loops, arrays)
    stock = time.perf_counter() - start
    np.testing.assert_allclose(stock_out, reference, rtol=1e-4, atol=1e-5)
    print(f"  xDSL stock interpreter: {stock * 1e3:7.1f} ms/run  {ops / stock / 1e6:7.3f} M ops/s")
    print(f"  speed-up: {stock / ours:.0f}x (same IR, same outputs)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2,
                        help="threads for numpy's BLAS and ONNX Runtime (default 2)")
    parser.add_argument("--skip-stock", action="store_true", help="skip xDSL's (slow) stock interpreter")
    parser.add_argument("--skip-resnet", action="store_true")
    args = parser.parse_args(argv)
    if not args.skip_resnet:
        bench_resnet(args.repeat, args.threads)
    bench_loops(args.skip_stock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
