"""WinogradConv: 3x3 stride-1 convolutions as Winograd F(2x2, 3x3) / F(4x4, 3x3) in nn ops; outputs
against a direct convolution written here in numpy, at the nn and loops levels, and the convolutions
left alone."""

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, i32
from module_builder import make_module, op_names

from xrelay.dialects import nn
from xrelay.lowering import lower
from xrelay.passes.winograd_conv import WinogradConv
from xrelay.runtime import run

RNG = np.random.default_rng(30)


def direct_conv(x_nchw, w_oihw, padding):
    """The convolution by its definition: out[n, f, i, j] = sum over c, a, b of
    x[n, c, i + a, j + b] * w[f, c, a, b] over the zero-padded input (top, left, bottom, right)."""
    top, left, bottom, right = padding
    x = np.pad(x_nchw.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
    kh, kw = w_oihw.shape[2:]
    oh, ow = x.shape[2] - kh + 1, x.shape[3] - kw + 1
    out = np.zeros((x.shape[0], w_oihw.shape[0], oh, ow))
    for a in range(kh):
        for b in range(kw):
            out += np.einsum("nchw,fc->nfhw", x[:, :, a:a + oh, b:b + ow], w_oihw[:, :, a, b])
    return out


def conv_module(x_shape, weight, data_layout="NCHW", kernel_layout="OIHW", constant=True, **attrs):
    def body(values, emit):
        w = emit(nn.ConstantOp(weight)) if constant else values["w"]
        return [emit(nn.make("nn.conv2d", [values["x"], w], data_layout=data_layout,
                             kernel_layout=kernel_layout, **attrs))]

    return make_module({"x": x_shape, **({} if constant else {"w": weight.shape})}, body)


@pytest.mark.parametrize("tile", [2, 4])
@pytest.mark.parametrize("data_layout, kernel_layout, size, padding", [
    ("NCHW", "OIHW", (9, 7), (1, 1, 1, 1)),  # output 9x7: the last tiles partly outside
    ("NHWC", "HWIO", (8, 8), (1, 1, 1, 1)),
    ("NHWC", "OHWI", (10, 5), (0, 2, 1, 0)),  # uneven padding
    ("NCHW", "OIHW", (3, 3), (0, 0, 0, 0)),  # one output pixel
])
def test_outputs_equal_the_direct_convolution(tile, data_layout, kernel_layout, size, padding):
    channels, filters = 3, 5
    w_oihw = RNG.standard_normal((filters, channels, 3, 3)).astype(np.float32)
    x_nchw = RNG.standard_normal((2, channels, *size)).astype(np.float32)
    weight = np.ascontiguousarray(w_oihw.transpose(["OIHW".index(a) for a in kernel_layout]))
    x = np.ascontiguousarray(x_nchw.transpose(["NCHW".index(a) for a in data_layout]))
    expected = direct_conv(x_nchw, w_oihw, padding).transpose(["NCHW".index(a) for a in data_layout])

    mod = WinogradConv(tile=tile)(conv_module(x.shape, weight, data_layout, kernel_layout, padding=padding))

    names = op_names(mod)
    assert "nn.conv2d" not in names and names.count("nn.batch_matmul") == 5  # V's two, the products, Y's two
    tolerance = 1e-5 if tile == 2 else 1e-4  # F(4, 3)'s transforms scale rounding errors by up to 8^2
    scale = np.abs(expected).max()
    np.testing.assert_allclose(run(mod, {"x": x}), expected, atol=tolerance * scale)
    np.testing.assert_allclose(run(lower(mod, to="loops"), {"x": x}), expected, atol=tolerance * scale)


@pytest.mark.parametrize("attrs, constant, kernel", [
    ({"strides": (2, 2)}, True, 3),
    ({"dilation": (2, 2)}, True, 3),
    ({"groups": 2}, True, 3),
    ({}, False, 3),  # the weight is an argument: its transform is not known when the pass runs
    ({}, True, 1),
    ({}, True, 5),
])
def test_other_convolutions_are_left_alone(attrs, constant, kernel):
    channels_per_group = 4 // attrs.get("groups", 1)
    weight = RNG.standard_normal((6, channels_per_group, kernel, kernel)).astype(np.float32)
    mod = conv_module((1, 4, 12, 12), weight, constant=constant, padding=(1, 1, 1, 1), **attrs)
    before = str(mod)
    assert str(WinogradConv()(mod)) == before


def test_an_unknown_tile_is_a_clear_error():
    weight = RNG.standard_normal((2, 2, 3, 3)).astype(np.float32)
    with pytest.raises(Exception, match="winograd-conv: tile must be 2 or 4 and min_tiles at least 0, got 3 and 0"):
        WinogradConv(tile=3)(conv_module((1, 2, 4, 4), weight))
    with pytest.raises(Exception, match="winograd-conv: tile must be 2 or 4 and min_tiles at least 0, got 4 and -1"):
        WinogradConv(tile=4, min_tiles=-1)(conv_module((1, 2, 4, 4), weight))


@pytest.mark.parametrize("size, tiles, expected_tile", [
    (7, 4, 2),  # F(4) would cut a 7x7 output into 2 x 2 = 4 tiles (of 16 asked for): F(2), 4 x 4 tiles
    (16, 16, 4),  # exactly 16 tiles of 4 x 4: F(4)
])
def test_min_tiles_gives_few_tiles_f2(size, tiles, expected_tile):
    w_oihw = RNG.standard_normal((5, 3, 3, 3)).astype(np.float32)
    x = RNG.standard_normal((1, 3, size, size)).astype(np.float32)
    mod = WinogradConv(tile=4, min_tiles=16)(conv_module(x.shape, w_oihw, padding=(1, 1, 1, 1)))
    products = [op for op in mod.walk() if op.name == "nn.batch_matmul"][2]  # V's two, then the products
    alpha, rows = expected_tile + 2, -(-size // expected_tile)
    assert products.results[0].type.get_shape() == (alpha * alpha, rows * rows, 5)
    expected = direct_conv(x, w_oihw, (1, 1, 1, 1))
    np.testing.assert_allclose(run(mod, {"x": x}), expected, atol=1e-4 * np.abs(expected).max())


def test_an_integer_convolution_is_left_alone():
    # G holds halves (F(2, 3)) and sixths (F(4, 3)): an integer weight has no exact transform.
    weight = np.arange(2 * 2 * 3 * 3, dtype=np.int32).reshape(2, 2, 3, 3)

    def body(values, emit):
        return [emit(nn.make("nn.conv2d", [values["x"], emit(nn.ConstantOp(weight))], padding=(1, 1, 1, 1)))]

    mod = make_module([TensorType(i32, (1, 2, 4, 4))], lambda values, emit: body({"x": values[0]}, emit))
    before = str(mod)
    assert str(WinogradConv()(mod)) == before
