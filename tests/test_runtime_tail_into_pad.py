"""A fused elementwise tail run as a step of its own whose result only the pad after it reads writes
its last member into the pad's interior (runtime/kernels/conv_epilogue.py `TailIntoPad`): no copy; one whose
result is also read elsewhere copies its rows into the pad in its own parts.
Checked against numpy written here, on 1 and 2 threads, channels-last and channels-first."""

from __future__ import annotations

import numpy as np
from module_builder import IDENTITY4, formed, generic4
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.runtime.kernels.conv_epilogue import TailIntoPad
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.executor.pad_step import PadStep


def tensor(shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def source(shape, channel_axis: int, low, high, relu_returned: bool) -> str:
    """(x + per-channel %b) -> ReLU -> pad by `low`/`high` with 0.5; the padded result (and the ReLU's)."""
    bias_shape = [1] * 4
    bias_shape[channel_axis] = shape[channel_axis]
    dims = ", ".join(f"d{i}" if i == channel_axis else "0" for i in range(4))
    padded = [n + lo + hi for n, lo, hi in zip(shape, low, high)]
    y, p, b = tensor(shape), tensor(padded), tensor(bias_shape)
    results = f"{p}, {y}" if relu_returned else p
    returned = f"%p, %relu : {p}, {y}" if relu_returned else f"%p : {p}"
    return f"""
func.func @main(%x: {y}, %b: {b}) -> ({results}) {{
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  {generic4("biased", [("x", y), ("b", b)], y, "%s = arith.addf %in0, %in1 : f32",
            [IDENTITY4, f"affine_map<(d0, d1, d2, d3) -> ({dims})>"])}
  {generic4("relu", [("biased", y)], y, "%s = arith.maximumf %in0, %zero : f32")}
  %p = tensor.pad %relu low[{", ".join(map(str, low))}] high[{", ".join(map(str, high))}] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %half : f32
  }} : {y} to {p}
  func.return {returned}
}}
"""


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape, channel_axis, low, high", [
    ((1, 37, 29, 16), 3, (0, 1, 2, 0), (0, 1, 1, 0)),   # NHWC, uneven pads
    ((1, 8, 31, 35), 1, (0, 0, 1, 1), (0, 0, 2, 1)),    # NCHW
    ((2, 40, 40, 8), 3, (1, 0, 1, 0), (0, 0, 1, 1)),    # two images, the batch padded too
])
@pytest.mark.parametrize("relu_returned", [False, True])
def test_tail_writes_into_the_pad_that_alone_reads_it(threads, shape, channel_axis, low, high, relu_returned,
                                                      blas_workers):
    rng = np.random.default_rng(21)
    x = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal([n if i == channel_axis else 1 for i, n in enumerate(shape)]).astype(np.float32)
    text = source(shape, channel_axis, low, high, relu_returned)
    program = LinalgProgram(formed(Parser(make_context(), text).parse_module(), min_points=0))  # a part per thread
    (fused,) = [step for step in program.steps if isinstance(step, TailIntoPad)]
    assert fused.copies is relu_returned  # a ReLU also returned is copied into the pad, row block by row block
    assert not any(isinstance(step, PadStep) for step in program.steps)
    blas_workers(threads)
    relu = np.maximum(x.astype(np.float64) + b, 0)
    padded = np.pad(relu, list(zip(low, high)), constant_values=0.5)
    for _ in range(2):
        got = program(x, b)
        np.testing.assert_allclose(got[0], padded, rtol=1e-6, atol=1e-6)
        if relu_returned:
            np.testing.assert_allclose(got[1], relu, rtol=1e-6, atol=1e-6)
        x = rng.standard_normal(shape).astype(np.float32)
        relu = np.maximum(x.astype(np.float64) + b, 0)
        padded = np.pad(relu, list(zip(low, high)), constant_values=0.5)



