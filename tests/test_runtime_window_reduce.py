"""Pooling at the linalg level reduced one window axis at a time (runtime/kernels/window_reduce.py), against
the direct-loop numpy pooling of test_runtime_conv_pool, in both layouts, on 1 and 2 threads."""

import numpy as np
from module_builder import formed
import pytest
from op_levels import single_op_module
from test_runtime_conv_pool import NCHW_TO, POOL_CASES, naive_pool
from xdsl.ir.affine import AffineMap

from xrelay.lowering import lower
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.kernels.linalg_structured import Structured
from xrelay.runtime.parallel.threads import set_blas_threads
from xrelay.runtime.kernels.window_reduce import window_reduction

RNG = np.random.default_rng(11)
BIG_CASE = ((1, 8, 66, 66), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), False)  # 2^18+ loop points: split


def pooling_ops(module):
    return [op for op in module.walk() if isinstance(op, Structured) and "pooling" in op.name]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", [*POOL_CASES, BIG_CASE])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_lowered_pooling_matches_naive(kind, layout, case, threads):
    dshape, k, s, d, pad, ceil = case
    x = RNG.standard_normal(dshape).astype(np.float32) - (5.0 if kind == "max" else 0.0)
    attrs = dict(pool_size=k, strides=s, dilation=d, padding=pad, layout=layout, ceil_mode=ceil)
    module = lower(single_op_module(f"nn.{kind}_pool2d", [x.transpose(NCHW_TO[layout])], attrs), to="linalg")
    assert pooling_ops(module)  # the lowering made a linalg pooling op, which the window path runs
    program = LinalgProgram(formed(module))
    assert not program.fill_steps  # the -inf / 0 fill is dropped: the window reduction writes the output
    set_blas_threads(threads)
    try:
        (got,) = program(x.transpose(NCHW_TO[layout]).copy())
    finally:
        set_blas_threads(1)
    expected = naive_pool(x, kind, k, s, d, pad, ceil).transpose(NCHW_TO[layout])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def window_maps(stride, dilation, offset):
    """Loops (n, oh, ow, c, kh, kw) of an NHWC pooling: data, window shape and output maps."""
    from xdsl.ir.affine import AffineExpr

    n, oh, ow, c, kh, kw = (AffineExpr.dimension(i) for i in range(6))
    data = AffineMap(6, 0, (n, oh * stride + kh * dilation + offset, ow * stride + kw * dilation + offset, c))
    return [data, AffineMap(6, 0, (kh, kw)), AffineMap(6, 0, (n, oh, ow, c))]


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("ufunc", [np.maximum, np.add])
def test_window_reduction_with_offset_and_dilation(ufunc, accumulate):
    """out[n, i, j, c] (op)= reduce over kh, kw of x[n, 2i + 2kh + 1, 2j + 2kw + 1, c], by hand loops."""
    x = RNG.standard_normal((2, 11, 12, 3)).astype(np.float32)
    ranges = (2, 3, 3, 3, 2, 3)
    run = window_reduction(window_maps(2, 2, 1), ranges, [4, 5], data=0, out=2, ufunc=ufunc)
    target = RNG.standard_normal((2, 3, 3, 3)).astype(np.float32)
    expected = target.copy() if accumulate else None
    assert run([x, None], target, accumulate)
    for b, i, j, c in np.ndindex(2, 3, 3, 3):
        taps = [x[b, 2 * i + 2 * p + 1, 2 * j + 2 * q + 1, c] for p in range(2) for q in range(3)]
        value = np.max(taps) if ufunc is np.maximum else np.sum(taps, dtype=np.float64)
        if accumulate:
            value = ufunc(expected[b, i, j, c], value)
        np.testing.assert_allclose(target[b, i, j, c], value, rtol=1e-5, atol=1e-6)


def test_window_reduction_declines_other_maps():
    from xdsl.ir.affine import AffineExpr

    n, oh, ow, c, kh, kw = (AffineExpr.dimension(i) for i in range(6))
    ranges = (1, 3, 3, 2, 2, 2)
    maps = window_maps(1, 1, 0)
    # The kernel loop read by two axes, or a window loop missing from the output: not a pooling.
    twice = [AffineMap(6, 0, (n, oh + kh, ow + kh, c)), maps[1], maps[2]]
    assert window_reduction(twice, ranges, [4, 5], 0, 2, np.maximum) is None
    unread = [maps[0], maps[1], AffineMap(6, 0, (n, oh, c))]
    assert window_reduction(unread, ranges, [4, 5], 0, 2, np.maximum) is None
