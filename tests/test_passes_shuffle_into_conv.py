"""ShuffleIntoConv: a channel shuffle after a grouped convolution (its bias and ReLU between) becomes
a dense convolution's filter order; outputs against numpy, and the cases left alone."""

import numpy as np
import pytest
from module_builder import make_module, op_names

from xrelay import passes, transform
from xrelay.dialects import nn
from xrelay.lowering import lower
from xrelay.runtime import run
from xrelay.runtime.executor.linalg_exec import LinalgProgram

RNG = np.random.default_rng(21)


def grouped_1x1(x_nhwc, w_gcf):
    """x (N, H, W, G*C), w (G, C, F): out (N, H, W, G*F), group g's filters reading its C channels."""
    n, h, w, _ = x_nhwc.shape
    g, c, f = w_gcf.shape
    return np.einsum("nhwgc,gcf->nhwgf", x_nhwc.reshape(n, h, w, g, c).astype(np.float64), w_gcf).reshape(n, h, w, g * f)


def shuffled(y_nhwc, groups):
    """ShuffleNet's channel shuffle written here: channel s of the result is channel
    (s % groups) * (C / groups) + s // groups of `y_nhwc`."""
    channels = y_nhwc.shape[-1]
    source = [(s % groups) * (channels // groups) + s // groups for s in range(channels)]
    return y_nhwc[..., source]


def unit(layout, x_shape, weight, bias, groups, shuffle_groups, relu_uses=1, shuffle_axes=None):
    """conv2d(groups) -> bias_add -> relu -> reshape / transpose / reshape (a channel shuffle)."""
    channel = layout.index("C")
    kernel_layout = "HWIO" if layout == "NHWC" else "OIHW"

    def body(values, emit):
        w = emit(nn.ConstantOp(weight)) if isinstance(weight, np.ndarray) else values["w"]
        y = emit(nn.make("nn.conv2d", [values["x"], w], groups=groups, data_layout=layout, kernel_layout=kernel_layout))
        y = emit(nn.make("nn.bias_add", [y, emit(nn.ConstantOp(bias))], axis=channel))
        r = emit(nn.make("nn.relu", [y]))
        shape = list(r.type.get_shape())
        split = shape[:channel] + [shuffle_groups, shape[channel] // shuffle_groups] + shape[channel + 1:]
        s = emit(nn.make("nn.reshape", [r], newshape=split))
        axes = list(range(len(split)))
        axes[channel], axes[channel + 1] = channel + 1, channel
        t = emit(nn.make("nn.transpose", [s], axes=shuffle_axes or axes))
        m = emit(nn.make("nn.reshape", [t], newshape=shape))
        return [m] + ([emit(nn.make("nn.add", [r, m]))] if relu_uses == 2 else [])

    args = {"x": x_shape}
    if not isinstance(weight, np.ndarray):
        args["w"] = weight
    return make_module(args, body)


def outputs(mod, inputs):
    """The results of `mod` on `inputs` (nn level) as a list."""
    results = run(mod, inputs)
    return results if isinstance(results, list) else [results]


def apply(mod, **options):
    with transform.PassContext(opt_level=3):
        return passes.ShuffleIntoConv(**options)(mod)


@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
@pytest.mark.parametrize("groups, group_channels, filters", [(4, 6, 28), (2, 3, 4), (3, 8, 2)])
def test_the_shuffle_becomes_the_dense_conv_filter_order(layout, groups, group_channels, filters):
    x = RNG.standard_normal((1, 5, 6, groups * group_channels)).astype(np.float32)
    w_gcf = RNG.standard_normal((groups, group_channels, filters)).astype(np.float32)
    bias = RNG.standard_normal(groups * filters).astype(np.float32)
    hwio = w_gcf.transpose(1, 0, 2).reshape(1, 1, group_channels, groups * filters)
    weight = hwio if layout == "NHWC" else hwio.transpose(3, 2, 0, 1)
    data = x if layout == "NHWC" else x.transpose(0, 3, 1, 2)
    mod = unit(layout, data.shape, weight, bias, groups, shuffle_groups=groups)
    rewritten = apply(mod)
    assert op_names(rewritten) == ["nn.conv2d", "nn.add", "nn.relu", "func.return"]
    conv = next(op for op in rewritten.walk() if op.name == "nn.conv2d")
    assert conv.attrs()["groups"] == 1
    expected = shuffled(np.maximum(grouped_1x1(x, w_gcf) + bias, 0), groups)
    if layout == "NCHW":
        expected = expected.transpose(0, 3, 1, 2)
    for module in (mod, rewritten):
        (got,) = outputs(module, {"x": data})
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    (got,) = LinalgProgram(lower(rewritten, to="linalg"))(data)  # as the benchmark runs it
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_a_shuffle_of_other_groups_than_the_conv_is_folded_too():
    x = RNG.standard_normal((1, 3, 3, 8)).astype(np.float32)
    w_gcf = RNG.standard_normal((2, 4, 6)).astype(np.float32)  # 2 conv groups, 12 filters
    bias = RNG.standard_normal(12).astype(np.float32)
    weight = w_gcf.transpose(1, 0, 2).reshape(1, 1, 4, 12)
    mod = unit("NHWC", x.shape, weight, bias, groups=2, shuffle_groups=3)
    rewritten = apply(mod)
    assert "nn.transpose" not in op_names(rewritten)
    (got,) = outputs(rewritten, {"x": x})
    np.testing.assert_allclose(got, shuffled(np.maximum(grouped_1x1(x, w_gcf) + bias, 0), 3), rtol=1e-5, atol=1e-5)


def left_alone(mod, inputs, **options):
    rewritten = apply(mod, **options)
    assert op_names(rewritten) == op_names(mod)
    for a, b in zip(outputs(mod, inputs), outputs(rewritten, inputs), strict=True):
        np.testing.assert_array_equal(a, b)


def test_groups_reading_many_channels_are_left_alone():
    x = RNG.standard_normal((1, 2, 2, 8)).astype(np.float32)
    weight = RNG.standard_normal((1, 1, 4, 4)).astype(np.float32)
    mod = unit("NHWC", x.shape, weight, np.zeros(4, np.float32), groups=2, shuffle_groups=2)
    left_alone(mod, {"x": x}, max_group_channels=3)
    assert "nn.transpose" not in op_names(apply(mod, max_group_channels=4))


def test_a_relu_read_elsewhere_too_is_left_alone():
    x = RNG.standard_normal((1, 2, 2, 4)).astype(np.float32)
    weight = RNG.standard_normal((1, 1, 2, 4)).astype(np.float32)
    left_alone(unit("NHWC", x.shape, weight, np.ones(4, np.float32), 2, 2, relu_uses=2), {"x": x})


def test_a_weight_that_is_an_argument_is_left_alone():
    x = RNG.standard_normal((1, 2, 2, 4)).astype(np.float32)
    weight = RNG.standard_normal((1, 1, 2, 4)).astype(np.float32)
    left_alone(unit("NHWC", x.shape, weight.shape, np.ones(4, np.float32), 2, 2), {"x": x, "w": weight})


def test_a_transpose_that_is_no_channel_shuffle_is_left_alone():
    x = RNG.standard_normal((1, 3, 3, 4)).astype(np.float32)
    weight = RNG.standard_normal((1, 1, 2, 4)).astype(np.float32)
    # Swaps H and W instead of the two channel halves.
    mod = unit("NHWC", x.shape, weight, np.ones(4, np.float32), 2, 2, shuffle_axes=[0, 2, 1, 3, 4])
    left_alone(mod, {"x": x})
