"""Contractions run through their planned batched matmul (runtime/kernels/contraction_plan.py): dense
layers, and grouped 1x1 convolutions in both layouts (which im2col runs, `linalg_conv`, unless
convolutions go unrecognised), against einsum references written here, without the general path
(the product summed over the loop space)."""

import numpy as np
from module_builder import formed, make_module
import pytest
from op_levels import single_op_module

from xrelay.lowering import lower
from xrelay.runtime.kernels import linalg_structured
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.parallel.threads import set_blas_threads

RNG = np.random.default_rng(5)


@pytest.fixture
def no_general_path(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the general path ran")

    monkeypatch.setattr(linalg_structured, "reduce_into", refuse)


def grouped_1x1_reference(x_nhwc, w_groups):
    """x (N, H, W, G*C) and w (G, C, F): out (N, H, W, G*F), group g's filters reading its C channels."""
    n, h, w, _ = x_nhwc.shape
    g, c, f = w_groups.shape
    out = np.einsum("nhwgc,gcf->nhwgf", x_nhwc.reshape(n, h, w, g, c).astype(np.float64), w_groups)
    return out.reshape(n, h, w, g * f)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("groups, channels, filters, size", [(4, 6, 28, 9), (4, 34, 34, 28), (2, 3, 5, 1), (3, 8, 8, 65)])
def test_grouped_1x1_conv(no_general_path, layout, groups, channels, filters, size, threads):
    x = RNG.standard_normal((1, size, size, groups * channels)).astype(np.float32)
    w_groups = RNG.standard_normal((groups, channels, filters)).astype(np.float32)
    # OIHW weight: output channel g * F + f reads input channel c of group g.
    weight = w_groups.transpose(0, 2, 1).reshape(groups * filters, channels, 1, 1)
    if layout == "NHWC":
        data, kernel, attrs = x, weight.transpose(2, 3, 1, 0), dict(data_layout="NHWC", kernel_layout="HWIO")
    else:
        data, kernel, attrs = x.transpose(0, 3, 1, 2), weight, {}
    module = lower(single_op_module("nn.conv2d", [data, kernel], dict(groups=groups, **attrs), constants=True),
                   to="linalg")
    set_blas_threads(threads)
    try:
        (got,) = LinalgProgram(formed(module))()
    finally:
        set_blas_threads(1)
    expected = grouped_1x1_reference(x, w_groups)
    if layout == "NCHW":
        expected = expected.transpose(0, 3, 1, 2)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_dense(no_general_path):
    x, w = RNG.standard_normal((3, 20)).astype(np.float32), RNG.standard_normal((7, 20)).astype(np.float32)
    module = lower(single_op_module("nn.dense", [x, w], {}), to="linalg")
    (got,) = LinalgProgram(formed(module))(x, w)
    np.testing.assert_allclose(got, x.astype(np.float64) @ w.T, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout, stride", [("NCHW", 1), ("NHWC", 1), ("NCHW", 2)])
def test_planned_program_reuses_matrices_only_when_they_view_the_arrays(no_general_path, layout, stride, monkeypatch):
    """The contraction reads a buffer of the program (the ReLU of the argument), the same array every
    run, whose contents change with the argument's: unstrided, both layouts' matrices are views of it
    (NCHW: per group, the weight's rows times the data's channels by pixels), kept once the program
    learnt its bindings (two runs); with stride 2 the NCHW data matrix is a copy (the strided pixels
    merged), made again on every run."""
    from xrelay.dialects import nn
    from xrelay.runtime.kernels import affine_views

    monkeypatch.setattr(linalg_structured, "conv_geometry", lambda *args: None)  # a planned contraction
    groups, channels, filters, size = 2, 3, 4, 5
    w_groups = RNG.standard_normal((groups, channels, filters)).astype(np.float32)
    weight = w_groups.transpose(0, 2, 1).reshape(groups * filters, channels, 1, 1)
    x = RNG.standard_normal((1, size, size, groups * channels)).astype(np.float32)
    to_layout = (0, 1, 2, 3) if layout == "NHWC" else (0, 3, 1, 2)
    attrs = dict(data_layout="NHWC", kernel_layout="HWIO") if layout == "NHWC" else {}
    kernel = np.ascontiguousarray(weight.transpose(2, 3, 1, 0) if layout == "NHWC" else weight)

    def body(values, emit):
        relu = emit(nn.make("nn.relu", [values["x"]]))
        weight = emit(nn.ConstantOp(kernel))
        return [emit(nn.make("nn.conv2d", [relu, weight], groups=groups, strides=[stride, stride], **attrs))]

    module = lower(make_module({"x": x.transpose(to_layout).shape}, body), to="linalg")
    program = LinalgProgram(formed(module))
    made = []
    original = affine_views.LoopView.__call__
    monkeypatch.setattr(affine_views.LoopView, "__call__", lambda self, *a, **k: made.append(1) or original(self, *a, **k))
    counts, data = [], np.ascontiguousarray(x.transpose(to_layout))
    for source in (x, RNG.standard_normal(x.shape).astype(np.float32), x * 2, x * 3):
        data[...] = source.transpose(to_layout)  # the same argument array, new contents
        expected = grouped_1x1_reference(np.maximum(source[:, ::stride, ::stride], 0), w_groups)
        before = len(made)
        (got,) = program(data)
        counts.append(len(made) - before)
        np.testing.assert_allclose(got, expected.transpose(to_layout), rtol=1e-4, atol=1e-4)
    if stride == 1:
        assert counts[0] > 0 and counts[2] == counts[3] == 0  # kept: the same buffer every run
    else:
        assert counts[3] == counts[2] == counts[1] > 0  # (the first run also made the ReLU's)
