"""Where one convolution step's time goes: the step, its kernel alone, its im2col copy, its GEMM alone.

    .venv/bin/python benchmarks/conv_pieces.py [--model resnet18] [--threads 1] [--match /2] [--rounds 40]

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
"""

from __future__ import annotations

import argparse
import os
import statistics
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet18", help="resnet18, resnet50 or onnx:<light model>")
    parser.add_argument("--threads", type=int, default=1, help="threads the step splits over (the GEMM: one)")
    parser.add_argument("--match", default="/2", help="time the convolutions whose label contains this")
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args(argv)
    if any(var in os.environ for var in UNSET_FOR_MEASUREMENT):
        env = {k: v for k, v in os.environ.items() if k not in UNSET_FOR_MEASUREMENT}
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), *sys.argv[1:]], env)

    from split_profile import step_label

    from execution import Contender
    from xrelay.runtime.conv_epilogue import ConvStep
    from xrelay.runtime.threads import set_blas_threads, split_blas_threads

    contender = Contender("opt3-nhwc", args.model)
    program = contender.program
    set_blas_threads(args.threads)
    loads = [os.getloadavg()[0]]
    print(f"{args.model}, {args.threads} thread(s), medians of {args.rounds} rounds (ms): "
          "step, kernel alone, patch copy, GEMM (numpy, 1 thread), step / GEMM")
    with split_blas_threads():
        env: list = [None] * len(program.slots)
        env[0] = contender.data
        for step in program.steps:
            step(env)
            label = step_label(step)
            if isinstance(step, ConvStep) and args.match in label:
                t = time_pieces(step, env, args.rounds)
                print(f"  {label:42s} {t['step']:7.3f} {t['kernel alone']:7.3f} {t['patch copy']:7.3f} "
                      f"{t['GEMM (numpy)']:7.3f} {t['step'] / t['GEMM (numpy)']:6.2f}x")
    loads.append(os.getloadavg()[0])
    print(f"1-minute load average {min(loads):.1f}-{max(loads):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
