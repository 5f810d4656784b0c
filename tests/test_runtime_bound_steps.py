"""A placed program's runs with its steps' kept kernel calls (runtime/executor/bound_steps.py):
ShuffleNet's unit head and a chain of grouped 1x1 convolutions against numpy written here, run after run with new and
changed arguments, on one thread (the bound body) and two (the steps), with the flag on and off."""

import numpy as np
import pytest
from module_builder import formed, make_module

from xrelay.dialects import nn
from xrelay.lowering import lower
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.kernels.conv_epilogue import ConvStep
from xrelay.runtime.native.build import native_enabled
from xrelay.runtime.parallel.threads import set_blas_threads

RNG = np.random.default_rng(131)


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


def bound_calls(program: LinalgProgram) -> int:
    """How many steps of the one-thread body run as their kept calls."""
    if program.runs is None or 1 not in program.runs.bodies:
        return 0
    return sum(getattr(step, "__name__", "") in ("matmul", "convolution", "ufuncs") for step in program.runs.bodies[1])


@pytest.mark.parametrize("groups, group_channels, h, w, stride, residual",
                         [(3, 4, 7, 6, 1, True), (3, 5, 9, 8, 2, False), (2, 3, 1, 1, 1, True)])
def test_the_unit_head_runs_its_kept_calls_on_one_thread_and_matches_numpy(groups, group_channels, h, w, stride,
                                                                           residual):
    x, w_gcf, hwio, bias, dw = case(groups, group_channels, h, w, residual)
    module = lower(unit_head(x.shape, hwio, bias, dw.reshape(3, 3, 1, -1), groups, stride, residual), to="linalg")
    program = LinalgProgram(formed(module))
    set_blas_threads(1)
    try:
        for run in range(6):
            if run == 3:  # two threads: the steps themselves, then one thread again: the same bound body
                set_blas_threads(2)
            elif run == 4:
                set_blas_threads(1)
            expected = reference(x, w_gcf, bias, dw, groups, stride, residual)
            (got,) = program(x)
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
            if run % 2:
                x = RNG.standard_normal(x.shape).astype(np.float32)
            else:
                x[...] = RNG.standard_normal(x.shape)
            if run == 1:  # made after the second run on one thread (its steps read the argument: not bound)
                made = program.runs.bodies[1]
        assert program.runs.bodies[1] is made  # kept across the two-thread run
        assert 2 in program.runs.bodies  # and one made for two threads
    finally:
        set_blas_threads(1)


def grouped_chain(x_shape, w_hwio, bias, groups):
    """relu(x) -> grouped 1x1 conv -> bias-add -> ReLU -> grouped 1x1 conv (+ relu(x)): ShuffleNet's
    grouped convolutions and fused tails reading results, not the argument."""

    def body(values, emit):
        r = emit(nn.make("nn.relu", [values["x"]]))
        y = emit(nn.make("nn.conv2d", [r, emit(nn.ConstantOp(w_hwio))], groups=groups, data_layout="NHWC",
                         kernel_layout="HWIO"))
        y = emit(nn.make("nn.relu", [emit(nn.make("nn.bias_add", [y, emit(nn.ConstantOp(bias))], axis=3))]))
        z = emit(nn.make("nn.conv2d", [y, emit(nn.ConstantOp(w_hwio))], groups=groups, data_layout="NHWC",
                         kernel_layout="HWIO"))
        return [emit(nn.make("nn.add", [z, r]))]

    return make_module({"x": x_shape}, body)


def grouped_chain_reference(x, w_gcf, bias):
    n, h, w, _ = x.shape
    g, c, f = w_gcf.shape

    def conv(a):
        return np.einsum("nhwgc,gcf->nhwgf", a.reshape(n, h, w, g, c), w_gcf).reshape(n, h, w, g * f)

    r = np.maximum(x.astype(np.float64), 0)
    return conv(np.maximum(conv(r) + bias, 0)) + r


def chain_case(groups=3, group_channels=4, h=5, w=6):
    x, w_gcf, hwio, bias, _ = case(groups, group_channels, h, w)
    return x, w_gcf, hwio, bias, lower(grouped_chain(x.shape, hwio, bias, groups), to="linalg")


def test_grouped_convolutions_and_their_tail_run_their_kept_calls_and_match_numpy():
    """Both grouped convolutions (native im2col, or matmuls), the first with the bias-add + ReLU after it as its
    epilogue and the second with the residual add (expand-through-collapse puts them in their kernels), run
    as kept calls; the
    answers follow new arguments and arguments changed in place; a step reading the argument (the
    first ReLU, the residual add) is not bound."""
    x, w_gcf, _, bias, module = chain_case()
    program = LinalgProgram(formed(module))
    set_blas_threads(1)
    for run in range(5):
        (got,) = program(x)
        np.testing.assert_allclose(got, grouped_chain_reference(x, w_gcf, bias), rtol=1e-4, atol=1e-4)
        if run % 2:
            x = RNG.standard_normal(x.shape).astype(np.float32)
        else:
            x[...] = RNG.standard_normal(x.shape)
    if native_enabled():  # (numpy-only, a grouped convolution is group-by-group matmuls, no kept call)
        assert bound_calls(program) >= 2
    assert [step.tail is not None for step in program.steps if isinstance(step, ConvStep)] == [True, True]
    for index, step in zip(program.runs.replay, program.runs.bodies[1]):
        if 0 in program.accesses[index].reads:
            assert step is program.steps[index]

