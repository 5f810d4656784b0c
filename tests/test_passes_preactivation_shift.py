"""PreActivationShift: a ReLU of a per-channel constant add in front of an unpadded 1x1 conv becomes a
maximum, the add folded into the conv's bias; against numpy, in both layouts, and the cases left alone."""

import numpy as np
import pytest

from module_builder import make_module
from xrelay import passes, transform
from xrelay.dialects import nn
from xrelay.runtime import run


def names(mod):
    return [op.name for op in mod.body.block.first_op.body.block.ops if op.name != "nn.constant"]


def test_relu_of_a_shift_is_a_maximum_then_the_shift_exactly():
    """relu(x + b) == maximum(x, -b) + b bit for bit, ties (x == -b) and signs included."""
    rng = np.random.default_rng(3)
    b = rng.standard_normal(1000).astype(np.float32)
    x = np.concatenate([rng.standard_normal(1000).astype(np.float32) * 10, -b, np.nextafter(-b, 0), -b * 0.9999999])
    b = np.tile(b, 4)
    np.testing.assert_array_equal(np.maximum(x + b, 0), np.maximum(x, -b) + b)


def dense_layer(layout: str, groups: int, bias_after: bool, relu_read_twice: bool = False, kernel: int = 1):
    """x -> + b (per channel) -> ReLU -> conv (kernel x kernel, `groups`) [-> + bias], returning the
    conv's result (and the ReLU's, with `relu_read_twice`); its inputs and a numpy reference."""
    rng = np.random.default_rng(kernel * 10 + groups)
    c, f, h = 4, 6, 5
    x = rng.standard_normal((1, c, h, h)).astype(np.float32)
    b = rng.standard_normal(c).astype(np.float32)
    w = rng.standard_normal((f, c // groups, kernel, kernel)).astype(np.float32)
    bias = rng.standard_normal(f).astype(np.float32)
    order = ["NCHW".index(a) for a in layout]
    channel = layout.index("C")

    def along(vector):
        shape = [1, 1, 1, 1]
        shape[channel] = vector.size
        return vector.reshape(shape)

    def body(values, emit):
        y = emit(nn.make("nn.add", [values["x"], emit(nn.ConstantOp(along(b)))]))
        r = emit(nn.make("nn.relu", [y]))
        weight = w if layout == "NCHW" else w.transpose(2, 3, 1, 0)
        out = emit(nn.make("nn.conv2d", [r, emit(nn.ConstantOp(np.ascontiguousarray(weight)))], groups=groups,
                           channels=f, kernel_size=(kernel, kernel), data_layout=layout,
                           kernel_layout="OIHW" if layout == "NCHW" else "HWIO"))
        if bias_after:
            out = emit(nn.make("nn.add", [out, emit(nn.ConstantOp(along(bias)))]))
        return [out, r] if relu_read_twice else [out]

    module = make_module({"x": x.transpose(order).shape}, body)
    activated = np.maximum(x.astype(np.float64) + b.reshape(-1, 1, 1), 0)
    per_group = c // groups
    out = np.concatenate([
        np.einsum("nchw,fc->nfhw", activated[:, g * per_group:(g + 1) * per_group], w[g * f // groups:(g + 1) * f // groups, :, 0, 0])
        for g in range(groups)], axis=1)
    if bias_after:
        out = out + bias.reshape(-1, 1, 1)
    return module, {"x": x.transpose(order)}, out, order


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("bias_after", [True, False])
def test_the_preactivation_becomes_a_maximum_and_its_shift_joins_the_bias(layout, groups, bias_after):
    module, inputs, expected, order = dense_layer(layout, groups, bias_after)
    with transform.PassContext(opt_level=3):
        shifted = passes.PreActivationShift()(module)
    # The shift w.b after the conv merges with the conv's own bias into one add.
    assert names(shifted) == ["nn.maximum", "nn.conv2d", "nn.add", "func.return"]
    got = run(shifted, inputs).transpose([order.index(a) for a in range(4)])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["relu read twice", "3x3 conv"])
def test_left_alone(case):
    """A ReLU also returned (its values are needed) and a conv with a 3x3 window (the shift does not
    pass through it as one constant per output channel) keep the add and the ReLU."""
    module, inputs, expected, order = dense_layer("NCHW", 1, True, relu_read_twice=case == "relu read twice",
                                                  kernel=3 if case == "3x3 conv" else 1)
    with transform.PassContext(opt_level=3):
        shifted = passes.PreActivationShift()(module)
    assert names(shifted) == ["nn.add", "nn.relu", "nn.conv2d", "nn.add", "func.return"]
