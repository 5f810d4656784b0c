"""A convolution whose result is padded with -inf only for a max pool computes the pool from the
unpadded result (runtime/kernels/conv_epilogue.py `_fuse_pool`, runtime/kernels/window_reduce.py `ClippedPooling`):
on one thread row block by row block, as each block completes windows; channels-last, when the pool
alone reads the result, both block by block without writing the result (runtime/kernels/conv_pool.py).
Checked against numpy written here: both layouts, im2col and Winograd, strides, dilations, uneven
pads, batches, 1 and 2 threads."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.runtime.kernels.conv_epilogue import ConvStep
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.executor.pad_step import PadStep
from xrelay.runtime.executor.plan import FusedTail
from xrelay.runtime.kernels.window_reduce import ClippedPooling

NEG_INF = "0xFF800000"


def tensor(shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xf32>"


def dense(array: np.ndarray) -> str:
    text = np.array2string(array, separator=", ", threshold=1 << 20, floatmode="unique")
    return f"dense<{text}> : {tensor(array.shape)}"


def source(layout: str, x_shape, w_shape, conv_stride: int, low, high, pool: int, pool_stride: int, dilation: int,
           fill: str, weight: np.ndarray | None, padded_returned: bool = False,
           conv_returned: bool = False, unpadded: bool = False) -> tuple[str, tuple]:
    """conv -> tensor.pad (by `low`/`high` on H and W, with `fill`) -> max pool; the pooled output
    (and the padded tensor when `padded_returned`, the convolution's result when `conv_returned`).
    `unpadded`: no pad, the pool reads the convolution's result (`low`/`high` must be zeros)."""
    if layout == "nhwc":
        n, h, w, _ = x_shape
        kh, kw, _, f = w_shape
    else:
        n, _, h, w = x_shape
        f, _, kh, kw = w_shape
    oh, ow = (h - kh) // conv_stride + 1, (w - kw) // conv_stride + 1
    ph, pw = oh + low[0] + high[0], ow + low[1] + high[1]
    qh, qw = (ph - dilation * (pool - 1) - 1) // pool_stride + 1, (pw - dilation * (pool - 1) - 1) // pool_stride + 1
    nhwc = layout == "nhwc"
    y, p, q = ((n, oh, ow, f), (n, ph, pw, f), (n, qh, qw, f)) if nhwc else ((n, f, oh, ow), (n, f, ph, pw), (n, f, qh, qw))
    pad_low = f"[0, {low[0]}, {low[1]}, 0]" if nhwc else f"[0, 0, {low[0]}, {low[1]}]"
    pad_high = f"[0, {high[0]}, {high[1]}, 0]" if nhwc else f"[0, 0, {high[0]}, {high[1]}]"
    conv = "conv_2d_nhwc_hwcf" if nhwc else "conv_2d_nchw_fchw"
    weight_arg = "" if weight is not None else f", %w: {tensor(w_shape)}"
    weight_def = f"%w = arith.constant {dense(weight)}" if weight is not None else ""
    results = f"{tensor(q)}, {tensor(p)}" if padded_returned else tensor(q)
    pad_op = f"""%p = tensor.pad %conv low{pad_low} high{pad_high} {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %fill : f32
  }} : {tensor(y)} to {tensor(p)}"""
    if unpadded:  # the pool reads the convolution's result itself
        pad_op, p = "", y
    returned = f"%pool, %p : {results}" if padded_returned else f"%pool : {results}"
    if conv_returned:
        results += f", {tensor(y)}"
        returned = returned.replace(" :", ", %conv :") + f", {tensor(y)}"
    text = f"""
func.func @main(%x: {tensor(x_shape)}{weight_arg}) -> ({results}) {{
  %zero = arith.constant 0.0 : f32
  %fill = arith.constant {fill} : f32
  %ninf = arith.constant {NEG_INF} : f32
  {weight_def}
  %e0 = tensor.empty() : {tensor(y)}
  %init = linalg.fill ins(%zero : f32) outs(%e0 : {tensor(y)}) -> {tensor(y)}
  %conv = linalg.{conv} {{strides = dense<{conv_stride}> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}}
      ins(%x, %w : {tensor(x_shape)}, {tensor(w_shape)}) outs(%init : {tensor(y)}) -> {tensor(y)}
  {pad_op}
  %window = tensor.empty() : tensor<{pool}x{pool}xf32>
  %e1 = tensor.empty() : {tensor(q)}
  %init1 = linalg.fill ins(%ninf : f32) outs(%e1 : {tensor(q)}) -> {tensor(q)}
  %pool = linalg.pooling_{layout}_max {{strides = dense<{pool_stride}> : tensor<2xi64>, dilations = dense<{dilation}> : tensor<2xi64>}}
      ins({"%conv" if unpadded else "%p"}, %window : {tensor(p)}, tensor<{pool}x{pool}xf32>) outs(%init1 : {tensor(q)}) -> {tensor(q)}
  func.return {returned}
}}
"""
    return text, (oh, ow)


def expected(layout: str, x, w, conv_stride, low, high, pool, pool_stride, dilation, fill):
    """The padded conv result and its max pool, in float64 (NHWC/HWIO math; NCHW/OIHW transposed)."""
    if layout == "nchw":
        x, w = x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0)
    (kh, kw, _, f), (n, h, wd, _) = w.shape, x.shape
    oh, ow = (h - kh) // conv_stride + 1, (wd - kw) // conv_stride + 1
    conv = sum(np.einsum("nhwc,cf->nhwf", x[:, i:i + (oh - 1) * conv_stride + 1:conv_stride,
                                            j:j + (ow - 1) * conv_stride + 1:conv_stride].astype(np.float64), w[i, j])
               for i in range(kh) for j in range(kw))
    padded = np.pad(conv, ((0, 0), (low[0], high[0]), (low[1], high[1]), (0, 0)), constant_values=fill)
    ph, pw = padded.shape[1:3]
    qh, qw = (ph - dilation * (pool - 1) - 1) // pool_stride + 1, (pw - dilation * (pool - 1) - 1) // pool_stride + 1
    pooled = np.full((n, qh, qw, f), -np.inf)
    for i in range(pool):
        for j in range(pool):
            a, b = i * dilation, j * dilation
            pooled = np.maximum(pooled, padded[:, a:a + (qh - 1) * pool_stride + 1:pool_stride,
                                               b:b + (qw - 1) * pool_stride + 1:pool_stride])
    if layout == "nchw":
        return pooled.transpose(0, 3, 1, 2), padded.transpose(0, 3, 1, 2)
    return pooled, padded


CASES = [  # conv 3x3 stride, pad low, pad high, pool, pool stride, pool dilation
    (2, (1, 1), (1, 1), 3, 2, 1),   # ResNet's stem and max pool
    (1, (0, 1), (1, 0), 2, 1, 1),   # uneven pads
    (1, (2, 1), (2, 2), 3, 1, 2),   # a dilated pool, wider pads
    (1, (1, 1), (0, 0), 3, 3, 1),   # a pad on one side, windows not overlapping
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("layout", ["nhwc", "nchw"])
@pytest.mark.parametrize("case", CASES)
def test_conv_computes_the_max_pool_of_its_padded_result(threads, layout, case, blas_workers, monkeypatch):
    from xrelay.runtime.kernels import linalg_conv

    monkeypatch.setattr(linalg_conv, "IM2COL_BLOCK_BYTES", 4_000)  # several row blocks
    monkeypatch.setattr(linalg_conv, "MIN_SPLIT_MACS", 0)
    conv_stride, low, high, pool, pool_stride, dilation = case
    rng = np.random.default_rng(11)
    c, f = 3, 5
    x_shape = (1, 23, 19, c) if layout == "nhwc" else (1, c, 23, 19)
    w_shape = (3, 3, c, f) if layout == "nhwc" else (f, c, 3, 3)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    text, _ = source(layout, x_shape, w_shape, conv_stride, low, high, pool, pool_stride, dilation, NEG_INF, None)
    program = LinalgProgram(Parser(make_context(), text).parse_module())
    convs = [step for step in program.steps if isinstance(step, ConvStep)]
    assert len(convs) == 1 and convs[0].pool is not None and convs[0].pad is None
    assert not any(isinstance(step, PadStep | FusedTail) for step in program.steps)  # the pad and the pool
    blas_workers(threads)
    want, _ = expected(layout, x, w, conv_stride, low, high, pool, pool_stride, dilation, -np.inf)
    for _ in range(2):
        np.testing.assert_allclose(program(x, w)[0], want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape, f", [((1, 18, 18, 8), 8), ((2, 14, 14, 9), 11), ((1, 22, 14, 8), 16),
                                        ((1, 34, 34, 8), 8)])
def test_winograd_conv_computes_the_max_pool_in_row_blocks(threads, x_shape, f, blas_workers, monkeypatch):
    """A constant-weight 3x3 conv followed by ResNet's pool, the pool its result's only reader: the
    convolution keeps its Winograd kernel (in blocks of tile rows), not the blocked im2col form, and
    pools the rows each block completes; F(2x2) and F(4x4), a batch, unequal sides, 1 and 2 threads."""
    from xrelay.runtime.kernels import conv as conv_kernels

    monkeypatch.setattr(conv_kernels, "WINOGRAD_BLOCK_BYTES", 20_000)
    calls = []
    real_winograd = conv_kernels.winograd_conv3x3

    def counted(*args, **kwargs):
        calls.append(args[3].shape)
        return real_winograd(*args, **kwargs)

    monkeypatch.setattr(conv_kernels, "winograd_conv3x3", counted)
    rng = np.random.default_rng(12)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((3, 3, x_shape[3], f)).astype(np.float32)
    text, _ = source("nhwc", x.shape, w.shape, 1, (1, 1), (1, 1), 3, 2, 1, NEG_INF, w)
    program = LinalgProgram(Parser(make_context(), text).parse_module())
    convs = [step for step in program.steps if isinstance(step, ConvStep)]
    assert len(convs) == 1 and convs[0].pool is not None and convs[0].winograd and convs[0].blocked is None
    blas_workers(threads)
    for scale in (1.0, -2.0):  # new data in the same planned buffers
        data = x * np.float32(scale)
        want, _ = expected("nhwc", data, w, 1, (1, 1), (1, 1), 3, 2, 1, -np.inf)
        np.testing.assert_allclose(program(data)[0], want, rtol=1e-4, atol=1e-4)
    assert len(calls) >= 2  # Winograd ran, in more than one block or part per call


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape, f, pool_stride", [((1, 14, 14, 12), 8, 1), ((2, 9, 7, 5), 6, 2)])
def test_pointwise_conv_computes_the_pool_from_its_result(threads, x_shape, f, pool_stride, blas_workers,
                                                          monkeypatch):
    """A 1x1 stride-1 convolution (Inception v2's pool projections) before a padded pool, the pool its
    only reader: it stays one GEMM of the data, the pool computed from its rows, not the blocked form;
    numpy's answer on 1 and 2 threads, a batch, odd sizes."""
    from xrelay.runtime.kernels import linalg_conv

    monkeypatch.setattr(linalg_conv, "MIN_SPLIT_MACS", 0)
    rng = np.random.default_rng(23)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((1, 1, x_shape[3], f)).astype(np.float32)
    text, _ = source("nhwc", x.shape, w.shape, 1, (1, 1), (1, 1), 3, pool_stride, 1, NEG_INF, w)
    program = LinalgProgram(Parser(make_context(), text).parse_module())
    convs = [step for step in program.steps if isinstance(step, ConvStep)]
    assert len(convs) == 1 and convs[0].pool is not None and convs[0].pointwise
    assert convs[0].blocked is None
    blas_workers(threads)
    for scale in (1.0, -2.0):
        data = x * np.float32(scale)
        want, _ = expected("nhwc", data, w, 1, (1, 1), (1, 1), 3, pool_stride, 1, -np.inf)
        np.testing.assert_allclose(program(data)[0], want, rtol=1e-4, atol=1e-4)


def test_winograd_applies_hand_cases():
    """`ConvStep.winograd` (`ConvGeometry.winograd_applies`) on the static shapes: a constant 3x3
    stride-1 weight with enough tiles and channels; not a weight argument, a stride, or too few tiles."""
    rng = np.random.default_rng(22)
    for x_shape, f, stride, constant, want in [((1, 18, 18, 8), 8, 1, True, True),
                                               ((1, 18, 18, 8), 8, 1, False, False),
                                               ((1, 18, 18, 8), 8, 2, True, False),
                                               ((1, 8, 8, 8), 8, 1, True, False),  # 6x6 out: 9 tiles
                                               ((1, 18, 18, 4), 8, 1, True, False)]:  # 4 channels
        w = rng.standard_normal((3, 3, x_shape[3], f)).astype(np.float32)
        text, _ = source("nhwc", x_shape, w.shape, stride, (1, 1), (1, 1), 3, 2, 1, NEG_INF, w if constant else None)
        convs = [step for step in LinalgProgram(Parser(make_context(), text).parse_module()).steps
                 if isinstance(step, ConvStep)]
        assert [step.winograd for step in convs] == [want], (x_shape, f, stride, constant)


@pytest.mark.parametrize("fill, padded_returned", [("0.0", False), (NEG_INF, True)])
def test_pad_not_only_for_a_max_pool_is_made(fill, padded_returned):
    """A pad of 0 (not the max's identity), or a padded tensor also returned, is padded as before."""
    rng = np.random.default_rng(13)
    x = rng.standard_normal((1, 12, 10, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    text, _ = source("nhwc", x.shape, w.shape, 1, (1, 1), (1, 1), 3, 2, 1, fill, None, padded_returned)
    program = LinalgProgram(Parser(make_context(), text).parse_module())
    assert not any(getattr(step, "pool", None) is not None for step in program.steps)
    want = expected("nhwc", x, w, 1, (1, 1), (1, 1), 3, 2, 1, 0.0 if fill == "0.0" else -np.inf)
    got = program(x, w)
    for g, e in zip(got, want[:len(got)]):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)


def blocks_in_order(order: str, h: int, size: int) -> list[tuple[int, int]]:
    """Row blocks [r0, r1) of `size` covering h rows, in program order, reversed, or as two threads'
    parts finishing alternately (the first half's blocks and the second half's, interleaved)."""
    blocks = [(r, min(r + size, h)) for r in range(0, h, size)]
    if order == "reversed":
        return blocks[::-1]
    if order == "two parts":
        half = (len(blocks) + 1) // 2
        first, second = blocks[:half], blocks[half:]
        return [b for pair in zip(second, first) for b in pair] + first[len(second):]
    return blocks


@pytest.mark.parametrize("order", ["in order", "reversed", "two parts"])
@pytest.mark.parametrize("size", [1, 3, 13])
@pytest.mark.parametrize("stride, dilation, low, high", [(2, 1, 1, 1), (1, 2, 2, 0), (3, 1, 0, 2), (1, 1, 0, 0)])
def test_clipped_pooling_rows_as_source_rows_complete(stride, dilation, low, high, order, size):
    """Blocks of source rows reported finished in any order (rows not yet finished hold +inf, which a
    max would pick): each call pools only the output rows whose windows are complete, every output
    row once, and the whole equals numpy's pool over the padded source."""
    rng = np.random.default_rng(14)
    h, w, k = 13, 11, 3
    x = rng.standard_normal((1, h, w, 4)).astype(np.float32)
    padded = np.pad(x, ((0, 0), (low, high), (low, high), (0, 0)), constant_values=-np.inf)
    qh = (h + low + high - dilation * (k - 1) - 1) // stride + 1
    qw = (w + low + high - dilation * (k - 1) - 1) // stride + 1
    want = np.full((1, qh, qw, 4), -np.inf, np.float32)
    for i in range(k):
        for j in range(k):
            want = np.maximum(want, padded[:, i * dilation:i * dilation + (qh - 1) * stride + 1:stride,
                                           j * dilation:j * dilation + (qw - 1) * stride + 1:stride])
    axes = [("loop", 0), ("window", 1, 4, stride, dilation, 0), ("window", 2, 5, stride, dilation, 0), ("loop", 3)]
    pool = ClippedPooling(axes, [1, qh, qw, 4, k, k], [0, 1, 2, 3], (0, low, low, 0), x.shape, np.maximum)
    source = np.full_like(x, np.inf)
    got = np.full_like(want, np.nan)  # a row written twice would be caught by the count below
    written = np.zeros(qh, int)
    real_rows = pool.rows

    def counting_rows(src, target, o0, o1):
        written[o0:o1] += 1
        real_rows(src, target, o0, o1)

    pool.rows = counting_rows
    progress = pool.progress(source, got)
    for r0, r1 in blocks_in_order(order, h, size):
        source[:, r0:r1] = x[:, r0:r1]
        progress.finished(r0, r1)
    assert progress.unclaimed() == []
    assert list(written) == [1] * qh
    np.testing.assert_array_equal(got, want)


def test_clipped_pooling_progress_from_two_threads():
    """Two threads reporting their halves' row blocks at once: every output row computed once, the
    rows where the halves meet by whichever thread completes their windows."""
    import threading

    rng = np.random.default_rng(15)
    h, w, k, stride = 40, 9, 3, 2
    x = rng.standard_normal((1, h, w, 3)).astype(np.float32)
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=-np.inf)
    qh, qw = (h + 2 - k) // stride + 1, (w + 2 - k) // stride + 1
    want = np.full((1, qh, qw, 3), -np.inf, np.float32)
    for i in range(k):
        for j in range(k):
            want = np.maximum(want, padded[:, i:i + (qh - 1) * stride + 1:stride, j:j + (qw - 1) * stride + 1:stride])
    axes = [("loop", 0), ("window", 1, 4, stride, 1, 0), ("window", 2, 5, stride, 1, 0), ("loop", 3)]
    for trial in range(20):
        pool = ClippedPooling(axes, [1, qh, qw, 3, k, k], [0, 1, 2, 3], (0, 1, 1, 0), x.shape, np.maximum)
        got = np.full_like(want, np.nan)
        progress = pool.progress(x, got)

        def part(r0, r1):
            for r in range(r0, r1, 2):
                progress.finished(r, min(r + 2, r1))

        threads = [threading.Thread(target=part, args=(0, 21)), threading.Thread(target=part, args=(21, h))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert progress.unclaimed() == []
        np.testing.assert_array_equal(got, want)


BLOCKED_CASES = [  # x (N, H, W, C), kernel, conv stride, pad low, pad high, pool, pool stride, pool dilation
    ((1, 29, 31, 3), 7, 2, (1, 1), (1, 1), 3, 2, 1),  # ResNet's stem; 13 output columns: phases of 7 and 6
    ((2, 20, 18, 4), 3, 1, (0, 1), (1, 0), 2, 1, 1),  # two images, uneven pads, a stride-1 pool
    ((1, 23, 19, 3), 3, 1, (2, 1), (2, 2), 3, 1, 2),  # a dilated pool, wider pads
    ((1, 25, 22, 2), 3, 1, (0, 0), (0, 0), 2, 3, 1),  # windows skipping rows and columns
    ((1, 17, 26, 3), 5, 3, (1, 2), (2, 1), 3, 2, 1),  # stride 3: output rows 3 input rows apart
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("block_bytes", [1, 3_000, 1 << 19])
@pytest.mark.parametrize("constant_weight", [False, True])
@pytest.mark.parametrize("case", BLOCKED_CASES)
def test_conv_and_its_max_pool_in_blocks_of_rows(threads, block_bytes, constant_weight, case, blas_workers,
                                                 monkeypatch):
    """Channels-last, the pool the result's only reader: the convolution and the pool computed block by
    block of rows (one row, a few, all), in parts on two threads; the whole-result pooling is never
    called, and the answer is numpy's."""
    from xrelay.runtime.kernels import conv_pool
    from xrelay.runtime.kernels import linalg_conv

    monkeypatch.setattr(conv_pool, "BLOCK_BYTES", block_bytes)
    monkeypatch.setattr(linalg_conv, "MIN_SPLIT_MACS", 0)

    def not_called(*args):
        raise AssertionError("the pooling ran from the whole result")

    monkeypatch.setattr(ClippedPooling, "rows", not_called)
    x_shape, k, conv_stride, low, high, pool, pool_stride, dilation = case
    rng = np.random.default_rng(16)
    f = 6
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((k, k, x_shape[3], f)).astype(np.float32)
    text, _ = source("nhwc", x.shape, w.shape, conv_stride, low, high, pool, pool_stride, dilation, NEG_INF,
                     w if constant_weight else None)
    program = LinalgProgram(Parser(make_context(), text).parse_module())
    convs = [step for step in program.steps if isinstance(step, ConvStep)]
    assert len(convs) == 1 and convs[0].blocked is not None
    blas_workers(threads)
    for scale in (1.0, -2.0):  # new data in the same planned buffers: the views kept are still right
        data = x * np.float32(scale)
        want, _ = expected("nhwc", data, w, conv_stride, low, high, pool, pool_stride, dilation, -np.inf)
        got = program(data)[0] if constant_weight else program(data, w)[0]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_column_chunks_hand_values(monkeypatch):
    from xrelay.runtime.kernels import conv_pool

    monkeypatch.setattr(conv_pool, "SMALL_GEMM_MACS", 1_000_000)
    assert conv_pool.column_chunks(112, 147 * 64) == [(0, 56), (56, 112)]  # ResNet's stem: 1.05 M per row
    assert conv_pool.column_chunks(56, 147 * 64) == [(0, 56)]
    assert conv_pool.column_chunks(10, 300_000) == [(0, 2), (2, 5), (5, 7), (7, 10)]  # 3 columns at most
    assert conv_pool.column_chunks(3, 10**7) == [(0, 1), (1, 2), (2, 3)]  # one column at least


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("small_macs", [1, 5 * 3 * 6 * 4, 10**9])
@pytest.mark.parametrize("case", BLOCKED_CASES)
def test_conv_rows_as_gemms_of_column_chunks(threads, small_macs, case, blas_workers, monkeypatch):
    """Each row's GEMM cut into column chunks (`conv_pool.SMALL_GEMM_MACS`: one column each, a few, the
    whole row): the planned GEMMs are the chunks, and the answer is numpy's."""
    from xrelay.runtime.kernels import conv_pool
    from xrelay.runtime.kernels import linalg_conv

    monkeypatch.setattr(conv_pool, "SMALL_GEMM_MACS", small_macs)
    monkeypatch.setattr(conv_pool, "BLOCK_BYTES", 3_000)
    monkeypatch.setattr(linalg_conv, "MIN_SPLIT_MACS", 0)
    x_shape, k, conv_stride, low, high, pool, pool_stride, dilation = case
    rng = np.random.default_rng(19)
    f = 6
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal((k, k, x_shape[3], f)).astype(np.float32)
    text, _ = source("nhwc", x.shape, w.shape, conv_stride, low, high, pool, pool_stride, dilation, NEG_INF, w)
    program = LinalgProgram(Parser(make_context(), text).parse_module())
    blocked = [step for step in program.steps if isinstance(step, ConvStep)][0].blocked
    blas_workers(threads)
    for scale in (1.0, -2.0):
        data = x * np.float32(scale)
        want, _ = expected("nhwc", data, w, conv_stride, low, high, pool, pool_stride, dilation, -np.inf)
        np.testing.assert_allclose(program(data)[0], want, rtol=1e-4, atol=1e-4)
    ow = (x_shape[2] - k) // conv_stride + 1  # (the pads are the pool's)
    per_column = k * k * x_shape[3] * f
    widths = {call.args[0].shape[1] for _, plan in blocked.scratch.plans.values() for call in plan
              if call.func is np.matmul}  # this thread's planned GEMMs (columns each)
    assert widths == {hi - lo for lo, hi in conv_pool.column_chunks(ow, per_column)}
    assert max(widths) * per_column <= max(small_macs, per_column) and (small_macs < 10**9 or widths == {ow})


def test_conv_result_read_elsewhere_is_written():
    """A convolution whose result is also returned keeps writing it: no blocks (the pool still fused)."""
    rng = np.random.default_rng(17)
    x = rng.standard_normal((1, 12, 10, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    text, _ = source("nhwc", x.shape, w.shape, 1, (1, 1), (1, 1), 3, 2, 1, NEG_INF, None, conv_returned=True)
    program = LinalgProgram(Parser(make_context(), text).parse_module())
    convs = [step for step in program.steps if isinstance(step, ConvStep)]
    assert len(convs) == 1 and convs[0].pool is not None and convs[0].blocked is None
    pooled, conv = program(x, w)
    want, padded = expected("nhwc", x, w, 1, (1, 1), (1, 1), 3, 2, 1, -np.inf)
    np.testing.assert_allclose(pooled, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(conv, padded[:, 1:-1, 1:-1], rtol=1e-4, atol=1e-4)


def test_channels_first_conv_declines_blocks(monkeypatch):
    """NCHW data (channels not contiguous): the blocked form declines at run time and the convolution
    and its pool run as before (the whole-result pooling is called), with numpy's answer."""
    calls = []
    real_rows = ClippedPooling.rows

    def counted(self, *args):
        calls.append(args[2:])
        real_rows(self, *args)

    monkeypatch.setattr(ClippedPooling, "rows", counted)
    rng = np.random.default_rng(18)
    x = rng.standard_normal((1, 3, 15, 13)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    text, _ = source("nchw", x.shape, w.shape, 2, (1, 1), (1, 1), 3, 2, 1, NEG_INF, None)
    program = LinalgProgram(Parser(make_context(), text).parse_module())
    convs = [step for step in program.steps if isinstance(step, ConvStep)]
    assert convs[0].blocked is not None
    np.testing.assert_allclose(program(x, w)[0], expected("nchw", x, w, 2, (1, 1), (1, 1), 3, 2, 1, -np.inf)[0],
                               rtol=1e-4, atol=1e-4)
    assert calls


UNPADDED_CASES = [  # x (N, H, W, C), kernel, conv stride, pool, pool stride, pool dilation
    ((1, 27, 25, 3), 3, 2, 3, 2, 1),  # SqueezeNet's stem: 3x3/2, then a 3x3/2 max pool
    ((2, 12, 11, 4), 3, 2, 2, 1, 1),  # two images, a stride-1 pool
    ((1, 17, 19, 3), 1, 2, 3, 2, 2),  # a 1x1 conv, a dilated pool
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("layout", ["nhwc", "nchw"])
@pytest.mark.parametrize("case", UNPADDED_CASES)
def test_conv_computes_the_max_pool_of_its_unpadded_result(threads, layout, case, blas_workers, monkeypatch):
    """A max pool reading a convolution's result with no pad between: the convolution's step computes
    it (block by block with the convolution, the pool being the result's only reader; channels-first,
    from the whole result), no pooling step is left, and the answer is numpy's."""
    from xrelay.runtime.kernels import linalg_conv

    monkeypatch.setattr(linalg_conv, "MIN_SPLIT_MACS", 0)
    x_shape, k, conv_stride, pool, pool_stride, dilation = case
    rng = np.random.default_rng(19)
    f = 5
    if layout == "nhwc":
        w_shape = (k, k, x_shape[3], f)
    else:
        x_shape, w_shape = (x_shape[0], x_shape[3], x_shape[1], x_shape[2]), (f, x_shape[3], k, k)
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    text, _ = source(layout, x_shape, w_shape, conv_stride, (0, 0), (0, 0), pool, pool_stride, dilation, NEG_INF, None,
                     unpadded=True)
    program = LinalgProgram(Parser(make_context(), text).parse_module())
    convs = [step for step in program.steps if isinstance(step, ConvStep)]
    assert len(convs) == 1 and convs[0].pool is not None and convs[0].pad is None and convs[0].tail is None
    assert convs[0].blocked is not None  # (channels-first data: it declines when called, the pool runs after)
    assert not any(isinstance(step, FusedTail) for step in program.steps)  # the pooling's step is gone
    blas_workers(threads)
    for scale in (1.0, -2.0):  # new data in the same planned buffers
        data = x * np.float32(scale)
        want, _ = expected(layout, data, w, conv_stride, (0, 0), (0, 0), pool, pool_stride, dilation, -np.inf)
        np.testing.assert_allclose(program(data, w)[0], want, rtol=1e-4, atol=1e-4)


def test_unpadded_pool_of_a_result_read_elsewhere():
    """The convolution's result also returned: the pool is fused but not blocked, and the result is
    still written."""
    rng = np.random.default_rng(20)
    x = rng.standard_normal((1, 13, 12, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    text, _ = source("nhwc", x.shape, w.shape, 2, (0, 0), (0, 0), 3, 2, 1, NEG_INF, None, conv_returned=True,
                     unpadded=True)
    program = LinalgProgram(Parser(make_context(), text).parse_module())
    convs = [step for step in program.steps if isinstance(step, ConvStep)]
    assert len(convs) == 1 and convs[0].pool is not None and convs[0].blocked is None
    pooled, conv = program(x, w)
    want, padded = expected("nhwc", x, w, 2, (0, 0), (0, 0), 3, 2, 1, -np.inf)
    np.testing.assert_allclose(pooled, want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(conv, padded, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("layout", ["nhwc", "nchw"])
def test_unpadded_pool_after_a_stride_1_conv_stays_a_step(layout):
    """A stride-1 convolution keeps its kernel (Winograd for VGG's 3x3s) and the pooling reading its
    result unpadded stays a step of its own (only strided convolutions take it)."""
    rng = np.random.default_rng(21)
    x_shape, w_shape = ((1, 14, 14, 8), (3, 3, 8, 6)) if layout == "nhwc" else ((1, 8, 14, 14), (6, 8, 3, 3))
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    text, _ = source(layout, x_shape, w_shape, 1, (0, 0), (0, 0), 2, 2, 1, NEG_INF, None, unpadded=True)
    program = LinalgProgram(Parser(make_context(), text).parse_module())
    assert not any(getattr(step, "pool", None) is not None for step in program.steps)
    assert sum(isinstance(step, FusedTail) for step in program.steps) == 1
    want, _ = expected(layout, x, w, 1, (0, 0), (0, 0), 2, 2, 1, -np.inf)
    np.testing.assert_allclose(program(x, w)[0], want, rtol=1e-4, atol=1e-4)
