"""A depthwise convolution's step (runtime/depthwise.DepthwiseStep), merged or a tap contraction's
einsum (stride 2, too many channels to merge): its einsum over ranges of output rows, whole on one
thread, in parts over worker threads, and on both processes of the two-process mode; checked against
numpy written here, and shown to need the second process's parts (with them skipped, the answer is
wrong)."""

from __future__ import annotations

import numpy as np
from module_builder import formed
import pytest

from xrelay.dialects import nn
from xrelay.frontend import GraphBuilder
from xrelay.lowering import lower
from xrelay.runtime.kernels import depthwise, depthwise_taps
from xrelay.runtime.kernels.depthwise import DepthwiseStep
from xrelay.runtime.executor.linalg_exec import LinalgProgram

RNG = np.random.default_rng(21)


@pytest.fixture(autouse=True)
def numpy_kernels(monkeypatch):
    """These are the numpy kernels' tests (the native one's: tests/test_native_conv.py)."""
    monkeypatch.setenv("XRELAY_NATIVE", "0")


def depthwise_case(h=9, w=7, channels=12, stride=1, batch=1):
    """A 3x3 channels-last depthwise convolution, padding 1, with a constant weight."""
    x = RNG.standard_normal((batch, h, w, channels)).astype(np.float32)
    weight = RNG.standard_normal((3, 3, 1, channels)).astype(np.float32)
    b = GraphBuilder(None)
    conv = b.op(nn.Conv2DOp, b.param("x", x.shape, x.dtype), b.op(nn.ConstantOp, weight), groups=channels,
                padding=[1, 1, 1, 1], strides=[stride, stride], data_layout="NHWC", kernel_layout="HWIO")
    return lower(b.finish(*conv.results), to="linalg"), x, weight


def reference(x: np.ndarray, weight: np.ndarray, stride: int = 1) -> np.ndarray:
    padded = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    h, w = ((n + 2 - 3) // stride + 1 for n in x.shape[1:3])
    return sum(padded[:, i:i + stride * (h - 1) + 1:stride, j:j + stride * (w - 1) + 1:stride] * weight[i, j, 0]
               for i in range(3) for j in range(3))


def depthwise_step(program: LinalgProgram) -> DepthwiseStep:
    (step,) = [s for s in program.steps if isinstance(s, DepthwiseStep)]
    return step


@pytest.mark.parametrize("tile_bytes", [depthwise.TILE_BYTES, 1])  # one chunk, chunks of a column
@pytest.mark.parametrize("threads", [1, 2])
def test_the_step_in_row_parts_matches_numpy(threads, tile_bytes, blas_workers, monkeypatch):
    monkeypatch.setattr(depthwise, "MIN_SPLIT_MACS", 0)  # the thread mode splits too
    monkeypatch.setattr(depthwise, "TILE_BYTES", tile_bytes)
    module, x, weight = depthwise_case()
    program = LinalgProgram(formed(module))
    program.threading = "split"  # the thread mode ("auto" would fork at the third call)
    step = depthwise_step(program)
    parts = []
    original = step.merged.rows
    monkeypatch.setattr(step.merged, "rows", lambda *a: parts.append(original(*a)) or parts[-1])
    blas_workers(threads)
    for call in range(3):  # the first call binds the views, the next ones run in row parts
        x = x * (call + 1) + 0.5
        np.testing.assert_allclose(program(x)[0], reference(x, weight), rtol=1e-5, atol=1e-5)
    assert [p is not None for p in parts] == [False, True, True]
    assert parts[-1][1] == 9  # the output's rows


TAP_CASES = [  # (stride, h, w, channels, batch, MAX_CHANNELS): the convolutions that do not merge
    (2, 9, 7, 20, 1, depthwise.MAX_CHANNELS),
    (2, 10, 11, 17, 2, depthwise.MAX_CHANNELS),
    (1, 7, 5, 24, 1, 16),  # as many channels as MAX_CHANNELS or more (ShuffleNet's 7x7x544)
    (2, 8, 6, 5, 1, depthwise.MAX_CHANNELS),  # too few channels for the einsum: tap by tap, whole
]


@pytest.mark.parametrize("stride, h, w, channels, batch, max_channels", TAP_CASES)
@pytest.mark.parametrize("threads", [1, 2])
def test_a_tap_contraction_step_in_row_parts_matches_numpy(stride, h, w, channels, batch, max_channels, threads,
                                                           blas_workers, monkeypatch):
    monkeypatch.setattr(depthwise, "MIN_SPLIT_MACS", 0)
    monkeypatch.setattr(depthwise, "MAX_CHANNELS", max_channels)
    module, x, weight = depthwise_case(h, w, channels, stride, batch)
    program = LinalgProgram(formed(module))
    program.threading = "split"
    step = depthwise_step(program)
    assert not isinstance(step.merged, depthwise.MergedDepthwise)  # depthwise_taps.tap_contraction's einsum
    parts = []
    original = step.merged.rows
    monkeypatch.setattr(step.merged, "rows", lambda *a: parts.append(original(*a)) or parts[-1])
    blas_workers(threads)
    for call in range(3):
        x = x * (call + 1) + 0.5
        np.testing.assert_allclose(program(x)[0], reference(x, weight, stride), rtol=1e-5, atol=1e-5)
    if channels < depthwise_taps.EINSUM_MIN_INNER:
        assert parts == [None, None, None]
        return
    assert [p is not None for p in parts] == [False, True, True]
    # Split along the output's first loop of more than one point: the batch, else the rows.
    assert parts[-1][1] == (batch if batch > 1 else (h - 1) // stride + 1)


def test_an_unplanned_program_runs_the_step_whole():
    module, x, weight = depthwise_case()
    program = LinalgProgram(formed(module), plan=False)
    for _ in range(2):
        np.testing.assert_allclose(program(x)[0], reference(x, weight), rtol=1e-5, atol=1e-5)
    assert depthwise_step(program).merged.rows([None], None) is None



