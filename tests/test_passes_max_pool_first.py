"""MaxPoolFirst: ReLUs and constant adds move behind a max pool; outputs against numpy."""

import numpy as np
import pytest

from xrelay import passes, transform
from xrelay.dialects import nn
from xrelay.runtime import run
from module_builder import make_module


def max_pool_nchw(x, size, strides, padding, dilation=(1, 1), ceil_mode=False):
    """A max pool over NCHW `x` written here: -inf padding, (top, left, bottom, right)."""
    top, left, bottom, right = padding
    padded = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=-np.inf)
    outs = []
    for axis, k, s, d in ((2, size[0], strides[0], dilation[0]), (3, size[1], strides[1], dilation[1])):
        span = padded.shape[axis] - (k - 1) * d - 1
        outs.append((-(-span // s) if ceil_mode else span // s) + 1)
    out = np.full(x.shape[:2] + tuple(outs), -np.inf, x.dtype)
    for i in range(outs[0]):
        for j in range(outs[1]):
            for a in range(size[0]):
                for b in range(size[1]):
                    h, w = i * strides[0] + a * dilation[0], j * strides[1] + b * dilation[1]
                    if h < padded.shape[2] and w < padded.shape[3]:
                        out[:, :, i, j] = np.maximum(out[:, :, i, j], padded[:, :, h, w])
    return out


def names(mod):
    return [op.name for op in mod.body.block.first_op.body.block.ops if op.name != "nn.constant"]


CASES = [  # layout, pool attributes
    ("NCHW", dict(pool_size=(3, 3), strides=(2, 2), padding=(0, 0, 0, 0))),
    ("NHWC", dict(pool_size=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1))),
    ("NCHW", dict(pool_size=(2, 3), strides=(1, 2), padding=(1, 0, 0, 1), ceil_mode=True)),
    ("NHWC", dict(pool_size=(3, 2), strides=(2, 2), padding=(0, 1, 2, 1), dilation=(2, 1), ceil_mode=True)),
]


@pytest.mark.parametrize("layout, pool", CASES)
def test_bias_add_and_relu_move_behind_the_pool(layout, pool):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 3, 9, 8)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    shift = rng.standard_normal((3, 1, 1)).astype(np.float32)
    to_layout = [layout.index(c) for c in "NCHW"]  # NCHW axes in this layout's order
    order = ["NCHW".index(c) for c in layout]
    channel = layout.index("C")
    shift_in_layout = shift.reshape(3) if layout == "NHWC" else shift

    def body(values, emit):
        y = emit(nn.make("nn.bias_add", [values["x"], emit(nn.ConstantOp(bias))], axis=channel))
        y = emit(nn.make("nn.add", [emit(nn.ConstantOp(shift_in_layout)), y]))  # the constant first
        y = emit(nn.make("nn.relu", [y]))
        return [emit(nn.make("nn.max_pool2d", [y], layout=layout, **pool))]

    mod = make_module({"x": x.transpose(order).shape}, body)
    with transform.PassContext(opt_level=3):
        moved = passes.MaxPoolFirst()(mod)
    assert names(moved) == ["nn.max_pool2d", "nn.bias_add", "nn.add", "nn.relu", "func.return"]
    activated = np.maximum(x + bias.reshape(3, 1, 1) + shift, 0)
    expected = max_pool_nchw(activated, pool["pool_size"], pool["strides"], pool["padding"],
                             pool.get("dilation", (1, 1)), pool.get("ceil_mode", False))
    got = run(moved, {"x": x.transpose(order)})
    np.testing.assert_allclose(got.transpose(to_layout), expected, rtol=1e-6, atol=1e-6)


def pool_after(x_shape, make_f, **pool):
    def body(values, emit):
        return make_f(values["x"], emit, pool)

    mod = make_module({"x": x_shape}, body)
    with transform.PassContext(opt_level=3):
        return mod, passes.MaxPoolFirst()(mod)


def test_a_relu_read_elsewhere_stays():
    def f(x, emit, pool):
        r = emit(nn.make("nn.relu", [x]))
        return [emit(nn.make("nn.max_pool2d", [r], **pool)), r]

    _, moved = pool_after((1, 2, 6, 6), f, pool_size=(2, 2), strides=(2, 2))
    assert names(moved) == ["nn.relu", "nn.max_pool2d", "func.return"]


def test_an_add_varying_over_the_window_stays():
    shift = np.arange(36, dtype=np.float32).reshape(1, 1, 6, 6)

    def f(x, emit, pool):
        y = emit(nn.make("nn.add", [x, emit(nn.ConstantOp(shift))]))
        return [emit(nn.make("nn.max_pool2d", [y], **pool))]

    _, moved = pool_after((1, 2, 6, 6), f, pool_size=(2, 2), strides=(2, 2))
    assert names(moved) == ["nn.add", "nn.max_pool2d", "func.return"]


def test_a_window_of_padding_only_keeps_the_relu_in_front():
    """Padding 2 before a 2-wide window: the first output row pools only padding (-inf), which a
    ReLU after the pool would turn into 0."""
    def f(x, emit, pool):
        r = emit(nn.make("nn.relu", [x]))
        return [emit(nn.make("nn.max_pool2d", [r], **pool))]

    mod, moved = pool_after((1, 2, 5, 5), f, pool_size=(2, 2), strides=(2, 2), padding=(2, 0, 0, 0))
    assert names(moved) == ["nn.relu", "nn.max_pool2d", "func.return"]
    x = np.random.default_rng(5).standard_normal((1, 2, 5, 5)).astype(np.float32)
    got = run(moved, {"x": x})
    np.testing.assert_array_equal(got, max_pool_nchw(np.maximum(x, 0), (2, 2), (2, 2), (2, 0, 0, 0)))
    assert np.all(got[:, :, 0] == -np.inf)


def test_a_ceil_mode_window_past_the_input_keeps_the_relu_in_front():
    """Width 8, right padding 2, 3-wide windows of stride 2 in ceil mode: the last window starts at
    column 8, in the padding."""
    def f(x, emit, pool):
        r = emit(nn.make("nn.relu", [x]))
        return [emit(nn.make("nn.max_pool2d", [r], **pool))]

    _, moved = pool_after((1, 3, 9, 8), f, pool_size=(2, 3), strides=(1, 2), padding=(1, 0, 0, 2), ceil_mode=True)
    assert names(moved) == ["nn.relu", "nn.max_pool2d", "func.return"]
