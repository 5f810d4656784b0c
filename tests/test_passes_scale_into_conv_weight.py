"""ScaleIntoConvWeight: a squeeze-excitation gate (a run-time scale per channel) on a convolution's
data moves onto the weight's input channels; outputs against numpy at the nn level, the linalg
level, and built with and without the native kernels."""

import numpy as np
import pytest
from module_builder import make_module, op_names

import xrelay
from xrelay import passes, transform
from xrelay.dialects import nn
from xrelay.lowering import lower
from xrelay.runtime import run
from xrelay.runtime.executor.linalg_exec import LinalgProgram

RNG = np.random.default_rng(30)


def gated_conv(layout, x_shape, weight, padding=(1, 1, 1, 1)):
    """conv2d(x * sigmoid(mean of x over H and W), weight): a squeeze-excitation's gate (without its
    dense layers) scaling the convolution's data."""
    kernel_layout = "HWIO" if layout == "NHWC" else "OIHW"

    def body(values, emit):
        pooled = emit(nn.make("nn.global_avg_pool2d", [values["x"]], layout=layout))
        gate = emit(nn.make("nn.sigmoid", [pooled]))
        scaled = emit(nn.make("nn.multiply", [values["x"], gate]))
        return [emit(nn.make("nn.conv2d", [scaled, emit(nn.ConstantOp(weight))], padding=padding,
                             data_layout=layout, kernel_layout=kernel_layout))]

    return make_module({"x": x_shape}, body)


def expected_nhwc(x, hwio, pad):
    """The gated convolution written here in float64 (x NHWC, weight HWIO, stride 1)."""
    gated = x.astype(np.float64) * (1 / (1 + np.exp(-x.astype(np.float64).mean(axis=(1, 2), keepdims=True))))
    padded = np.pad(gated, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    kh, kw = hwio.shape[:2]
    oh, ow = padded.shape[1] - kh + 1, padded.shape[2] - kw + 1
    return sum(padded[:, i:i + oh, j:j + ow] @ hwio[i, j] for i in range(kh) for j in range(kw))


def apply(mod, **options):
    with transform.PassContext(opt_level=3):
        return passes.ScaleIntoConvWeight(**options)(mod)


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
def test_the_gate_scales_the_weight(layout):
    x = RNG.standard_normal((1, 8, 7, 5)).astype(np.float32)  # 280 values against a 3x3x5x4 weight (180)
    hwio = RNG.standard_normal((3, 3, 5, 4)).astype(np.float32)
    data, weight = (x, hwio) if layout == "NHWC" else (x.transpose(0, 3, 1, 2), hwio.transpose(3, 2, 0, 1))
    mod = gated_conv(layout, data.shape, weight)
    rewritten = apply(mod.clone())
    reshaped = ["nn.reshape"] if layout == "NHWC" else []  # (NCHW's (1, C, 1, 1) gate lies along OIHW's I)
    assert op_names(rewritten) == ["nn.global_avg_pool2d", "nn.sigmoid", *reshaped, "nn.multiply", "nn.conv2d",
                                   "func.return"]
    conv = next(op for op in rewritten.walk() if op.name == "nn.conv2d")
    assert conv.operands[0] is rewritten.body.block.first_op.body.block.args[0]
    expected = expected_nhwc(x, hwio, 1)
    if layout == "NCHW":
        expected = expected.transpose(0, 3, 1, 2)
    for module in (mod, rewritten):
        np.testing.assert_allclose(run(module, {"x": data}), expected, rtol=1e-4, atol=1e-5)
    (got,) = LinalgProgram(lower(rewritten, to="linalg"))(data)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("native", ["1", "0"])
def test_built_with_and_without_native_kernels(native, monkeypatch):
    """`xrelay.build` runs the pass (after ConvertLayout, on NHWC convolutions): the same answer on
    the native kernels and on numpy's."""
    from xrelay.passes.build import graph_passes

    monkeypatch.setenv("XRELAY_NATIVE", native)
    x = RNG.standard_normal((1, 9, 9, 6)).astype(np.float32)
    hwio = RNG.standard_normal((1, 1, 6, 7)).astype(np.float32)
    mod = gated_conv("NHWC", x.shape, hwio, padding=(0, 0, 0, 0))
    with transform.PassContext(opt_level=3):
        optimised = transform.Sequential(graph_passes())(mod.clone())
        executable = xrelay.build(mod, {})
    assert "nn.reshape" in op_names(optimised)
    np.testing.assert_allclose(executable.program(x)[0], expected_nhwc(x, hwio, 0), rtol=1e-4, atol=1e-5)


def test_a_weight_larger_than_the_data_is_left_alone():
    x = RNG.standard_normal((1, 2, 2, 5)).astype(np.float32)  # 20 values against a 3x3x5x4 weight (180)
    mod = gated_conv("NHWC", x.shape, RNG.standard_normal((3, 3, 5, 4)).astype(np.float32))
    assert op_names(apply(mod.clone())) == op_names(mod)
    assert "nn.reshape" in op_names(apply(mod.clone(), max_weight_ratio=10.0))
