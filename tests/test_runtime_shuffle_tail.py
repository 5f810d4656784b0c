"""A channel shuffle's pad written by the elementwise tail in front of it (runtime/kernels/shuffle_tail.py):
ShuffleNet's unit head (grouped 1x1 conv, bias-add, ReLU, shuffle, padded depthwise 3x3 conv) against
numpy written here, with the pad fused and without, and the cases left alone."""

import numpy as np
import pytest
from module_builder import make_module

from xrelay.dialects import nn
from xrelay.lowering import lower
from xrelay.runtime.kernels import shuffle_tail
from xrelay.runtime.parallel import spmd
from xrelay.runtime.kernels.contraction_plan import SplitTail
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.executor.pad_step import PadStep
from xrelay.runtime.kernels.shuffle_tail import ShuffledTail
from xrelay.runtime.parallel.threads import set_blas_threads

RNG = np.random.default_rng(33)


def unit_head(x_shape, w_hwio, bias, dw_hwio, groups, stride, residual=False, shuffle_read_twice=False):
    """conv2d(groups, NHWC) -> bias_add -> relu [-> + x] -> reshape / transpose / reshape (a channel shuffle)
    -> depthwise 3x3 conv (padding 1); with `shuffle_read_twice` the shuffle's input is also returned."""

    def body(values, emit):
        y = emit(nn.make("nn.conv2d", [values["x"], emit(nn.ConstantOp(w_hwio))], groups=groups,
                         data_layout="NHWC", kernel_layout="HWIO"))
        y = emit(nn.make("nn.bias_add", [y, emit(nn.ConstantOp(bias))], axis=3))
        r = emit(nn.make("nn.relu", [y]))
        if residual:
            r = emit(nn.make("nn.add", [r, values["x"]]))
        shape = list(r.type.get_shape())
        s = emit(nn.make("nn.reshape", [r], newshape=shape[:3] + [groups, shape[3] // groups]))
        t = emit(nn.make("nn.transpose", [s], axes=[0, 1, 2, 4, 3]))
        m = emit(nn.make("nn.reshape", [t], newshape=shape))
        d = emit(nn.make("nn.conv2d", [m, emit(nn.ConstantOp(dw_hwio))], groups=shape[3], strides=[stride, stride],
                         padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="HWIO"))
        return [d, r] if shuffle_read_twice else [d]

    return make_module({"x": x_shape}, body)


def reference(x, w_gcf, bias, dw, groups, stride, residual=False):
    """The unit head in float64 numpy: grouped 1x1 conv, bias, ReLU, shuffle, depthwise conv."""
    n, h, w, _ = x.shape
    g, c, f = w_gcf.shape
    y = np.einsum("nhwgc,gcf->nhwgf", x.reshape(n, h, w, g, c).astype(np.float64), w_gcf).reshape(n, h, w, g * f)
    r = np.maximum(y + bias, 0) + (x if residual else 0)
    channels = g * f
    shuffled = r[..., [(s % groups) * (channels // groups) + s // groups for s in range(channels)]]
    padded = np.pad(shuffled, ((0, 0), (1, 1), (1, 1), (0, 0)))
    oh, ow = (h - 1) // stride + 1, (w - 1) // stride + 1
    out = np.zeros((n, oh, ow, channels))
    for kh in range(3):
        for kw in range(3):
            out += padded[:, kh:kh + stride * (oh - 1) + 1:stride, kw:kw + stride * (ow - 1) + 1:stride] * dw[kh, kw]
    return out


def case(groups, group_channels, h, w, residual=False):
    channels = groups * group_channels
    x = RNG.standard_normal((1, h, w, channels)).astype(np.float32)
    w_gcf = RNG.standard_normal((groups, group_channels, group_channels)).astype(np.float32)
    hwio = w_gcf.transpose(1, 0, 2).reshape(1, 1, group_channels, channels)
    bias = RNG.standard_normal(channels).astype(np.float32)
    dw = RNG.standard_normal((3, 3, channels)).astype(np.float32)
    return x, w_gcf, hwio, bias, dw


def shuffled_tails(program: LinalgProgram) -> int:
    """Shuffled tails, on their own or run with the grouped convolution before them (runtime/kernels/contraction_tail.py)."""
    return sum(isinstance(step, ShuffledTail) or isinstance(step, SplitTail) and isinstance(step.tail.step, ShuffledTail)
               for step in program.steps)


def pad_copies(program: LinalgProgram) -> int:
    return sum(isinstance(step, PadStep) for step in program.steps)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("groups, group_channels, h, w, stride, residual",
                         [(4, 5, 7, 6, 1, False), (3, 3, 5, 9, 2, False), (2, 7, 6, 5, 1, True), (4, 34, 28, 28, 1, False)])
def test_the_tail_writes_the_shuffled_pad(groups, group_channels, h, w, stride, residual, threads):
    x, w_gcf, hwio, bias, dw = case(groups, group_channels, h, w, residual)
    expected = reference(x, w_gcf, bias, dw, groups, stride, residual)
    module = lower(unit_head(x.shape, hwio, bias, dw.reshape(3, 3, 1, -1), groups, stride, residual), to="linalg")
    fused = LinalgProgram(module)
    assert (shuffled_tails(fused), pad_copies(fused)) == (1, 0)
    set_blas_threads(threads)
    try:
        for _ in range(3):  # the planned buffers (the padded one's border too) are reused run after run
            (got,) = fused(x)
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
            x = x[:, ::-1].copy()
            expected = reference(x, w_gcf, bias, dw, groups, stride, residual)
    finally:
        set_blas_threads(1)


def test_a_shuffle_whose_input_is_read_elsewhere_keeps_its_pad():
    x, w_gcf, hwio, bias, dw = case(2, 3, 5, 4)
    module = lower(unit_head(x.shape, hwio, bias, dw.reshape(3, 3, 1, -1), 2, 1, shuffle_read_twice=True),
                   to="linalg")
    program = LinalgProgram(module)
    assert (shuffled_tails(program), pad_copies(program)) == (0, 1)
    got, relu = program(x)
    np.testing.assert_allclose(got, reference(x, w_gcf, bias, dw, 2, 1), rtol=1e-4, atol=1e-4)
    y = np.einsum("nhwgc,gcf->nhwgf", x.reshape(1, 5, 4, 2, 3).astype(np.float64), w_gcf).reshape(1, 5, 4, 6)
    np.testing.assert_allclose(relu, np.maximum(y + bias, 0), rtol=1e-4, atol=1e-4)


def test_the_tail_binds_its_calls_once_while_its_arrays_stay_the_same(monkeypatch):
    """In a planned program the step binds its ufunc calls on the first run
    only while its arrays stay the same (the residual add reads the argument: changed in place, then
    a new array); every run matches numpy, the pad's border included."""
    from xrelay.runtime.kernels.conv_epilogue import RowTail

    x, w_gcf, hwio, bias, dw = case(4, 5, 7, 6, residual=True)
    module = lower(unit_head(x.shape, hwio, bias, dw.reshape(3, 3, 1, -1), 4, 1, residual=True), to="linalg")
    program = LinalgProgram(module)
    binds = []
    original = RowTail.bind
    monkeypatch.setattr(RowTail, "bind", lambda self, *args: binds.append(1) or original(self, *args))
    for run in range(4):
        if run == 3:
            x = RNG.standard_normal(x.shape).astype(np.float32)
        elif run:
            x[...] = RNG.standard_normal(x.shape)
        (got,) = program(x)
        np.testing.assert_allclose(got, reference(x, w_gcf, bias, dw, 4, 1, residual=True), rtol=1e-4, atol=1e-4)
    assert len(binds) == 2


@pytest.mark.skipif(spmd.why_not_platform() is not None, reason="no two-process mode here")
def test_the_tail_splits_over_both_processes(blas_workers, monkeypatch):
    """shuffle_tail.PROCESSES_MIN_SPLIT_ELEMENTS: in the two-process mode the tail (here 5376 points,
    above the threshold set for the test) runs half its rows on each process; the answer needs the
    second process's half."""
    from test_runtime_depthwise_step import check_on_both_processes

    from xrelay.runtime.kernels import contraction_plan
    from xrelay.runtime.kernels import depthwise

    blas_workers(2)
    monkeypatch.setattr(spmd, "CHECK_BINDINGS", True)
    monkeypatch.setattr(shuffle_tail, "PROCESSES_MIN_SPLIT_ELEMENTS", 1 << 10)
    # The convolutions around the tail run on the first process only: only the tail splits.
    monkeypatch.setattr(contraction_plan, "CONTRACTION_STEPS", False)
    monkeypatch.setattr(depthwise, "PROCESSES_MIN_SPLIT_MACS", float("inf"))
    x, w_gcf, hwio, bias, dw = case(4, 8, 14, 12)
    module = lower(unit_head(x.shape, hwio, bias, dw.reshape(3, 3, 1, -1), 4, 1), to="linalg")
    check_on_both_processes(module, x, lambda x: reference(x, w_gcf, bias, dw, 4, 1), ShuffledTail, monkeypatch)
