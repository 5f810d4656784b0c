"""PoolAfterPointwiseConv: an average pool in front of a 1x1 convolution moves behind it when that
is cheaper, and one behind it moves in front when that is; outputs against numpy written here."""

import numpy as np
import pytest

from xrelay import passes, transform
from xrelay.dialects import nn
from xrelay.passes import pool_after_pointwise_conv
from xrelay.runtime import run
from module_builder import make_module


def avg_pool_nchw(x, size, strides, padding, count_include_pad, ceil_mode=False):
    """An average pool over NCHW `x` written here, position by position: zero padding (top, left,
    bottom, right); each window divided by its taps inside the padding (`count_include_pad`) or
    inside the data. ceil_mode's extra windows run past the padding; their taps there count for
    neither."""
    top, left, bottom, right = padding
    h, w = x.shape[2:]
    outs = []
    for extent, k, s in ((h + top + bottom, size[0], strides[0]), (w + left + right, size[1], strides[1])):
        span = extent - k
        outs.append((-(-span // s) if ceil_mode else span // s) + 1)
    out = np.zeros(x.shape[:2] + tuple(outs), np.float64)
    for i in range(outs[0]):
        for j in range(outs[1]):
            total, count = 0.0, 0
            for a in range(size[0]):
                for b in range(size[1]):
                    ph, pw = i * strides[0] + a, j * strides[1] + b  # in padded coordinates
                    inside_data = top <= ph < top + h and left <= pw < left + w
                    inside_pad = ph < h + top + bottom and pw < w + left + right
                    if inside_data:
                        total = total + x[:, :, ph - top, pw - left].astype(np.float64)
                    count += inside_pad if count_include_pad else inside_data
            out[:, :, i, j] = total / max(count, 1)
    return out


def names(mod):
    return [op.name for op in mod.body.block.first_op.body.block.ops if op.name != "nn.constant"]


CASES = [  # layout, pool attributes (stride 1: a pool that shrinks the image stays in front, below)
    ("NCHW", dict(pool_size=(3, 3), strides=(1, 1), padding=(1, 1, 1, 1))),
    ("NHWC", dict(pool_size=(3, 3), strides=(1, 1), padding=(1, 1, 1, 1), count_include_pad=True)),
    ("NCHW", dict(pool_size=(2, 3), strides=(1, 1), padding=(0, 1, 1, 0), ceil_mode=True)),
    ("NHWC", dict(pool_size=(3, 2), strides=(1, 1), padding=(1, 0, 2, 1), count_include_pad=True, ceil_mode=True)),
]


def pooled_then_projected(layout, pool, x_nchw, weight_oihw, kernel_layout="OIHW"):
    order = ["NCHW".index(c) for c in layout]
    kernel_order = ["OIHW".index(c) for c in kernel_layout]

    def body(values, emit):
        pooled = emit(nn.make("nn.avg_pool2d", [values["x"]], layout=layout, **pool))
        weight = emit(nn.ConstantOp(weight_oihw.transpose(kernel_order).copy()))
        return [emit(nn.make("nn.conv2d", [pooled, weight], channels=weight_oihw.shape[0], kernel_size=(1, 1),
                             data_layout=layout, kernel_layout=kernel_layout))]

    return make_module({"x": x_nchw.transpose(order).shape}, body), order


def ops_after_pass(mod) -> list[str]:
    """The op names of `mod` after `PoolAfterPointwiseConv` at opt level 3."""
    with transform.PassContext(opt_level=3):
        return names(passes.PoolAfterPointwiseConv()(mod))


def check_moved(built, layout: str, x: np.ndarray, expected: np.ndarray, order_after: list[str]) -> None:
    """The pass moves the pool of `built` ((module, its input's axis order)) so the ops run in
    `order_after`, the result equals `expected` (NCHW) and a second run moves nothing back."""
    mod, order = built
    with transform.PassContext(opt_level=3):
        moved = passes.PoolAfterPointwiseConv()(mod)
    moved.verify()
    assert names(moved) == order_after
    got = run(moved, {"x": x.transpose(order)})
    assert got.shape == expected.transpose(order).shape
    np.testing.assert_allclose(got.transpose([layout.index(c) for c in "NCHW"]), expected, rtol=1e-5, atol=1e-5)
    with transform.PassContext(opt_level=3):  # a fixed point: the other direction does not move it back
        assert names(passes.PoolAfterPointwiseConv()(moved)) == order_after


@pytest.mark.parametrize("layout, pool", CASES)
def test_the_pool_moves_behind_the_projection(layout, pool):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 6, 7, 8)).astype(np.float32)
    weight = rng.standard_normal((4, 6, 1, 1)).astype(np.float32)
    pooled = avg_pool_nchw(x, pool["pool_size"], pool["strides"], pool["padding"],
                           pool.get("count_include_pad", False), pool.get("ceil_mode", False))
    expected = np.einsum("fc,nchw->nfhw", weight[:, :, 0, 0].astype(np.float64), pooled)
    check_moved(pooled_then_projected(layout, pool, x, weight, "HWIO" if layout == "NHWC" else "OIHW"), layout, x,
                expected, ["nn.conv2d", "nn.avg_pool2d", "func.return"])


def test_a_shrinking_pool_stays_in_front_of_the_projection():
    """A 2x2/2 pool in front of a 6 -> 4 projection: the convolution multiplies over a quarter of the
    pixels as it stands, nothing moves."""
    x = np.ones((1, 6, 8, 8), np.float32)
    mod, _ = pooled_then_projected("NCHW", dict(pool_size=(2, 2), strides=(2, 2)), x, np.ones((4, 6, 1, 1), np.float32))
    assert ops_after_pass(mod) == ["nn.avg_pool2d", "nn.conv2d", "func.return"]


def test_more_output_channels_than_input_keeps_the_order():
    """Pooling after a widening projection would pool more channels: nothing moves."""
    x = np.ones((1, 2, 5, 5), np.float32)
    mod, _ = pooled_then_projected("NCHW", dict(pool_size=(3, 3), padding=(1, 1, 1, 1)), x, np.ones((3, 2, 1, 1), np.float32))
    assert ops_after_pass(mod) == ["nn.avg_pool2d", "nn.conv2d", "func.return"]


@pytest.mark.parametrize("conv", [
    dict(kernel_size=(3, 3), padding=(1, 1, 1, 1)),  # not a 1x1 conv: its windows mix positions
    dict(kernel_size=(1, 1), strides=(2, 2)),  # strided: it reads every other pooled position
    dict(kernel_size=(1, 1), padding=(1, 1, 1, 1)),  # padded: its zero border is not a pooled border
    dict(kernel_size=(1, 1), groups=2),
])
def test_other_convolutions_keep_the_order(conv):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
    kh, kw = conv["kernel_size"]
    weight = rng.standard_normal((2, 4 // conv.get("groups", 1), kh, kw)).astype(np.float32)

    def body(values, emit):
        pooled = emit(nn.make("nn.avg_pool2d", [values["x"]], pool_size=(3, 3), padding=(1, 1, 1, 1)))
        return [emit(nn.make("nn.conv2d", [pooled, emit(nn.ConstantOp(weight))], channels=2, **conv))]

    mod = make_module({"x": x.shape}, body)
    with transform.PassContext(opt_level=3):
        moved = passes.PoolAfterPointwiseConv()(mod)
    assert names(moved) == ["nn.avg_pool2d", "nn.conv2d", "func.return"]


def test_a_pool_read_elsewhere_stays():
    weight = np.ones((2, 4, 1, 1), np.float32)

    def body(values, emit):
        pooled = emit(nn.make("nn.avg_pool2d", [values["x"]], pool_size=(3, 3), padding=(1, 1, 1, 1)))
        return [emit(nn.make("nn.conv2d", [pooled, emit(nn.ConstantOp(weight))], channels=2, kernel_size=(1, 1))),
                pooled]

    mod = make_module({"x": (1, 4, 6, 6)}, body)
    assert ops_after_pass(mod) == ["nn.avg_pool2d", "nn.conv2d", "func.return"]


# Pool after the convolution (DenseNet's transition layers): the pool moves in front when it shrinks
# the image, so that the convolution multiplies over fewer pixels.
SHRINKING = [  # layout, pool attributes
    ("NCHW", dict(pool_size=(2, 2), strides=(2, 2))),
    ("NHWC", dict(pool_size=(2, 2), strides=(2, 2))),
    ("NCHW", dict(pool_size=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1), count_include_pad=True)),
    ("NHWC", dict(pool_size=(2, 3), strides=(3, 2), padding=(0, 1, 1, 0), ceil_mode=True)),
]


def projected_then_pooled(layout, pool, x_nchw, weight_oihw, kernel_layout="OIHW", conv=None, pooled_too=False):
    order = ["NCHW".index(c) for c in layout]
    kernel_order = ["OIHW".index(c) for c in kernel_layout]

    def body(values, emit):
        weight = emit(nn.ConstantOp(weight_oihw.transpose(kernel_order).copy()))
        kh, kw = weight_oihw.shape[2:]
        projected = emit(nn.make("nn.conv2d", [values["x"], weight], channels=weight_oihw.shape[0], kernel_size=(kh, kw),
                                 data_layout=layout, kernel_layout=kernel_layout, **(conv or {})))
        pooled = emit(nn.make("nn.avg_pool2d", [projected], layout=layout, **pool))
        return [pooled, projected] if pooled_too else [pooled]

    return make_module({"x": x_nchw.transpose(order).shape}, body), order


@pytest.mark.parametrize("layout, pool", SHRINKING)
def test_a_shrinking_pool_moves_in_front_of_the_projection(layout, pool):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 6, 9, 8)).astype(np.float32)
    weight = rng.standard_normal((3, 6, 1, 1)).astype(np.float32)
    projected = np.einsum("fc,nchw->nfhw", weight[:, :, 0, 0].astype(np.float64), x.astype(np.float64))
    expected = avg_pool_nchw(projected, pool["pool_size"], pool["strides"], pool.get("padding", (0, 0, 0, 0)),
                             pool.get("count_include_pad", False), pool.get("ceil_mode", False))
    check_moved(projected_then_pooled(layout, pool, x, weight, "HWIO" if layout == "NHWC" else "OIHW"), layout, x,
                expected, ["nn.avg_pool2d", "nn.conv2d", "func.return"])


def test_the_densenet_transition_moves_and_the_flag_keeps_it():
    """256 -> 128 channels then a 2x2/2 pool (DenseNet's first transition, smaller image): pooling first
    is 4x fewer multiply-adds; with POOL_FIRST off the order stays."""
    x = np.random.default_rng(10).standard_normal((1, 256, 8, 8)).astype(np.float32)
    weight = np.random.default_rng(11).standard_normal((128, 256, 1, 1)).astype(np.float32)
    mod, _ = projected_then_pooled("NCHW", dict(pool_size=(2, 2), strides=(2, 2)), x, weight)
    reference = run(mod, {"x": x})
    saved = pool_after_pointwise_conv.POOL_FIRST
    try:
        pool_after_pointwise_conv.POOL_FIRST = False
        with transform.PassContext(opt_level=3):
            assert names(passes.PoolAfterPointwiseConv()(mod)) == ["nn.conv2d", "nn.avg_pool2d", "func.return"]
    finally:
        pool_after_pointwise_conv.POOL_FIRST = saved
    with transform.PassContext(opt_level=3):
        moved = passes.PoolAfterPointwiseConv()(mod)
    assert names(moved) == ["nn.avg_pool2d", "nn.conv2d", "func.return"]
    np.testing.assert_allclose(run(moved, {"x": x}), reference, rtol=1e-4, atol=1e-4)


def test_a_pool_keeping_the_pixels_stays_behind_a_narrowing_projection():
    """A 3x3/1 pool after a 6 -> 3 projection: pooling first pools more channels, nothing moves."""
    x = np.ones((1, 6, 5, 5), np.float32)
    mod, _ = projected_then_pooled("NCHW", dict(pool_size=(3, 3), padding=(1, 1, 1, 1)), x, np.ones((3, 6, 1, 1), np.float32))
    assert ops_after_pass(mod) == ["nn.conv2d", "nn.avg_pool2d", "func.return"]


@pytest.mark.parametrize("kernel, conv", [
    ((3, 3), dict(padding=(1, 1, 1, 1))),  # not a 1x1 conv
    ((1, 1), dict(strides=(2, 2))),  # strided
    ((1, 1), dict(padding=(1, 1, 1, 1))),  # padded
])
def test_other_convolutions_keep_the_pool_behind(kernel, conv):
    x = np.ones((1, 4, 8, 8), np.float32)
    mod, _ = projected_then_pooled("NCHW", dict(pool_size=(2, 2), strides=(2, 2)), x, np.ones((2, 4) + kernel, np.float32),
                                   conv=conv)
    assert ops_after_pass(mod) == ["nn.conv2d", "nn.avg_pool2d", "func.return"]


def test_a_max_pool_or_a_convolution_read_elsewhere_stays():
    x = np.ones((1, 4, 8, 8), np.float32)
    mod, _ = projected_then_pooled("NCHW", dict(pool_size=(2, 2), strides=(2, 2)), x, np.ones((2, 4, 1, 1), np.float32),
                                   pooled_too=True)
    assert ops_after_pass(mod) == ["nn.conv2d", "nn.avg_pool2d", "func.return"]

    def body(values, emit):
        weight = emit(nn.ConstantOp(np.ones((2, 4, 1, 1), np.float32)))
        projected = emit(nn.make("nn.conv2d", [values["x"], weight], channels=2, kernel_size=(1, 1)))
        return [emit(nn.make("nn.max_pool2d", [projected], pool_size=(2, 2), strides=(2, 2)))]

    with transform.PassContext(opt_level=3):
        assert names(passes.PoolAfterPointwiseConv()(make_module({"x": x.shape}, body))) == [
            "nn.conv2d", "nn.max_pool2d", "func.return"]
