"""A tail into a pad that reads the residual sum a convolution's own tail computes (ResNet's blocks:
the sum is also the next block's residual, so its bias-add and ReLU into the next convolution's pad
are a step of their own) runs on that convolution's blocks of rows, after its tail
(runtime/kernels/conv_epilogue.py `ConvStep.after`). Checked against numpy written here,
on 1 and 2 threads and in two processes, 1x1 and 3x3, stride 1 and 2, odd sizes."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.runtime.kernels import conv
from xrelay.runtime.kernels import linalg_conv
from xrelay.runtime.parallel import spmd
from xrelay.runtime.executor import plan as split_plan
from xrelay.runtime.kernels.conv_epilogue import ConvStep, TailIntoPad
from xrelay.runtime.executor.linalg_exec import LinalgProgram

ID = "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>"
PAR = '["parallel", "parallel", "parallel", "parallel"]'
RNG = np.random.default_rng(31)


def dense(array: np.ndarray) -> str:
    shape = "x".join(map(str, array.shape))
    return f"dense<{np.array2string(array, separator=', ', threshold=1 << 20, floatmode='unique')}> : tensor<{shape}xf32>"


def source(h: int, c: int, f: int, k: int, stride: int, weight: np.ndarray, bias: np.ndarray) -> str:
    """%sum = conv(x) (k x k, `stride`, unpadded, constant weight) + %r; returns pad(relu(%sum + bias))
    (border -1.5) and %sum (a second reader: the bias-add cannot write over it)."""
    o = (h - k) // stride + 1
    x, y, p = f"tensor<1x{h}x{h}x{c}xf32>", f"tensor<1x{o}x{o}x{f}xf32>", f"tensor<1x{o + 2}x{o + 2}x{f}xf32>"
    return f"""
func.func @main(%x: {x}, %r: {y}) -> ({p}, {y}) {{
  %zero = arith.constant 0.0 : f32
  %w = arith.constant {dense(weight)}
  %e0 = tensor.empty() : {y}
  %init = linalg.fill ins(%zero : f32) outs(%e0 : {y}) -> {y}
  %conv = linalg.conv_2d_nhwc_hwcf {{strides = dense<{stride}> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}}
      ins(%x, %w : {x}, tensor<{k}x{k}x{c}x{f}xf32>) outs(%init : {y}) -> {y}
  %e1 = tensor.empty() : {y}
  %sum = linalg.generic {{indexing_maps = [{ID}, {ID}, {ID}], iterator_types = {PAR}}}
      ins(%conv, %r : {y}, {y}) outs(%e1 : {y}) {{
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }} -> {y}
  %bias = arith.constant {dense(bias)}
  %e2 = tensor.empty() : {y}
  %biased = linalg.generic {{indexing_maps = [{ID}, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>, {ID}],
      iterator_types = {PAR}}} ins(%sum, %bias : {y}, tensor<1x1x1x{f}xf32>) outs(%e2 : {y}) {{
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }} -> {y}
  %e3 = tensor.empty() : {y}
  %relu = linalg.generic {{indexing_maps = [{ID}, {ID}], iterator_types = {PAR}}} ins(%biased : {y}) outs(%e3 : {y}) {{
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %a, %zero : f32
    linalg.yield %s : f32
  }} -> {y}
  %minus = arith.constant -1.5 : f32
  %p = tensor.pad %relu low[0, 1, 1, 0] high[0, 1, 1, 0] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %minus : f32
  }} : {y} to {p}
  func.return %p, %sum : {p}, {y}
}}
"""


def expected(x, r, w, bias, stride):
    """(the padded ReLU, the residual sum) in float64."""
    k = w.shape[0]
    o = r.shape[1]
    span = stride * (o - 1) + 1
    total = sum(np.einsum("nhwc,cf->nhwf", x[:, i:i + span:stride, j:j + span:stride].astype(np.float64), w[i, j])
                for i in range(k) for j in range(k))
    total = total + r
    padded = np.full((1, o + 2, o + 2, w.shape[3]), -1.5)
    padded[:, 1:-1, 1:-1] = np.maximum(total + bias, 0)
    return padded, total


CASES = [  # (h, c, f, k, stride)
    (9, 5, 6, 3, 1),     # 3x3 stride 1, odd sizes
    (13, 4, 8, 1, 2),    # 1x1 stride 2 (ResNet's shortcut convolutions)
    (7, 3, 16, 1, 1),    # 1x1 stride 1 (the data is the patch matrix)
    (11, 6, 4, 3, 2),    # 3x3 stride 2
    (4, 8, 32, 1, 2),    # 2x2 output, 32 filters: split by filters, the epilogue by rows after
]


def case(h, c, f, k, stride):
    w = RNG.standard_normal((k, k, c, f)).astype(np.float32)
    bias = RNG.standard_normal((1, 1, 1, f)).astype(np.float32)
    o = (h - k) // stride + 1
    inputs = lambda: (RNG.standard_normal((1, h, h, c)).astype(np.float32),  # noqa: E731
                      RNG.standard_normal((1, o, o, f)).astype(np.float32))
    return source(h, c, f, k, stride, w, bias), w, bias, inputs


@pytest.fixture
def split_everything(monkeypatch):
    """Every step that can split does, however small."""
    for name in ("MIN_SPLIT_ELEMENTS", "PROCESSES_MIN_SPLIT_ELEMENTS"):
        monkeypatch.setattr(split_plan, name, 0)
    for name in ("MIN_SPLIT_MACS", "PROCESSES_MIN_SPLIT_MACS"):
        monkeypatch.setattr(linalg_conv, name, 0)
    for name in ("MIN_SPLIT_MATMUL_MACS", "PROCESSES_MIN_SPLIT_MATMUL_MACS"):
        monkeypatch.setattr(conv, name, 0)


def fused_steps(program) -> list[ConvStep]:
    return [step for step in program.steps if isinstance(step, ConvStep) and step.after is not None]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("h, c, f, k, stride", CASES)
def test_tail_into_pad_runs_on_the_convolutions_rows(threads, h, c, f, k, stride, blas_workers, split_everything):
    text, w, bias, inputs = case(h, c, f, k, stride)
    program = LinalgProgram(Parser(make_context(), text).parse_module())
    assert len(fused_steps(program)) == 1
    assert not any(isinstance(step, TailIntoPad) for step in program.steps)
    blas_workers(threads)
    for _ in range(3):  # the later runs reuse the kept epilogues
        x, r = inputs()
        padded, total = expected(x, r, w, bias, stride)
        got = program(x, r)
        np.testing.assert_allclose(got[0], padded, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(got[1], total, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(spmd.why_not_platform() is not None, reason="no two-process mode here")
@pytest.mark.parametrize("h, c, f, k, stride", [CASES[1], CASES[4]])
def test_tail_into_pad_on_the_convolutions_rows_in_two_processes(h, c, f, k, stride, blas_workers, split_everything,
                                                                 monkeypatch):
    """Both processes run the fused step (and its rows of the tail into the pad)."""
    monkeypatch.setattr(spmd, "CHECK_BINDINGS", True)
    blas_workers(2)
    text, w, bias, inputs = case(h, c, f, k, stride)
    program = LinalgProgram(Parser(make_context(), text).parse_module())
    program.threading = "processes"
    try:
        (step,) = fused_steps(program)
        for _ in range(4):  # the first call forks
            x, r = inputs()
            padded, total = expected(x, r, w, bias, stride)
            got = program(x, r)
            np.testing.assert_allclose(got[0], padded, rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(got[1], total, rtol=1e-4, atol=1e-4)
        assert program.steps.index(step) in program._processes.spmd_steps
    finally:
        program.close()
