"""Depthwise convolutions on the numpy kernels (runtime/kernels/linalg_conv.py's tap by tap
`_depthwise_taps`), against numpy references written here: stride 1 and 2, dilated, channels-first, a
channel multiplier, a batch, data that is a channel slice of a wider array, planned programs called
again with new inputs on 1 and 2 threads."""

import numpy as np
from module_builder import formed
import pytest

from xrelay.dialects import nn
from xrelay.frontend import GraphBuilder
from xrelay.lowering import lower
from xrelay.runtime.kernels import linalg_structured
from xrelay.runtime.executor.linalg_exec import LinalgProgram

RNG = np.random.default_rng(12)


@pytest.fixture(autouse=True)
def numpy_kernels(monkeypatch):
    """These are the numpy kernels' tests (the native one's: tests/test_native_conv.py)."""
    monkeypatch.setenv("XRELAY_NATIVE", "0")


def depthwise_module(x_shape, weight: np.ndarray, layout: str, **attrs):
    """`@main(data)`: a grouped conv2d (one group per input channel) whose weight is an nn.constant."""
    b = GraphBuilder(None)
    data = b.param("data", x_shape)
    kernel = b.op(nn.ConstantOp, weight)
    if layout == "NHWC":
        attrs.update(data_layout="NHWC", kernel_layout="HWIO")
    channels = x_shape[3] if layout == "NHWC" else x_shape[1]
    return lower(b.finish(b.op(nn.Conv2DOp, data, kernel, groups=channels, **attrs)), to="linalg")


def reference_nhwc(x, w_hwcm, stride, padding, dilation):
    """x (N, H, W, C), w (KH, KW, C, M): out[n, oh, ow, c * M + m] = sum x[n, oh*s + kh*d, ...] * w[kh, kw, c, m]."""
    top, left, bottom, right = padding
    padded = np.pad(x.astype(np.float64), ((0, 0), (top, bottom), (left, right), (0, 0)))
    kh, kw, c, m = w_hwcm.shape
    oh = (padded.shape[1] - dilation * (kh - 1) - 1) // stride + 1
    ow = (padded.shape[2] - dilation * (kw - 1) - 1) // stride + 1
    out = np.zeros((x.shape[0], oh, ow, c, m))
    for i in range(kh):
        for j in range(kw):
            window = padded[:, i * dilation:i * dilation + stride * (oh - 1) + 1:stride,
                            j * dilation:j * dilation + stride * (ow - 1) + 1:stride]
            out += window[..., None] * w_hwcm[i, j]
    return out.reshape(x.shape[0], oh, ow, c * m)


@pytest.mark.parametrize("size, channels, padding, dilation", [
    ((6, 5), 20, (1, 1, 1, 1), 1),
    ((28, 28), 136, (1, 1, 1, 1), 1),
    ((7, 9), 3, (0, 2, 1, 0), 1),
    ((9, 8), 16, (2, 2, 2, 2), 2),
])
def test_stride_1_nhwc_matches_numpy(size, channels, padding, dilation):
    weight = RNG.standard_normal((3, 3, 1, channels)).astype(np.float32)  # HWIO, one input channel per group
    x_shape = (1, *size, channels)
    program = LinalgProgram(formed(depthwise_module(x_shape, weight, "NHWC", padding=padding, dilation=(dilation, dilation))))
    for _ in range(3):  # planned buffers: later runs see new contents
        x = RNG.standard_normal(x_shape).astype(np.float32)
        (got,) = program(x)
        expected = reference_nhwc(x, weight.transpose(0, 1, 3, 2), 1, padding, dilation)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("stride, multiplier", [(2, 1), (1, 2)])
def test_strided_or_multiplied_depthwise_matches_numpy(stride, multiplier):
    channels = 12
    weight = RNG.standard_normal((3, 3, 1, channels * multiplier)).astype(np.float32)
    x = RNG.standard_normal((1, 11, 10, channels)).astype(np.float32)
    program = LinalgProgram(formed(depthwise_module(x.shape, weight, "NHWC", padding=(1, 1, 1, 1), strides=(stride, stride))))
    (got,) = program(x)
    # HWIO output channel c * M + m reads input channel c.
    expected = reference_nhwc(x, weight.reshape(3, 3, channels, multiplier), stride, (1, 1, 1, 1), 1)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_channels_first_depthwise_matches_numpy():
    channels = 8
    weight = RNG.standard_normal((channels, 1, 3, 3)).astype(np.float32)  # OIHW
    x = RNG.standard_normal((1, channels, 9, 7)).astype(np.float32)
    (got,) = LinalgProgram(formed(depthwise_module(x.shape, weight, "NCHW", padding=(1, 1, 1, 1))))(x)
    expected = reference_nhwc(x.transpose(0, 2, 3, 1), weight.transpose(2, 3, 0, 1), 1, (1, 1, 1, 1), 1)
    np.testing.assert_allclose(got, expected.transpose(0, 3, 1, 2), rtol=1e-5, atol=1e-5)


def test_data_that_is_a_channel_slice_matches_numpy():
    """The structured op called directly with a channel slice of a wider array."""
    channels = 10
    weight = RNG.standard_normal((3, 3, 1, channels)).astype(np.float32)
    module = depthwise_module((1, 8, 8, channels), weight, "NHWC")  # no padding: the op reads the data
    conv = next(op for op in module.walk() if isinstance(op, linalg_structured.Structured)
                and len(op.get_static_loop_ranges()) == 6)
    constant = [False, True]
    run = linalg_structured.compile_structured(conv, [True], constant)
    wide = RNG.standard_normal((1, 8, 8, 2 * channels)).astype(np.float32)
    data = wide[..., :channels]
    out = np.empty((1, 6, 6, channels), np.float32)
    run([data, weight, out])
    expected = reference_nhwc(wide[..., :channels], weight.transpose(0, 1, 3, 2), 1, (0, 0, 0, 0), 1)
    np.testing.assert_allclose(out.reshape(expected.shape), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("stride, h, w, channels, batch", [
    (1, 9, 7, 12, 1), (2, 9, 7, 20, 1), (2, 10, 11, 17, 2), (1, 7, 5, 24, 1), (2, 8, 6, 5, 1)])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_planned_program_called_again_matches_numpy(stride, h, w, channels, batch, threads, blas_workers):
    x_shape = (batch, h, w, channels)
    weight = RNG.standard_normal((3, 3, 1, channels)).astype(np.float32)
    program = LinalgProgram(formed(depthwise_module(x_shape, weight, "NHWC", padding=(1, 1, 1, 1),
                                                    strides=(stride, stride))))
    blas_workers(threads)
    for _ in range(3):
        x = RNG.standard_normal(x_shape).astype(np.float32)
        expected = reference_nhwc(x, weight.transpose(0, 1, 3, 2), stride, (1, 1, 1, 1), 1)
        np.testing.assert_allclose(program(x)[0], expected, rtol=1e-5, atol=1e-5)
