"""The native Winograd convolution (runtime/native/conv_kernels.c): equal to a direct convolution written
here in numpy, with every epilogue form it takes, and the executor using it for built kernels while
`XRELAY_NATIVE=0` gives the same answers on numpy."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

from xrelay.runtime.kernels.conv import winograd_weights
from xrelay.runtime.native import conv_kernels
from xrelay.runtime.native.build import native_enabled
from xrelay.runtime.native.conv_kernels import EpilogueOp, NativeEpilogue, native_winograd

pytestmark = pytest.mark.skipif(not native_enabled() or shutil.which(os.environ.get("XRELAY_CC") or "gcc") is None
                                or conv_kernels._sgemm_address() is None,
                                reason="XRELAY_NATIVE=0, no C compiler or no ILP64 OpenBLAS")


def test_the_kernels_build_where_there_is_a_compiler():
    """Not a silent fallback: with gcc and numpy's OpenBLAS here, conv_kernels.c compiles and loads."""
    assert conv_kernels.available()
RNG = np.random.default_rng(7)


def direct_conv(x_nhwc: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """A 3x3 stride-1 convolution of already padded NHWC data with an (F, C, 3, 3) weight, as NHWC."""
    n, h, w, _ = x_nhwc.shape
    out = np.zeros((n, h - 2, w - 2, weight.shape[0]), np.float64)
    for i in range(3):
        for j in range(3):
            out += np.einsum("nhwc,fc->nhwf", x_nhwc[:, i:i + h - 2, j:j + w - 2], weight[:, :, i, j])
    return out


def nchw(array: np.ndarray) -> np.ndarray:
    return array.transpose(0, 3, 1, 2)


@pytest.mark.parametrize("m", [2, 4])
@pytest.mark.parametrize("n,size,c,f", [(1, 6, 3, 5), (2, 9, 70, 33), (1, 7, 8, 8), (1, 16, 64, 96)])
@pytest.mark.parametrize("threads", [1, 2])
def test_equals_direct_convolution(m, n, size, c, f, threads):
    x = RNG.standard_normal((n, size + 2, size + 2, c)).astype(np.float32)
    weight = RNG.standard_normal((f, c, 3, 3)).astype(np.float32)
    out = np.full((n, size, size, f), np.nan, np.float32)
    assert native_winograd(nchw(x), winograd_weights(weight, m), m, nchw(out), False, threads)
    expected = direct_conv(x.astype(np.float64), weight.astype(np.float64))
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


def test_channels_first_input_and_output_views():
    """Data and output in NCHW memory (channels not innermost) are read and written through their strides."""
    x = RNG.standard_normal((1, 5, 10, 10)).astype(np.float32)
    weight = RNG.standard_normal((4, 5, 3, 3)).astype(np.float32)
    out = np.zeros((1, 4, 8, 8), np.float32)
    assert native_winograd(x, winograd_weights(weight, 2), 2, out, False, 2)
    expected = direct_conv(x.transpose(0, 2, 3, 1).astype(np.float64), weight.astype(np.float64))
    np.testing.assert_allclose(out.transpose(0, 2, 3, 1), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("size,m,by_filters", [(12, 4, False), (4, 2, True)])
def test_epilogue_accumulate_and_copy(size, m, by_filters):
    """acc + conv, then + bias (per channel), + residual, ReLU, min with 6, 0.5 - value, stored into the
    output and into the interior of a zero-bordered buffer whose border stays untouched; on two
    threads cut by rows of tiles, or by filters (few tiles, more filters)."""
    from xrelay.runtime.native.conv_kernels import winograd_splits_filters

    n, c, f = 1, 16, 24
    assert winograd_splits_filters(n, size, size, f, m, 2) == by_filters
    x = RNG.standard_normal((n, size + 2, size + 2, c)).astype(np.float32)
    weight = RNG.standard_normal((f, c, 3, 3)).astype(np.float32)
    init = RNG.standard_normal((n, size, size, f)).astype(np.float32)
    bias = RNG.standard_normal(f).astype(np.float32)
    residual = RNG.standard_normal((n, size, size, f)).astype(np.float32)
    out = init.copy()
    padded = np.full((n, size + 2, size + 2, f), -7.0, np.float32)
    interior = padded[:, 1:-1, 1:-1]
    ops = [EpilogueOp(np.add, np.broadcast_to(bias, out.shape)), EpilogueOp(np.add, residual),
           EpilogueOp(np.maximum, 0.0), EpilogueOp(np.minimum, 6.0), EpilogueOp(np.subtract, 0.5, reversed=True)]
    epilogue = NativeEpilogue(None, ops, copy=nchw(interior))
    assert native_winograd(nchw(x), winograd_weights(weight, m), m, nchw(out), True, 2, epilogue)
    conv = direct_conv(x.astype(np.float64), weight.astype(np.float64))
    expected = 0.5 - np.minimum(np.maximum(conv + init + bias + residual, 0), 6)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(interior, out)
    border = padded.copy()
    border[:, 1:-1, 1:-1] = -7.0
    assert (border == -7.0).all()


@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum])
def test_maximum_and_minimum_propagate_nan_like_arith(ufunc):
    x = np.zeros((1, 6, 6, 2), np.float32)
    x[0, 3, 3, 0] = np.nan
    weight = np.ones((2, 2, 3, 3), np.float32)
    out = np.zeros((1, 4, 4, 2), np.float32)
    epilogue = NativeEpilogue(None, [EpilogueOp(ufunc, 0.0)])
    assert native_winograd(nchw(x), winograd_weights(weight, 2), 2, nchw(out), False, 1, epilogue)
    assert np.isnan(out[0, 1:4, 1:4]).all() and not np.isnan(out[0, 0]).any()


def test_relu_and_clip_of_both_signs():
    """maximumf/minimumf of the convolution's values (either sign) against per-channel bounds."""
    x = RNG.standard_normal((1, 10, 10, 3)).astype(np.float32)
    weight = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    bound = np.broadcast_to(np.array([0.0, -0.0, 0.25, -0.5], np.float32), (1, 8, 8, 4))
    for ufunc in (np.maximum, np.minimum):
        out = np.empty((1, 8, 8, 4), np.float32)
        epilogue = NativeEpilogue(None, [EpilogueOp(ufunc, bound)])
        assert native_winograd(nchw(x), winograd_weights(weight, 2), 2, nchw(out), False, 1, epilogue)
        conv = direct_conv(x.astype(np.float64), weight.astype(np.float64)).astype(np.float32)
        np.testing.assert_allclose(out, ufunc(conv, bound), rtol=1e-4, atol=1e-4)


def test_unsupported_forms_are_refused(monkeypatch):
    """float64 data, an epilogue ufunc the kernel lacks, and XRELAY_NATIVE=0: False, nothing written."""
    x = np.zeros((1, 2, 6, 6), np.float32)
    u = winograd_weights(np.ones((3, 2, 3, 3), np.float32), 2)
    out = np.full((1, 3, 4, 4), 5.0, np.float32)
    assert not native_winograd(x.astype(np.float64), u.astype(np.float64), 2, out.astype(np.float64), False, 1)
    assert not native_winograd(x, u, 2, out, False, 1, NativeEpilogue(None, [EpilogueOp(np.arctan2, 1.0)]))
    monkeypatch.setenv("XRELAY_NATIVE", "0")
    assert not native_winograd(x, u, 2, out, False, 1)
    assert (out == 5.0).all()


def test_built_resnet_block_same_answer_without_native(monkeypatch):
    """A built ResNet basic block (Winograd convolutions with bias, ReLU, residual and the next pad as
    their epilogue) gives numpy's direct answer with the native kernel and with XRELAY_NATIVE=0; and
    on later calls, as the bound body's kept compiled calls, with the argument changed in place."""
    import xrelay
    from xrelay import transform
    from xrelay.frontend import resnet
    from xrelay.runtime.reference.interpreter import run as run_nn

    from xrelay.runtime.kernels import linalg_conv

    module, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 64, 64))
    data = RNG.standard_normal((1, 3, 64, 64)).astype(np.float32)
    expected = run_nn(module, {"data": data}, params)[0]
    ran = []
    monkeypatch.setattr(linalg_conv, "native_winograd", lambda *args: ran.append(native_winograd(*args)) or ran[-1])
    for native in ("1", "0"):
        monkeypatch.setenv("XRELAY_NATIVE", native)
        with transform.PassContext(opt_level=3):
            executable = xrelay.build(module, params)
        np.testing.assert_allclose(executable(data)[0], expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())
        assert any(ran) == (native == "1"), ran
        ran.clear()
    monkeypatch.setenv("XRELAY_NATIVE", "1")
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(module, params)
    for run in range(3):  # the bound body (kept compiled calls) from the third run: the argument changed in place
        data[...] = RNG.standard_normal(data.shape)
        expected = run_nn(module, {"data": data}, params)[0]
        np.testing.assert_allclose(executable(data)[0], expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())
    bodies = executable.program.runs.bodies.values()
    assert any(getattr(step, "__name__", "") == "convolution" for body in bodies for step in body)


def direct_conv_general(x_nhwc, weight, strides, dilation):
    """Any window of NHWC data already padded, an (F, C, KH, KW) weight, in float64, as NHWC."""
    n, h, w, _ = x_nhwc.shape
    f, _, kh, kw = weight.shape
    oh = (h - dilation[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (w - dilation[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((n, oh, ow, f))
    for i in range(kh):
        for j in range(kw):
            window = x_nhwc[:, i * dilation[0]:i * dilation[0] + strides[0] * (oh - 1) + 1:strides[0],
                            j * dilation[1]:j * dilation[1] + strides[1] * (ow - 1) + 1:strides[1]]
            out += np.einsum("nhwc,fc->nhwf", window, weight[:, :, i, j])
    return out


@pytest.mark.parametrize("n,size,c,f,kernel,strides,dilation", [
    (1, 15, 3, 8, (7, 7), (2, 2), (1, 1)),  # a stem: whole kernel rows copied at once
    (2, 9, 5, 7, (3, 3), (1, 1), (2, 2)),  # dilated: tap by tap
    (1, 8, 16, 4, (1, 1), (1, 1), (1, 1)),  # 1x1 over dense images: the data's rows are the patches
    (2, 7, 5, 6, (1, 1), (1, 1), (1, 1)),  # ... across two images
    (2, 7, 5, 6, (1, 1), (2, 2), (1, 1)),  # 1x1 at stride 2: gathered
    (1, 5, 24, 40, (3, 3), (1, 1), (1, 1)),  # 9 pixels, 40 filters: by filters on 2 threads
])
@pytest.mark.parametrize("threads", [1, 2])
def test_im2col_equals_direct_convolution(n, size, c, f, kernel, strides, dilation, threads):
    from xrelay.runtime.native.conv_kernels import native_im2col

    x = RNG.standard_normal((n, size, size, c)).astype(np.float32)
    weight = RNG.standard_normal((f, c, *kernel)).astype(np.float32)
    expected = direct_conv_general(x.astype(np.float64), weight.astype(np.float64), strides, dilation)
    bias = RNG.standard_normal(f).astype(np.float32)
    out = np.full(expected.shape, np.nan, np.float32)
    wmat = np.ascontiguousarray(weight.transpose(2, 3, 1, 0).reshape(-1, f))
    epilogue = NativeEpilogue(None, [EpilogueOp(np.add, np.broadcast_to(bias, out.shape)), EpilogueOp(np.maximum, 0.0)])
    by_filters = n * expected.shape[1] * expected.shape[2] < f
    assert native_im2col(nchw(x), wmat, kernel, strides, dilation, nchw(out), False, threads, by_filters, epilogue)
    np.testing.assert_allclose(out, np.maximum(expected + bias, 0), rtol=1e-4, atol=1e-4 * np.abs(expected).max())


@pytest.mark.parametrize("n,size,c,f,kernel,strides,dilation", [
    (1, 17, 3, 24, (3, 3), (2, 2), (1, 1)),  # a stem: 24 filters (padded to 32), rows of 8 pixels (6 + 2)
    (2, 9, 2, 40, (3, 3), (1, 1), (2, 2)),  # dilated, two images, 40 filters: a second block of 32
    (1, 11, 3, 5, (5, 5), (1, 2), (1, 1)),  # 5 filters, unequal strides
    (1, 6, 4, 32, (1, 1), (2, 2), (1, 1)),  # 1x1 at stride 2
])
@pytest.mark.parametrize("threads", [1, 2])
def test_direct_equals_convolution_with_epilogue_accumulate_and_copy(n, size, c, f, kernel, strides, dilation,
                                                                      threads):
    from xrelay.runtime.native.conv_kernels import native_im2col

    x = RNG.standard_normal((n, size, size, c)).astype(np.float32)
    weight = RNG.standard_normal((f, c, *kernel)).astype(np.float32)
    expected = direct_conv_general(x.astype(np.float64), weight.astype(np.float64), strides, dilation)
    wmat = np.ascontiguousarray(weight.transpose(2, 3, 1, 0).reshape(-1, f))
    bias = RNG.standard_normal(f).astype(np.float32)
    out, copy = np.full(expected.shape, np.nan, np.float32), np.full(expected.shape, np.nan, np.float32)
    epilogue = NativeEpilogue(None, [EpilogueOp(np.add, np.broadcast_to(bias, out.shape)), EpilogueOp(np.maximum, 0.0)],
                              copy=nchw(copy))
    assert native_im2col(nchw(x), wmat, kernel, strides, dilation, nchw(out), False, threads, False, epilogue,
                         direct=True)
    tolerance = dict(rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    np.testing.assert_allclose(out, np.maximum(expected + bias, 0), **tolerance)
    np.testing.assert_array_equal(copy, out)
    before = RNG.standard_normal(expected.shape).astype(np.float32)  # accumulate: the output's own values added
    summed = before.copy()
    assert native_im2col(nchw(x), wmat, kernel, strides, dilation, nchw(summed), True, threads, False, direct=True)
    np.testing.assert_allclose(summed, expected + before, **tolerance)


@pytest.mark.parametrize("threads", [1, 2])
def test_im2col_products_written_in_place_through_any_output_view(threads):
    """The product goes straight into the output where its filters are dense: whole images (a scalar
    epilogue: one vector), image rows of a pad's interior (a bias per filter), and not at all into a
    channels-first output or when accumulating; each equals the direct convolution."""
    from xrelay.runtime.native.conv_kernels import native_im2col

    x = RNG.standard_normal((2, 9, 7, 6)).astype(np.float32)
    weight = RNG.standard_normal((10, 6, 1, 1)).astype(np.float32)
    wmat = np.ascontiguousarray(weight.transpose(2, 3, 1, 0).reshape(-1, 10))
    conv = direct_conv_general(x.astype(np.float64), weight.astype(np.float64), (1, 1), (1, 1))
    bias = RNG.standard_normal(10).astype(np.float32)
    relu = NativeEpilogue(None, [EpilogueOp(np.maximum, 0.0), EpilogueOp(np.multiply, 2.0)])
    dense = np.full(conv.shape, np.nan, np.float32)
    assert native_im2col(nchw(x), wmat, (1, 1), (1, 1), (1, 1), nchw(dense), False, threads, False, relu)
    np.testing.assert_allclose(dense, 2 * np.maximum(conv, 0), rtol=1e-4, atol=1e-4)
    padded = np.zeros((2, 11, 9, 10), np.float32)
    interior = padded[:, 1:-1, 1:-1]
    biased = NativeEpilogue(None, [EpilogueOp(np.add, np.broadcast_to(bias, interior.shape))])
    assert native_im2col(nchw(x), wmat, (1, 1), (1, 1), (1, 1), nchw(interior), False, threads, False, biased)
    np.testing.assert_allclose(interior, conv + bias, rtol=1e-4, atol=1e-4)
    assert not padded[:, 0].any() and not padded[:, :, -1].any()
    first = np.full((2, 10, 9, 7), 1.5, np.float32)  # channels-first output, accumulated into
    assert native_im2col(nchw(x), wmat, (1, 1), (1, 1), (1, 1), first, True, threads, False, None)
    np.testing.assert_allclose(first.transpose(0, 2, 3, 1), conv + 1.5, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("size,channels,kernel,stride,layout", [
    (9, 20, 3, 1, "NHWC"), (10, 136, 3, 2, "NHWC"), (7, 12, 5, 1, "NCHW"), (6, 3, 3, 1, "NHWC")])
def test_depthwise_through_the_executor(size, channels, kernel, stride, layout, monkeypatch):
    """A depthwise convolution (groups = channels) at the linalg level: the native depthwise kernel
    runs it (any layout: channels contiguous or strided) and equals numpy written here, on repeated calls."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f32
    from xdsl.ir import Block, Region

    from xrelay.dialects import nn
    from xrelay.frontend import bind_params_by_name
    from xrelay.lowering import lower
    from xrelay.runtime.executor.linalg_exec import compile_linalg
    from xrelay.runtime.kernels import linalg_conv

    x = RNG.standard_normal((1, channels, size, size)).astype(np.float32)
    w = RNG.standard_normal((channels, 1, kernel, kernel)).astype(np.float32)
    pad = kernel // 2
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = (size + 2 * pad - kernel) // stride + 1
    expected = sum(padded[:, :, i:i + stride * (out - 1) + 1:stride, j:j + stride * (out - 1) + 1:stride]
                   * w[None, :, 0, i, j, None, None] for i in range(kernel) for j in range(kernel))
    perm = ["NCHW".index(a) for a in layout]
    kernel_layout = "HWOI" if layout == "NHWC" else "OIHW"
    wl = w.transpose(["OIHW".index(a) for a in kernel_layout])
    types = [TensorType(f32, s) for s in (x.transpose(perm).shape, wl.shape)]
    block = Block(arg_types=types)
    block.args[0].name_hint, block.args[1].name_hint = "x", "w"
    conv = nn.make("nn.conv2d", list(block.args), padding=(pad,) * 4, strides=(stride, stride), groups=channels,
                   data_layout=layout, kernel_layout=kernel_layout)
    block.add_ops([conv, func.ReturnOp(conv.results[0])])
    module = ModuleOp([func.FuncOp("main", FunctionType.from_lists(types, [conv.results[0].type]), Region(block))])
    calls = []
    monkeypatch.setattr(linalg_conv, "native_depthwise",
                        lambda *a: calls.append(conv_kernels.native_depthwise(*a)) or calls[-1])
    program = compile_linalg(lower(bind_params_by_name(module, {"w": wl}), to="linalg"))
    for _ in range(3):
        np.testing.assert_allclose(program(np.ascontiguousarray(x.transpose(perm)))[0], expected.transpose(perm),
                                   rtol=1e-4, atol=1e-4)
    assert calls and all(calls)


@pytest.mark.parametrize("channels,kernel,stride,dilation,width", [
    (37, 3, 1, 1, 12), (48, 5, 2, 1, 12), (20, 3, 1, 2, 12), (24, 7, 1, 1, 12), (150, 3, 1, 1, 70)])
@pytest.mark.parametrize("threads", [1, 2])
def test_depthwise_kernel_with_epilogue_accumulate_and_copy(channels, kernel, stride, dilation, width, threads):
    """`native_depthwise` against numpy written here: the taps' sum plus the output's value, a bias,
    clip to [0, 6], then x * sigmoid(x) of that (the saved value read again), stored in the output and
    copied into a padded buffer's interior. The kernel cuts rows of more than 8192 values into
    slices of channels (150 channels x 68 pixels: 112 and 38, the last 6 one by one); 7x7 windows
    take its loop of any window size."""
    x = RNG.standard_normal((2, 13, width, channels)).astype(np.float32)
    w = RNG.standard_normal((kernel, kernel, channels)).astype(np.float32)
    bias = RNG.standard_normal(channels).astype(np.float32)
    span = (kernel - 1) * dilation + 1
    oh, ow = (13 - span) // stride + 1, (width - span) // stride + 1
    start = RNG.standard_normal((2, oh, ow, channels)).astype(np.float32)
    taps = sum(x[:, i * dilation:i * dilation + (oh - 1) * stride + 1:stride,
                 j * dilation:j * dilation + (ow - 1) * stride + 1:stride].astype(np.float64) * w[i, j]
               for i in range(kernel) for j in range(kernel))
    v = np.clip(taps + start + bias, 0, 6)
    expected = v / (1 + np.exp(-v))
    out, padded = start.copy(), np.zeros((2, oh + 2, ow + 2, channels), np.float32)
    nchw = lambda a: a.transpose(0, 3, 1, 2)  # noqa: E731
    ops = [EpilogueOp(np.add, np.broadcast_to(bias, out.shape)), EpilogueOp(np.maximum, 0.0),
           EpilogueOp(np.minimum, 6.0, save=True), EpilogueOp(np.negative, None), EpilogueOp(np.exp, None),
           EpilogueOp(np.add, 1.0), EpilogueOp(np.divide, 1.0, reversed=True),
           EpilogueOp(np.multiply, conv_kernels.SAVED)]
    epilogue = NativeEpilogue(None, ops, copy=nchw(padded[:, 1:-1, 1:-1]))
    assert conv_kernels.native_depthwise(nchw(x), w, (stride, stride), (dilation, dilation), nchw(out), True, threads,
                                         epilogue)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(padded[:, 1:-1, 1:-1], expected, rtol=1e-5, atol=1e-5)
    assert not padded[:, 0].any() and not padded[:, :, -1].any()


def test_depthwise_rows_wider_than_the_kernel_buffer_are_refused():
    """An output row of more than 8192 pixels does not fit the kernel's row buffer: False, nothing
    written (the executor then runs numpy's taps)."""
    x = np.ones((1, 3, 8195, 1), np.float32)
    out = np.zeros((1, 1, 1, 8193), np.float32)
    assert not conv_kernels.native_depthwise(x.transpose(0, 3, 1, 2), np.ones((3, 3, 1), np.float32), (1, 1), (1, 1),
                                             out, False, 1)
    assert not out.any()


def test_kept_native_calls_follow_new_inputs_and_thread_counts(blas_workers, monkeypatch):
    """A built program's convolutions call their kept native calls again on later runs (same arrays):
    new input values are read, and a new thread count makes a new call (ResNet at 64x64 against the
    nn interpreter, on 1, 2 and 1 threads)."""
    import xrelay
    from xrelay import transform
    from xrelay.frontend import resnet
    from xrelay.runtime.native import conv_kernels as kernels
    from xrelay.runtime.reference.interpreter import run as run_nn

    module, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 64, 64))
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(module, params)
    made = []
    for name in ("native_winograd", "native_im2col"):
        original = getattr(kernels, name)
        monkeypatch.setattr(kernels, name, lambda *a, original=original, **k: made.append(1) or original(*a, **k))
    from xrelay.runtime.kernels import linalg_conv
    monkeypatch.setattr(linalg_conv, "native_winograd", kernels.native_winograd)
    monkeypatch.setattr(linalg_conv, "native_im2col", kernels.native_im2col)
    remade = []
    for threads in (1, 1, 2, 2, 1):
        blas_workers(threads)
        made.clear()
        data = RNG.standard_normal((1, 3, 64, 64)).astype(np.float32)
        expected = run_nn(module, {"data": data}, params)[0]
        np.testing.assert_allclose(executable(data)[0], expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())
        remade.append(bool(made))
    # The first run and each new thread count make the calls; the same thread count again keeps them
    # (back on one thread, the body bound for it runs every convolution as its kept call).
    assert remade == [True, False, True, False, False]


def grouped_direct_conv(x_nhwc, weight, groups, strides, dilation):
    """Each group's channels convolved with that group's filters (`direct_conv_general`), as NHWC."""
    c, f = x_nhwc.shape[3] // groups, weight.shape[0] // groups
    return np.concatenate([direct_conv_general(x_nhwc[..., g * c:(g + 1) * c], weight[g * f:(g + 1) * f], strides,
                                               dilation) for g in range(groups)], axis=3)


@pytest.mark.parametrize("n,size,c,f,groups,kernel,strides,dilation", [
    (1, 9, 8, 12, 2, (3, 3), (1, 1), (1, 1)),
    (2, 10, 12, 6, 3, (3, 3), (2, 2), (1, 1)),
    (1, 9, 16, 16, 4, (1, 1), (1, 1), (1, 1)),  # 1x1 over dense images: each group's rows read in place
    (1, 11, 6, 9, 3, (3, 3), (1, 1), (2, 2)),
    (1, 5, 24, 40, 4, (3, 3), (1, 1), (1, 1)),  # few pixels, many filters: still by pixels
])
@pytest.mark.parametrize("threads", [1, 2])
def test_grouped_im2col_equals_convolution_group_by_group(n, size, c, f, groups, kernel, strides, dilation, threads):
    from xrelay.runtime.native.conv_kernels import native_im2col

    x = RNG.standard_normal((n, size, size, c)).astype(np.float32)
    weight = RNG.standard_normal((f, c // groups, *kernel)).astype(np.float32)
    expected = grouped_direct_conv(x.astype(np.float64), weight.astype(np.float64), groups, strides, dilation)
    bias = RNG.standard_normal(f).astype(np.float32)
    wmat = np.ascontiguousarray(weight.reshape(groups, f // groups, c // groups, *kernel)
                                .transpose(0, 3, 4, 2, 1).reshape(-1, f // groups))
    out = np.full(expected.shape, np.nan, np.float32)
    epilogue = NativeEpilogue(None, [EpilogueOp(np.add, np.broadcast_to(bias, out.shape)), EpilogueOp(np.maximum, 0.0)])
    assert native_im2col(nchw(x), wmat, kernel, strides, dilation, nchw(out), False, threads, True, epilogue, groups)
    np.testing.assert_allclose(out, np.maximum(expected + bias, 0), rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    first = np.full((n, f, *expected.shape[1:3]), 1.5, np.float32)  # channels-first, accumulated into
    assert native_im2col(nchw(x), wmat, kernel, strides, dilation, first, True, threads, False, None, groups)
    np.testing.assert_allclose(first.transpose(0, 2, 3, 1), expected + 1.5, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


@pytest.mark.parametrize("size,c,f,groups,kernel,stride,pad,dilation", [
    (10, 8, 8, 2, 3, 1, 1, 1), (9, 12, 24, 3, 3, 2, 1, 1), (8, 16, 8, 4, 1, 1, 0, 1), (11, 6, 6, 3, 3, 1, 2, 2)])
@pytest.mark.parametrize("native", ["1", "0"])
def test_built_grouped_convolution_equals_numpy(size, c, f, groups, kernel, stride, pad, dilation, native, monkeypatch):
    """A grouped convolution with bias and ReLU, built at opt level 3: its kernel is im2col (the IR
    says so), run by the native kernel one GEMM per group, or with XRELAY_NATIVE=0 on numpy; either
    equals numpy written here, on repeated calls."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f32
    from xdsl.ir import Block, Region

    import xrelay
    from xrelay import transform
    from xrelay.dialects import nn
    from xrelay.runtime.kernels import linalg_conv

    x = RNG.standard_normal((1, c, size, size)).astype(np.float32)
    w = RNG.standard_normal((f, c // groups, kernel, kernel)).astype(np.float32)
    b = RNG.standard_normal(f).astype(np.float32)
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))).transpose(0, 2, 3, 1).astype(np.float64)
    expected = np.maximum(grouped_direct_conv(padded, w, groups, (stride, stride), (dilation, dilation)) + b, 0)
    types = [TensorType(f32, s) for s in (x.shape, w.shape, b.shape)]
    block = Block(arg_types=types)
    for arg, name in zip(block.args, "xwb"):
        arg.name_hint = name
    conv = nn.make("nn.conv2d", list(block.args[:2]), padding=(pad,) * 4, strides=(stride, stride),
                   dilation=(dilation, dilation), groups=groups, channels=f, kernel_size=(kernel, kernel))
    biased = nn.make("nn.bias_add", [conv.results[0], block.args[2]])
    relu = nn.make("nn.relu", [biased.results[0]])
    block.add_ops([conv, biased, relu, func.ReturnOp(relu.results[0])])
    module = ModuleOp([func.FuncOp("main", FunctionType.from_lists(types, [relu.results[0].type]),
                                   Region(block))])
    monkeypatch.setenv("XRELAY_NATIVE", native)
    calls = []  # the group counts of the native kernel's runs

    def counted(*args) -> bool:
        ran = conv_kernels.native_im2col(*args)
        if ran:
            calls.append(args[10])  # groups
        return ran

    monkeypatch.setattr(linalg_conv, "native_im2col", counted)
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(module, {"w": w, "b": b})
    assert 'algorithm = "im2col"' in str(executable.module)
    for _ in range(3):
        np.testing.assert_allclose(executable(x), expected.transpose(0, 3, 1, 2), rtol=1e-4, atol=1e-4)
    assert calls and all(g == groups for g in calls) if native == "1" else not calls


@pytest.mark.parametrize("filters", [40, 300])
@pytest.mark.parametrize("by_filters,accumulate", [(False, False), (False, True), (True, True)])
@pytest.mark.parametrize("threads", [1, 2])
def test_im2col_epilogue_over_groups_of_pixels(filters, by_filters, accumulate, threads):
    """The epilogue runs over a few pixels at a time (a bias, the same at every pixel, in one loop
    over them; a residual pixel by pixel; x * sigmoid(x) through the saved value), stored in the
    output and copied into a pad's interior: equal to numpy written here, with 40 filters (6 pixels
    a group, the last group short) and 300 (more than a group's room: pixel by pixel), the product
    in the output, in scratch (accumulating) or cut by filters."""
    from xrelay.runtime.native.conv_kernels import native_im2col

    x = RNG.standard_normal((1, 5, 7, 8)).astype(np.float32)
    weight = RNG.standard_normal((filters, 8, 1, 1)).astype(np.float32)
    wmat = np.ascontiguousarray(weight.transpose(2, 3, 1, 0).reshape(-1, filters))
    conv = direct_conv_general(x.astype(np.float64), weight.astype(np.float64), (1, 1), (1, 1))
    bias = RNG.standard_normal(filters).astype(np.float32)
    residual = RNG.standard_normal(conv.shape).astype(np.float32)
    start = RNG.standard_normal(conv.shape).astype(np.float32)
    v = conv + (start if accumulate else 0) + bias + residual
    expected = v / (1 + np.exp(-v))
    out, padded = start.copy(), np.zeros((1, 7, 9, filters), np.float32)
    ops = [EpilogueOp(np.add, np.broadcast_to(bias, out.shape)), EpilogueOp(np.add, residual, save=True),
           EpilogueOp(np.negative, None), EpilogueOp(np.exp, None), EpilogueOp(np.add, 1.0),
           EpilogueOp(np.divide, 1.0, reversed=True), EpilogueOp(np.multiply, conv_kernels.SAVED)]
    epilogue = NativeEpilogue(None, ops, copy=nchw(padded[:, 1:-1, 1:-1]))
    assert native_im2col(nchw(x), wmat, (1, 1), (1, 1), (1, 1), nchw(out), accumulate, threads, by_filters, epilogue)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(padded[:, 1:-1, 1:-1], expected, rtol=1e-5, atol=1e-5)
    assert not padded[:, 0].any() and not padded[:, :, -1].any()


@pytest.mark.parametrize("c,f", [(300, 70), (16, 24), (5, 130)])
@pytest.mark.parametrize("by_filters,threads", [(False, 1), (False, 2), (True, 2)])
def test_pointwise_tiles_equal_numpy(c, f, by_filters, threads):
    """A 1x1 stride-1 convolution of evenly strided pixels (here a slice of the channels of a wider
    array) runs as register tiles of 6 pixels x 64 filters (AVX-512; elsewhere sgemm): more channels
    than one panel of weights (300: summed in two passes), filters that are not whole vectors (70,
    24, 130: the last one masked), 35 pixels (the last tile short), cut by pixels or filters; equal
    to numpy, its bias and ReLU applied, in a pad's interior."""
    from xrelay.runtime.native.conv_kernels import native_im2col

    wide = RNG.standard_normal((1, 5, 7, c + 3)).astype(np.float32)
    x = wide[..., 1:c + 1]
    wmat = RNG.standard_normal((c, f)).astype(np.float32)
    bias = RNG.standard_normal(f).astype(np.float32)
    expected = np.maximum(x.astype(np.float64) @ wmat + bias, 0)
    padded = np.zeros((1, 7, 9, f), np.float32)
    interior = padded[:, 1:-1, 1:-1]
    epilogue = NativeEpilogue(None, [EpilogueOp(np.add, np.broadcast_to(bias, interior.shape)),
                                     EpilogueOp(np.maximum, 0.0)])
    assert native_im2col(nchw(x), wmat, (1, 1), (1, 1), (1, 1), nchw(interior), False, threads, by_filters, epilogue)
    np.testing.assert_allclose(interior, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    assert not padded[:, 0].any() and not padded[:, :, -1].any() and not padded[:, -1].any()
    empty = np.zeros((0, 5, 7, f), np.float32)  # no pixels: nothing to do, and no division by zero strips
    assert native_im2col(nchw(x[:0]), wmat, (1, 1), (1, 1), (1, 1), nchw(empty), False, threads, by_filters, None)
