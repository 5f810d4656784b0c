"""Where one convolution step's time goes: the step, its kernel alone, its im2col copy, its GEMM alone.

    .venv/bin/python benchmarks/conv_pieces.py [--model resnet18] [--threads 1] [--match /2] [--rounds 40] [--ort]

Builds the model as benchmarks/execution.py's best contender (opt-level-3 passes + NHWC, weights
bound), runs its steps in order once and, right after each convolution step whose label
(split_profile.step_label) contains `--match`, times round-robin in this process, `--rounds` times:

- the step as the program runs it (kernel, fused tail, pad: `conv_epilogue.ConvStep`);
- its kernel alone (`ConvGeometry.runner`, no epilogue);
- its patch matrix copy alone (the strided (N, OH, OW, KH, KW, C) view of the data, made contiguous);
- its GEMM alone: the copied (N*OH*OW, KH*KW*C) patches times the (KH*KW*C, F) weight matrix, with
  numpy and single-threaded BLAS (the reference the step is compared with).

Prints the medians and the step's time over the GEMM's. The figures are warm (the step's operands
are in cache from its previous round); split_profile.py gives the steps' times in program order.
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset for the measured process, as in benchmarks/workers.py.

With `--ort`, ONNX Runtime's kernel time for the same convolution beside them: each matched
convolution as a one-node model (Conv with a bias, and a Relu after it when the step has a fused
tail, which ORT fuses into its kernel) over the step's padded input, unpadded, on `--threads`
threads, its Conv node's median kernel time in ORT's profile (split_profile.ort_node_profile),
all of them round-robin in a process of their own, once before and once after this process times
its pieces. The gap to ORT then splits into GEMM efficiency (GEMM - ORT), the patch copy or
Winograd transforms (kernel - GEMM) and the fused epilogue (step - kernel).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
from workers import UNSET_FOR_MEASUREMENT


def patches_and_weights(step, arrays: list) -> tuple[np.ndarray, np.ndarray]:
    """The strided (N, OH, OW, KH, KW, C) patch view of a `ConvStep`'s data and its (KH*KW*C, F)
    weight matrix (a copy): the GEMM of the contiguous patches by the matrix is the convolution."""
    g = step.geometry
    data, weight, out = arrays[g.data], arrays[g.weight], arrays[step.n_in]
    x = data.transpose(g.data_axes)[:, :, g.offset[0]:, g.offset[1]:]
    w = weight.transpose(g.weight_axes)  # F, C, KH, KW
    n, f, oh, ow = out.transpose(g.out_axes).shape
    _, c, kh, kw = w.shape
    sn, sc, sh, sw = x.strides
    (s_h, s_w), (d_h, d_w) = g.strides, g.dilation
    view = np.lib.stride_tricks.as_strided(x, (n, oh, ow, kh, kw, c), (sn, sh * s_h, sw * s_w, sh * d_h, sw * d_w, sc),
                                           writeable=False)
    return view, np.ascontiguousarray(w.transpose(2, 3, 1, 0).reshape(kh * kw * c, f))


def time_pieces(step, env: list, rounds: int) -> dict[str, float]:
    """Median ms of the step, its kernel alone, its patch copy and its GEMM, timed round-robin."""
    arrays = step.prepare(env)
    ins, out = arrays[:step.n_in], arrays[step.n_in]
    view, matrix = patches_and_weights(step, arrays)
    patches = np.ascontiguousarray(view).reshape(-1, matrix.shape[0])
    product = np.empty((patches.shape[0], matrix.shape[1]), matrix.dtype)
    pieces = {
        "step": lambda: step(env),
        "kernel alone": lambda: step.runner(ins, out, step.accumulate, None),
        "patch copy": lambda: np.ascontiguousarray(view),
        "GEMM (numpy)": lambda: np.matmul(patches, matrix, out=product),
    }
    times: dict[str, list[float]] = {name: [] for name in pieces}
    for call in pieces.values():  # untimed
        call()
    for _ in range(rounds):
        for name, call in pieces.items():
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def conv_spec(step, arrays: list) -> dict:
    """The convolution of a `ConvStep` as ONNX Runtime's one-node model takes it: NCHW input shape
    (the step's padded data from its window offset), OIHW weight shape, strides, dilations, and
    whether a fused tail follows (a Relu in ORT's model)."""
    g = step.geometry
    data, weight = arrays[g.data], arrays[g.weight]
    x = data.transpose(g.data_axes)[:, :, g.offset[0]:, g.offset[1]:]
    return {"x": list(x.shape), "w": list(weight.transpose(g.weight_axes).shape), "strides": list(g.strides),
            "dilations": list(g.dilation), "relu": step.tail is not None}


def conv_model(spec: dict, weight: np.ndarray, bias: np.ndarray) -> bytes:
    """The ONNX model of a `conv_spec`: input x, Conv with this OIHW weight and bias (no padding),
    then Relu if the spec says so; output y."""
    import onnx
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c" if spec["relu"] else "y"], strides=spec["strides"],
                              dilations=spec["dilations"])]
    if spec["relu"]:
        nodes.append(helper.make_node("Relu", ["c"], ["y"]))
    graph = helper.make_graph(nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, spec["x"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [onnx.numpy_helper.from_array(weight, "w"), onnx.numpy_helper.from_array(bias, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def ort_conv_times(specs: list[dict], threads: int, rounds: int) -> list[float]:
    """Median ms of ONNX Runtime's Conv kernel for each `conv_spec`, the models run round-robin."""
    from split_profile import ort_node_profile

    rng = np.random.default_rng(0)
    models = []
    for spec in specs:
        weight = rng.standard_normal(spec["w"]).astype(np.float32) * 0.05
        bias = rng.standard_normal(spec["w"][0]).astype(np.float32)
        models.append((conv_model(spec, weight, bias), {"x": rng.standard_normal(spec["x"]).astype(np.float32)}))
    times: list[list[float]] = [[] for _ in specs]
    for _ in range(max(1, rounds // 10)):  # round-robin, ten profiled runs per model at a time
        for i, (onnx_bytes, feeds) in enumerate(models):
            nodes = ort_node_profile(onnx_bytes, feeds, threads, 10)
            times[i].append(sum(micros for _, op, _, micros in nodes if op in ("Conv", "FusedConv")) / 1e3)
    return [statistics.median(t) for t in times]


def run_ort_worker(specs: list[dict], threads: int, rounds: int) -> list[list[float]]:
    """`ort_conv_times` in a process of its own (OPENBLAS variables unset, as for this one)."""
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--ort-worker", str(threads), str(rounds)],
                          input=json.dumps(specs), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"ONNX Runtime worker failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet18", help="resnet18, resnet50 or onnx:<light model>")
    parser.add_argument("--threads", type=int, default=1, help="threads the step splits over (the GEMM: one)")
    parser.add_argument("--match", default="/2", help="time the convolutions whose label contains this")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--ort", action="store_true", help="also ONNX Runtime's kernel time for each convolution")
    parser.add_argument("--ort-worker", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if any(var in os.environ for var in UNSET_FOR_MEASUREMENT):
        env = {k: v for k, v in os.environ.items() if k not in UNSET_FOR_MEASUREMENT}
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), *sys.argv[1:]], env)
    if args.ort_worker:
        print(json.dumps(ort_conv_times(json.loads(sys.stdin.read()), *args.ort_worker)))
        return 0

    from split_profile import step_label

    from execution import Contender
    from xrelay.runtime.kernels.conv_epilogue import ConvStep
    from xrelay.runtime.parallel.threads import set_blas_threads, split_blas_threads

    contender = Contender("opt3-nhwc", args.model)
    program = contender.program
    set_blas_threads(args.threads)
    loads = [os.getloadavg()[0]]
    rows, specs = [], []
    with split_blas_threads():
        env: list = [None] * len(program.slots)
        env[0] = contender.data
        for step in program.steps:
            step(env)
            label = step_label(step)
            if isinstance(step, ConvStep) and args.match in label:
                specs.append(conv_spec(step, step.prepare(env)))
                rows.append((label, time_pieces(step, env, args.rounds)))
    loads.append(os.getloadavg()[0])
    ort = None
    if args.ort and specs:  # before and after this process's timings, each in a process of its own
        runs = [run_ort_worker(specs, args.threads, args.rounds) for _ in range(2)]
        ort = [statistics.median(pair) for pair in zip(*runs)]
        loads.append(os.getloadavg()[0])
    print(f"{args.model}, {args.threads} thread(s), medians of {args.rounds} rounds (ms): "
          "step, kernel alone, patch copy, GEMM (numpy, 1 thread), step / GEMM"
          + (", ONNX Runtime's Conv (+Relu: 'tail') kernel, GEMM / ORT, step / ORT" if ort else ""))
    for i, (label, t) in enumerate(rows):
        line = (f"  {label:42s} {t['step']:7.3f} {t['kernel alone']:7.3f} {t['patch copy']:7.3f} "
                f"{t['GEMM (numpy)']:7.3f} {t['step'] / t['GEMM (numpy)']:6.2f}x")
        if ort:
            line += f" {ort[i]:7.3f} {t['GEMM (numpy)'] / ort[i]:6.2f}x {t['step'] / ort[i]:6.2f}x"
        print(line)
    if ort:
        total = {name: sum(t[name] for _, t in rows) for name in rows[0][1]}
        print(f"  sum: step {total['step']:.2f}, kernel {total['kernel alone']:.2f}, GEMM {total['GEMM (numpy)']:.2f}, "
              f"ONNX Runtime {sum(ort):.2f} ms")
    print(f"1-minute load average {min(loads):.1f}-{max(loads):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
