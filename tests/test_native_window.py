"""The compiled window kernel (runtime/native/window_kernels.py, `xrelay_window` in conv_kernels.c): pooling
windows and elementwise chains equal to numpy written here, through their strides, on 1 and 2 threads; and
the executor running a built network's pools and fused tails through it, with the same answers as
`XRELAY_NATIVE=0`."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import xrelay
from xrelay.runtime.executor.plan import FusedTail
from xrelay.runtime.native import conv_kernels
from xrelay.runtime.native.build import native_enabled
from xrelay.runtime.native.conv_kernels import EpilogueOp
from xrelay.runtime.native.window_kernels import as_four_axes, chain_views, native_copy, native_window
from xrelay.runtime.parallel.threads import set_blas_threads

pytestmark = pytest.mark.skipif(not native_enabled() or shutil.which(os.environ.get("XRELAY_CC") or "gcc") is None
                                or conv_kernels._sgemm_address() is None,
                                reason="XRELAY_NATIVE=0, no C compiler or no ILP64 OpenBLAS")
RNG = np.random.default_rng(23)


def windows_reference(x, k, s, d, reduce):
    """reduce over the (k, k) windows of NHWC x at stride s and dilation d, one tap at a time."""
    n, h, w, c = x.shape
    oh, ow = (h - (k - 1) * d - 1) // s + 1, (w - (k - 1) * d - 1) // s + 1
    taps = [x[:, i * d:i * d + (oh - 1) * s + 1:s, j * d:j * d + (ow - 1) * s + 1:s] for i in range(k) for j in range(k)]
    return reduce.reduce(np.stack(taps), axis=0)


@pytest.mark.parametrize("reduce", [np.maximum, np.minimum, np.add])
@pytest.mark.parametrize("k,s,d", [(3, 2, 1), (2, 2, 1), (3, 1, 2), (1, 1, 1)])
@pytest.mark.parametrize("threads", [1, 2])
def test_pooling_windows_equal_numpy(reduce, k, s, d, threads):
    x = RNG.standard_normal((2, 11, 12, 37)).astype(np.float32)
    expected = windows_reference(x.astype(np.float64), k, s, d, reduce)
    out = np.full(expected.shape, np.nan, np.float32)
    call = native_window(x, out, (k, k, s, s, d, d), reduce)
    call(threads)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_channels_first_views_accumulate_an_epilogue_and_a_copy():
    """NCHW memory viewed as (n, h, w, c); the output's value folded in (`accumulate`); a bias and a
    ReLU applied; the values also stored into a second view (a pad's interior)."""
    x = RNG.standard_normal((1, 600, 9, 9)).astype(np.float32)  # channels beyond one vector of the kernel
    out = RNG.standard_normal((1, 600, 4, 4)).astype(np.float32)
    start = out.copy()
    bias = RNG.standard_normal(600).astype(np.float32)
    padded = np.zeros((1, 600, 6, 6), np.float32)
    nhwc = lambda a: a.transpose(0, 2, 3, 1)  # noqa: E731
    ops = [EpilogueOp(np.add, np.broadcast_to(bias, (1, 4, 4, 600))), EpilogueOp(np.maximum, 0.0)]
    call = native_window(nhwc(x), nhwc(out), (3, 3, 2, 2, 1, 1), np.maximum, accumulate=True, ops=ops,
                         copy=nhwc(padded)[:, 1:5, 1:5])
    call(2)
    pooled = np.maximum(windows_reference(nhwc(x), 3, 2, 1, np.maximum), nhwc(start))
    expected = np.maximum(pooled + bias, 0)
    np.testing.assert_allclose(nhwc(out), expected, rtol=1e-6)
    np.testing.assert_allclose(nhwc(padded)[:, 1:5, 1:5], expected, rtol=1e-6)
    assert not padded[:, :, 0].any() and not padded[:, :, 5].any()


def test_nan_propagates_through_max_windows():
    x = np.zeros((1, 4, 4, 2), np.float32)
    x[0, 1, 1, 0] = np.nan
    out = np.empty((1, 2, 2, 2), np.float32)
    native_window(x, out, (2, 2, 2, 2, 1, 1), np.maximum)(1)
    assert np.isnan(out[0, 0, 0, 0]) and not np.isnan(out).sum() - 1


def test_a_window_leaving_its_data_or_another_dtype_is_refused():
    x = np.zeros((1, 5, 5, 3), np.float32)
    assert native_window(x, np.empty((1, 3, 3, 3), np.float32), (3, 3, 2, 2, 1, 1), np.maximum) is None
    assert native_window(x.astype(np.float64), np.empty((1, 2, 2, 3)), (3, 3, 2, 2, 1, 1), np.maximum) is None
    assert native_window(x, np.empty((1, 2, 2, 3), np.float32), (3, 3, 2, 2, 1, 1), np.fmax) is None


def test_a_ufunc_chain_runs_as_one_call():
    """value = x; value = value + bias; value = max(value, 0); value = 2 - value (a reversed subtract);
    value = value * residual; / 4; + 10; 1 / value (a reversed divide): in place over `out`, 5-D
    loop-space views merged into four axes."""
    x = RNG.standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
    bias = RNG.standard_normal((1, 1, 1, 1, 6)).astype(np.float32)
    residual = RNG.standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
    out = np.empty_like(x)
    calls = [(np.add, [x, bias], out), (np.maximum, [out, np.float32(0)], out), (np.subtract, [2.0, out], out),
             (np.multiply, [residual, out], out), (np.divide, [out, 4.0], out), (np.add, [out, 10.0], out),
             (np.divide, [1.0, out], out)]
    value, target, ops = chain_views(calls)
    assert value.ndim == target.ndim == 4
    native_window(value, target, ops=ops)(2)
    np.testing.assert_allclose(out, 1 / ((2 - np.maximum(x + bias, 0)) * residual / 4 + 10), rtol=1e-6)


def test_chains_the_kernel_cannot_run_are_refused():
    x = np.ones((2, 3), np.float32)
    out = np.empty_like(x)
    assert chain_views([(np.arctan2, [x, x], out)]) is None  # not in the kernel
    assert chain_views([(np.add, [x, x], out), (np.add, [x, x], out)]) is None  # the second ignores the first
    first, second = np.empty_like(x), np.empty_like(x)
    reads_two_earlier = [(np.add, [x, 1.0], first), (np.exp, [first], second), (np.multiply, [second, x], out),
                         (np.add, [out, first], out)]
    assert chain_views(reads_two_earlier) is None  # the kernel keeps one earlier value


def test_exp_equals_numpy_over_the_float_range():
    """The kernel's vectorised exp against np.exp: within 2 ulp over [-110, 95] (subnormal results,
    below 1.2e-38, within 1e-44), inf, 0 and NaN where numpy gives them."""
    x = np.concatenate([np.linspace(-110, 95, 200_003, dtype=np.float32), RNG.standard_normal(4096).astype(np.float32),
                        np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 88.72, 88.73, -87.3, -103.9, -104.0, 1e-30])])
    out = np.empty_like(x)
    native_window(x.reshape(1, 1, 1, -1), out.reshape(1, 1, 1, -1), ops=[EpilogueOp(np.exp, None)])(2)
    with np.errstate(over="ignore"):
        expected = np.exp(x)
    normal = expected >= np.finfo(np.float32).tiny
    ulps = np.abs(out[normal].view(np.int32).astype(np.int64) - expected[normal].view(np.int32))
    assert ulps.max() <= 2
    np.testing.assert_allclose(out[~normal & np.isfinite(x)], expected[~normal & np.isfinite(x)], rtol=0, atol=1e-44)
    assert np.array_equal(np.isnan(out), np.isnan(x)) and out[x == np.inf][0] == np.inf and out[x == -np.inf][0] == 0


def test_silu_chain_reads_its_first_value_again():
    """x * sigmoid(x) as the executor's calls: negate, exp, + 1, 1 / value into buffers of their own,
    then times x (the chain's first value, kept by the kernel), stored in place over the last buffer."""
    x = (RNG.standard_normal((1, 6, 7, 40)) * 8).astype(np.float32)
    t, out = np.empty_like(x), np.empty_like(x)
    calls = [(np.negative, [x], t), (np.exp, [t], t), (np.add, [1.0, t], t), (np.divide, [1.0, t], out),
             (np.multiply, [x, out], out)]
    value, target, ops = chain_views(calls)
    assert [op.save for op in ops] == [True] + [False] * 5 and ops[-1].operand == "saved"
    native_window(value, target, ops=ops)(2)
    np.testing.assert_allclose(out, x / (1 + np.exp(-x.astype(np.float64))), rtol=3e-6, atol=1e-30)


def test_gelu_chain_with_erf_in_the_kernel():
    """The exact GELU `x * (1 + erf(x / sqrt 2)) / 2` as the executor's calls: divide, erf, + 1, times
    x (saved), times 1/2; erf is the kernel's own, within one float32 rounding of math.erf."""
    import math

    from xrelay.runtime.math_functions import erf

    x = (RNG.standard_normal((1, 5, 6, 48)) * 3).astype(np.float32)
    x.reshape(-1)[:4] = [0.0, -0.0, 30.0, -30.0]
    t, out = np.empty_like(x), np.empty_like(x)
    calls = [(np.divide, [x, np.float32(math.sqrt(2))], t), (erf, [t], t), (np.add, [t, 1.0], t),
             (np.multiply, [x, t], out), (np.multiply, [out, 0.5], out)]
    value, target, ops = chain_views(calls)
    assert erf in [op.ufunc for op in ops] and any(op.operand == "saved" for op in ops)
    native_window(value, target, ops=ops)(2)
    scaled = (x / np.float32(math.sqrt(2))).astype(np.float32)
    exact_erf = np.array([math.erf(float(v)) for v in scaled.ravel()], np.float32).reshape(x.shape)
    expected = (x * (exact_erf + np.float32(1)) * np.float32(0.5)).astype(np.float32)
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=2e-7)  # 1 + erf cancels for x << 0


def test_four_axes_merge_what_strides_allow():
    a = np.arange(2 * 3 * 4 * 5 * 6, dtype=np.float32).reshape(2, 3, 4, 5, 6)
    (view,) = as_four_axes([a])  # contiguous: merged until the vector axis is long
    assert view.ndim == 4 and view.shape[-1] >= 256 and np.shares_memory(view, a)
    np.testing.assert_array_equal(view.ravel(), a.ravel())
    b = np.zeros((1, 1, 1, 1, 6), np.float32)  # a broadcast operand keeps its axis apart
    value, operand = as_four_axes([a, np.broadcast_to(b, a.shape)])
    assert value.shape[-1] == 6 and operand.strides[:3] == (0, 0, 0)
    strided = np.zeros((4, 4, 4, 4, 6), np.float32)[::2, ::2, ::2, ::2]  # five axes that do not merge
    assert as_four_axes([strided]) is None


MODEL = """
func.func @main(%x: tensor<1x16x20x20xf32>, %y: tensor<1x16x10x10xf32>) -> tensor<1x16x5x5xf32> {
  %r = nn.relu(%x) : (tensor<1x16x20x20xf32>) -> tensor<1x16x20x20xf32>
  %p = nn.max_pool2d(%r) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x16x20x20xf32>) -> tensor<1x16x10x10xf32>
  %s = nn.add(%p, %y) : (tensor<1x16x10x10xf32>, tensor<1x16x10x10xf32>) -> tensor<1x16x10x10xf32>
  %a = nn.avg_pool2d(%s) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x16x10x10xf32>) -> tensor<1x16x5x5xf32>
  func.return %a : tensor<1x16x5x5xf32>
}
"""


def model_reference(x, y):
    r = np.pad(np.maximum(x, 0), ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    nhwc = r.transpose(0, 2, 3, 1)
    pooled = windows_reference(nhwc, 3, 2, 1, np.maximum)[:, :10, :10].transpose(0, 3, 1, 2) + y
    return pooled.reshape(1, 16, 5, 2, 5, 2).mean(axis=(3, 5))


@pytest.mark.parametrize("threads", [1, 2])
def test_a_built_network_runs_its_pools_and_tails_compiled(threads, monkeypatch):
    from xdsl.parser import Parser

    from xrelay.dialects import make_context

    executable = xrelay.build(Parser(make_context(), MODEL).parse_module())
    steps = executable.program.steps
    set_blas_threads(threads)
    try:
        for _ in range(3):  # runs with new arguments, then the same ones changed in place
            x = RNG.standard_normal((1, 16, 20, 20)).astype(np.float32)
            y = RNG.standard_normal((1, 16, 10, 10)).astype(np.float32)
            np.testing.assert_allclose(executable(x, y), model_reference(x, y), rtol=1e-5, atol=1e-5)
        compiled = [step for step in steps if isinstance(step, FusedTail) and step.kept and step.kept[1] is not None]
        assert len(compiled) >= 2  # at least the max pool and one elementwise chain
        monkeypatch.setenv("XRELAY_NATIVE", "0")
        numpy_run = xrelay.build(Parser(make_context(), MODEL).parse_module())
        np.testing.assert_allclose(numpy_run(x, y), executable(x, y), rtol=1e-6, atol=1e-6)
        assert not any(step.kept and step.kept[1] is not None for step in numpy_run.program.steps if isinstance(step, FusedTail))
    finally:
        set_blas_threads(1)


PADDED = """
func.func @main(%x: tensor<1x9x9x8xf32>) -> tensor<1x5x5x8xf32> {
  %p = nn.max_pool2d(%x) {layout = "NHWC", pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x9x9x8xf32>) -> tensor<1x5x5x8xf32>
  func.return %p : tensor<1x5x5x8xf32>
}
"""


def test_a_pad_copies_its_source_compiled():
    from xdsl.parser import Parser

    from xrelay.dialects import make_context
    from xrelay.runtime.executor.pad_step import PadStep

    executable = xrelay.build(Parser(make_context(), PADDED).parse_module())
    for _ in range(2):
        x = RNG.standard_normal((1, 9, 9, 8)).astype(np.float32)
        padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=-np.inf)
        np.testing.assert_array_equal(executable(x), windows_reference(padded, 3, 2, 1, np.maximum))
    (pad,) = [step for step in executable.program.steps if isinstance(step, PadStep)]
    assert pad.native is not None and pad.native[1] is not None  # (channels dense in both: compiled)


def test_a_transposing_pad_copies_compiled():
    """A pad whose source is read across its dense axis (here NCHW data padded as NHWC) copies with the
    compiled gather (`native_copy`)."""
    from xdsl.parser import Parser

    from xrelay.dialects import make_context
    from xrelay.runtime.executor.pad_step import PadStep

    text = PADDED.replace("1x9x9x8", "1x8x9x9").replace("1x5x5x8", "1x8x5x5").replace('layout = "NHWC", ', "")
    executable = xrelay.build(Parser(make_context(), text).parse_module())
    for _ in range(2):
        x = RNG.standard_normal((1, 8, 9, 9)).astype(np.float32)
        padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf).transpose(0, 2, 3, 1)
        expected = windows_reference(padded, 3, 2, 1, np.maximum).transpose(0, 3, 1, 2)
        np.testing.assert_array_equal(executable(x), expected)
    (pad,) = [step for step in executable.program.steps if isinstance(step, PadStep)]
    assert pad.native is not None and pad.native[1] is not None


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("permutation, shape", [((0, 1, 2, 4, 3), (1, 3, 5, 4, 7)), ((0, 2, 3, 1), (1, 6, 7, 3)),
                                                ((0, 1, 3, 2), (3, 2, 9, 5))])
def test_native_copy_gathers_any_permutation(permutation, shape, threads):
    """A channel shuffle, NCHW to NHWC and a transpose of the two inner axes, each into the interior of
    a larger buffer, equal numpy's copy; the border is untouched."""
    source = RNG.standard_normal(shape).astype(np.float32).transpose(permutation)
    buffer = np.full(tuple(n + 2 for n in source.shape), 7.0, np.float32)
    inside = buffer[tuple(slice(1, 1 + n) for n in source.shape)]
    views = as_four_axes([inside, source])
    call = native_copy(*views)
    if call is None:
        pytest.skip("no native kernels here")
    call(threads)
    np.testing.assert_array_equal(inside, source)
    inside[...] = 7.0
    assert (buffer == 7.0).all()
