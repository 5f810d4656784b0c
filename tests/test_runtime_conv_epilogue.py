"""A convolution that runs its elementwise tail (residual add, bias-add, ReLU) and the pad of the
tail's result on each block of output rows it finishes (runtime/kernels/conv_epilogue.py) computes what
the separate steps compute: numpy written here, on 1 and 2 threads, by Winograd and by im2col."""

from __future__ import annotations

import numpy as np
from module_builder import IDENTITY4, formed, generic4
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.runtime.kernels.conv_epilogue import ConvStep
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.executor.pad_step import PadStep
from xrelay.runtime.executor.plan import FusedTail

ID = IDENTITY4


def dense(array: np.ndarray) -> str:
    shape = "x".join(map(str, array.shape))
    return f"dense<{np.array2string(array, separator=', ', threshold=1 << 20, floatmode='unique')}> : tensor<{shape}xf32>"


def source(h: int, c: int, f: int, weight: np.ndarray | None, bias: np.ndarray, relu_also_returned: bool,
           tail: bool = True) -> str:
    """pad(x) -> 3x3 conv (constant `weight`, else the argument %w) -> + %r -> + bias -> ReLU -> pad,
    returning the padded result (and the ReLU's, which then has two readers). Without `tail`, the
    convolution's result is padded (and returned) in the ReLU's place, and %r is unused."""
    x, y, p = f"tensor<1x{h}x{h}x{c}xf32>", f"tensor<1x{h}x{h}x{f}xf32>", f"tensor<1x{h + 2}x{h + 2}x{f}xf32>"
    xp = f"tensor<1x{h + 2}x{h + 2}x{c}xf32>"
    k = f"tensor<3x3x{c}x{f}xf32>"
    bias_type = f"tensor<1x1x1x{f}xf32>"
    weight_arg = "" if weight is not None else f", %w: {k}"
    weight_def = f"%w = arith.constant {dense(weight)}" if weight is not None else ""
    results = f"{p}, {y}" if relu_also_returned else p
    returned = f"%p, %relu : {p}, {y}" if relu_also_returned else f"%p : {p}"
    text = f"""
func.func @main(%x: {x}, %r: {y}{weight_arg}) -> ({results}) {{
  %zero = arith.constant 0.0 : f32
  %xp = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  }} : {x} to {xp}
  {weight_def}
  %e0 = tensor.empty() : {y}
  %init = linalg.fill ins(%zero : f32) outs(%e0 : {y}) -> {y}
  %conv = linalg.conv_2d_nhwc_hwcf {{strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}}
      ins(%xp, %w : {xp}, {k}) outs(%init : {y}) -> {y}
  {generic4("sum", [("conv", y), ("r", y)], y, "%s = arith.addf %in0, %in1 : f32")}
  %bias = arith.constant {dense(bias)}
  {generic4("biased", [("sum", y), ("bias", bias_type)], y, "%s = arith.addf %in0, %in1 : f32",
            [ID, "affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>"])}
  {generic4("relu", [("biased", y)], y, "%s = arith.maximumf %in0, %zero : f32")}
  %minus = arith.constant -1.5 : f32
  %p = tensor.pad %relu low[0, 1, 1, 0] high[0, 1, 1, 0] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %minus : f32
  }} : {y} to {p}
  func.return {returned}
}}
"""
    if not tail:
        start, end = text.index("  %sum_out = tensor.empty()"), text.index("  %minus = ")
        text = (text[:start] + text[end:]).replace("tensor.pad %relu", "tensor.pad %conv").replace("%p, %relu", "%p, %conv")
    return text


def expected_outputs(x, r, w, bias):
    """The padded ReLU (border -1.5) and the ReLU, in float64: the 3x3 conv of x padded with zeros."""
    h = x.shape[1]
    xp = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    conv = sum(np.einsum("nhwc,cf->nhwf", xp[:, kh:kh + h, kw:kw + h], w[kh, kw]) for kh in range(3) for kw in range(3))
    relu = np.maximum(conv + r + bias, 0)
    padded = np.full((1, h + 2, h + 2, w.shape[3]), -1.5)
    padded[:, 1:-1, 1:-1] = relu
    return padded, relu


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("winograd", [True, False])
@pytest.mark.parametrize("relu_also_returned", [False, True])
def test_conv_runs_its_tail_and_pad_on_each_block_of_rows(threads, winograd, relu_also_returned, blas_workers,
                                                           monkeypatch):
    blocks = []
    original = ConvStep.__call__

    rng = np.random.default_rng(3)
    h, c, f = 16, 8, 8
    x = rng.standard_normal((1, h, h, c)).astype(np.float32)
    r = rng.standard_normal((1, h, h, f)).astype(np.float32)
    w = rng.standard_normal((3, 3, c, f)).astype(np.float32)
    bias = rng.standard_normal((1, 1, 1, f)).astype(np.float32)
    text = source(h, c, f, w if winograd else None, bias, relu_also_returned)
    program = LinalgProgram(formed(Parser(make_context(), text).parse_module(), min_conv_macs=0))
    convs = [step for step in program.steps if isinstance(step, ConvStep)]
    assert len(convs) == 1 and convs[0].tail is not None and convs[0].pad is not None
    assert convs[0].pad_only_reader is not relu_also_returned
    # The tail and the pad after the conv no longer run as steps of their own (the input's pad does).
    assert not any(isinstance(step, FusedTail) for step in program.steps)
    assert sum(isinstance(step, PadStep) for step in program.steps) == 1

    def recording(step, env):  # the rows each epilogue call covers
        rows = step.tail.bind

        def bind(env, last_out=None):
            inner = rows(env, last_out)
            return lambda r0, r1: blocks.append((r0, r1)) or inner(r0, r1)

        step.tail.bind = bind
        try:
            original(step, env)
        finally:
            del step.tail.bind

    monkeypatch.setattr(ConvStep, "__call__", recording)
    blas_workers(threads)
    expected = expected_outputs(x, r, w, bias)[:2 if relu_also_returned else 1]
    args = (x, r) if winograd else (x, r, w)
    for _ in range(2):
        outputs = program(*args)
        for got, want in zip(outputs, expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    first_run = sorted(blocks[:len(blocks) // 2])
    assert first_run[0][0] == 0 and first_run[-1][1] == h
    assert all(a[1] == b[0] for a, b in zip(first_run, first_run[1:]))  # every row once


def test_a_tail_reading_another_conv_joins_the_later_conv():
    """ResNet's residual add of two convolutions' results: the tail runs with the one computed last,
    and only when the other is computed before it."""
    rng = np.random.default_rng(4)
    h, c, f = 8, 8, 8
    w1, w2 = (rng.standard_normal((3, 3, c, f)).astype(np.float32) for _ in range(2))
    y = f"tensor<1x{h}x{h}x{f}xf32>"
    xp = f"tensor<1x{h + 2}x{h + 2}x{c}xf32>"
    k = f"tensor<3x3x{c}x{f}xf32>"
    conv = ("%{name} = linalg.conv_2d_nhwc_hwcf {{strides = dense<1> : tensor<2xi64>, dilations = dense<1> : "
            "tensor<2xi64>}} ins(%x, %{w} : {xp}, {k}) outs(%init : {y}) -> {y}")
    text = f"""
func.func @main(%x: {xp}) -> {y} {{
  %zero = arith.constant 0.0 : f32
  %w1 = arith.constant {dense(w1)}
  %w2 = arith.constant {dense(w2)}
  %e0 = tensor.empty() : {y}
  %init = linalg.fill ins(%zero : f32) outs(%e0 : {y}) -> {y}
  {conv.format(name="a", w="w1", xp=xp, k=k, y=y)}
  {conv.format(name="b", w="w2", xp=xp, k=k, y=y)}
  {generic4("sum", [("a", y), ("b", y)], y, "%s = arith.subf %in0, %in1 : f32")}
  func.return %sum : {y}
}}
"""
    program = LinalgProgram(formed(Parser(make_context(), text).parse_module()))
    convs = [step for step in program.steps if isinstance(step, ConvStep)]
    # form-kernels gives the tail to the first convolution it reads (a), placed at the tail: after b
    assert [step.tail is not None for step in convs] == [False, True]
    assert convs[1].op.results[0].name_hint == "a"
    x = rng.standard_normal((1, h + 2, h + 2, c)).astype(np.float32)
    xd = x.astype(np.float64)
    expected = sum(np.einsum("nhwc,cf->nhwf", xd[:, i:i + h, j:j + h], w1[i, j] - w2[i, j])
                   for i in range(3) for j in range(3))
    np.testing.assert_allclose(program(x)[0], expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("winograd", [True, False])
def test_conv_without_a_tail_fills_the_pad_after_it_block_by_block(threads, winograd, blas_workers):
    rng = np.random.default_rng(5)
    h, c, f = 16, 8, 8
    x = rng.standard_normal((1, h, h, c)).astype(np.float32)
    r = rng.standard_normal((1, h, h, f)).astype(np.float32)
    w = rng.standard_normal((3, 3, c, f)).astype(np.float32)
    text = source(h, c, f, w if winograd else None, np.zeros((1, 1, 1, f), np.float32), True, tail=False)
    program = LinalgProgram(formed(Parser(make_context(), text).parse_module(), min_conv_macs=0))
    convs = [step for step in program.steps if isinstance(step, ConvStep)]
    assert len(convs) == 1 and convs[0].tail is None and convs[0].pad is not None
    assert sum(isinstance(step, PadStep) for step in program.steps) == 1  # the input's
    blas_workers(threads)
    xp = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    conv = sum(np.einsum("nhwc,cf->nhwf", xp[:, i:i + h, j:j + h], w[i, j]) for i in range(3) for j in range(3))
    padded = np.full((1, h + 2, h + 2, f), -1.5)
    padded[:, 1:-1, 1:-1] = conv
    for _ in range(2):
        got_padded, got_conv = program(*((x, r) if winograd else (x, r, w)))
        np.testing.assert_allclose(got_padded, padded, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(got_conv, conv, rtol=1e-4, atol=1e-4)
