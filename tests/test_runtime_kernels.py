"""The non-convolution nn kernels against hand-computed values and loop references written here."""

import itertools
import math

import numpy as np
import pytest

from xrelay.runtime.reference.nn_kernels import KERNELS as KERNELS_BY_OP_CLASS

KERNELS = {op.name: kernel for op, kernel in KERNELS_BY_OP_CLASS.items()}  # these tests call kernels by op name
RNG = np.random.default_rng(1)


@pytest.mark.parametrize("axis", [1, 3, -1, 0])
@pytest.mark.parametrize("center,scale", [(True, True), (False, True), (True, False), (False, False)])
def test_batch_norm(axis, center, scale):
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    c = x.shape[axis]
    gamma, beta, mean = (RNG.standard_normal(c).astype(np.float32) for _ in range(3))
    var = RNG.uniform(0.5, 2.0, c).astype(np.float32)
    out, out_mean, out_var = KERNELS["nn.batch_norm"](
        dict(axis=axis, epsilon=1e-3, center=center, scale=scale), x, gamma, beta, mean, var
    )
    expected = np.empty(x.shape)
    for idx in itertools.product(*map(range, x.shape)):
        ch = idx[axis]
        v = (float(x[idx]) - float(mean[ch])) / math.sqrt(float(var[ch]) + 1e-3)
        expected[idx] = v * (float(gamma[ch]) if scale else 1.0) + (float(beta[ch]) if center else 0.0)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out_mean, mean)
    np.testing.assert_array_equal(out_var, var)


def test_dense_and_bias_add():
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    w = RNG.standard_normal((4, 5)).astype(np.float32)
    got = KERNELS["nn.dense"]({"units": None}, x, w)
    expected = [[sum(float(x[i, k]) * float(w[j, k]) for k in range(5)) for j in range(4)] for i in range(3)]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="nn.dense"):
        KERNELS["nn.dense"]({}, x, w.T)


@pytest.mark.parametrize("axis", [1, -1, 3, -3, 0])
def test_bias_add_axes(axis):
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    b = RNG.standard_normal(x.shape[axis]).astype(np.float32)
    got = KERNELS["nn.bias_add"](dict(axis=axis), x, b)
    expected = np.empty(x.shape, np.float32)
    for idx in itertools.product(*map(range, x.shape)):
        expected[idx] = x[idx] + b[idx[axis]]
    np.testing.assert_array_equal(got, expected)
    assert KERNELS["nn.bias_add"]({}, x, RNG.standard_normal(3).astype(np.float32)).shape == x.shape  # axis=1


def test_bias_add_wrong_length():
    with pytest.raises(ValueError, match="nn.bias_add"):
        KERNELS["nn.bias_add"](dict(axis=1), np.ones((2, 3)), np.ones(2))


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_stable(axis):
    x = (RNG.standard_normal((3, 4)) * 3 + 1000).astype(np.float32)  # exp(x) overflows unless shifted
    got = KERNELS["nn.softmax"](dict(axis=axis), x)
    expected = np.empty(x.shape)
    lines = x if axis in (-1, 1) else x.T
    out_lines = expected if axis in (-1, 1) else expected.T
    for row, out_row in zip(lines, out_lines):
        m = max(float(v) for v in row)
        e = [math.exp(float(v) - m) for v in row]
        out_row[:] = [v / sum(e) for v in e]
    assert got.dtype == np.float32 and np.all(np.isfinite(got))
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_binary_broadcasting_and_dtypes():
    a = RNG.standard_normal((2, 3, 1)).astype(np.float32)
    b = (RNG.standard_normal((1, 4)) + 3).astype(np.float32)
    ops = {"nn.add": lambda p, q: p + q, "nn.subtract": lambda p, q: p - q,
           "nn.multiply": lambda p, q: p * q, "nn.divide": lambda p, q: p / q}
    for name, fn in ops.items():
        got = KERNELS[name]({}, a, b)
        assert got.shape == (2, 3, 4) and got.dtype == np.float32, name
        for i, j, k in itertools.product(range(2), range(3), range(4)):
            assert got[i, j, k] == pytest.approx(fn(float(a[i, j, 0]), float(b[0, k])), rel=1e-6), name
    with pytest.raises(ValueError, match=r"nn.add.*\(2, 3\).*\(4,\)"):
        KERNELS["nn.add"]({}, np.ones((2, 3), np.float32), np.ones(4, np.float32))


def test_integer_divide_truncates_toward_zero():
    a = np.array([7, -7, 7, -7], np.int32)
    b = np.array([2, 2, -2, -2], np.int32)
    got = KERNELS["nn.divide"]({}, a, b)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [3, -3, -3, 3])


def test_unary_ops():
    x = np.array([[-2.0, 0.0, 3.5]], np.float32)
    np.testing.assert_array_equal(KERNELS["nn.relu"]({}, x), [[0.0, 0.0, 3.5]])
    np.testing.assert_array_equal(KERNELS["nn.negative"]({}, x), [[2.0, -0.0, -3.5]])
    sq = KERNELS["nn.sqrt"]({}, np.array([4.0, 9.0, 2.25], np.float32))
    np.testing.assert_array_equal(sq, [2.0, 3.0, 1.5])
    for name in ("nn.relu", "nn.negative", "nn.sqrt", "nn.sigmoid"):
        assert KERNELS[name]({}, np.abs(x)).dtype == np.float32


def test_sigmoid_against_the_logistic_formula():
    x = np.linspace(-30, 30, 121)
    for dtype, rtol in ((np.float64, 1e-14), (np.float32, 1e-6)):
        got = KERNELS["nn.sigmoid"]({}, x.astype(dtype))
        assert got.dtype == dtype
        np.testing.assert_allclose(got, 1.0 / (1.0 + np.exp(-x)), rtol=rtol, atol=1e-7)
    with np.errstate(over="raise"):  # the extremes saturate without overflowing
        ends = KERNELS["nn.sigmoid"]({}, np.array([-1000.0, -100.0, 0.0, 1000.0], np.float32))
    np.testing.assert_array_equal(ends[[0, 2, 3]], [0.0, 0.5, 1.0])
    np.testing.assert_allclose(ends[1], np.float32(np.exp(-100.0)), rtol=0.05)  # an f32 subnormal, not 0


def test_expand_dims():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert KERNELS["nn.expand_dims"](dict(axis=1, num_newaxis=2), x).shape == (2, 1, 1, 3)
    assert KERNELS["nn.expand_dims"](dict(axis=-1, num_newaxis=1), x).shape == (2, 3, 1)
    assert KERNELS["nn.expand_dims"](dict(axis=0), x).shape == (1, 2, 3)
    assert KERNELS["nn.expand_dims"](dict(axis=-3, num_newaxis=1), x).shape == (1, 2, 3)
    np.testing.assert_array_equal(KERNELS["nn.expand_dims"](dict(axis=2, num_newaxis=1), x)[:, :, 0], x)
    with pytest.raises(ValueError, match="nn.expand_dims"):
        KERNELS["nn.expand_dims"](dict(axis=4, num_newaxis=1), x)


# Relay's own documented examples for reshape's special codes.
RESHAPE_CASES = [
    ((2, 3, 4), (4, 0, 2), (4, 3, 2)),
    ((2, 3, 4), (2, 0, 0), (2, 3, 4)),
    ((2, 3, 4), (6, 1, -1), (6, 1, 4)),
    ((2, 3, 4), (3, -1, 8), (3, 1, 8)),
    ((2, 3, 4), (-1,), (24,)),
    ((2, 3, 4), (-2,), (2, 3, 4)),
    ((2, 3, 4), (2, -2), (2, 3, 4)),
    ((2, 3, 4), (-2, 1, 1), (2, 3, 4, 1, 1)),
    ((2, 3, 4), (-3, 4), (6, 4)),
    ((2, 3, 4, 5), (-3, -3), (6, 20)),
    ((2, 3, 4), (0, -3), (2, 12)),
    ((2, 3, 4), (-3, -2), (6, 4)),
    ((2, 3, 4), (-4, 1, 2, -2), (1, 2, 3, 4)),
    ((2, 3, 4), (2, -4, -1, 3, -2), (2, 1, 3, 4)),
    ((1, 512, 1, 1), (0, -1), (1, 512)),
]


@pytest.mark.parametrize("shape,newshape,expected", RESHAPE_CASES)
def test_reshape_codes(shape, newshape, expected):
    x = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    got = KERNELS["nn.reshape"](dict(newshape=newshape), x)
    assert got.shape == expected
    np.testing.assert_array_equal(got.ravel(), np.arange(math.prod(shape)))  # row-major order kept


@pytest.mark.parametrize("shape,newshape,expected", RESHAPE_CASES)
def test_reshape_codes_reach_the_ir(shape, newshape, expected):
    from xdsl.dialects.builtin import TensorType, f32

    from xrelay.dialects import nn

    attributes = nn.ReshapeOp.attributes_from_python({"newshape": newshape})
    (result,) = nn.ReshapeOp.infer_types([TensorType(f32, shape)], attributes)
    assert tuple(result.get_shape()) == expected


def test_reshape_errors():
    with pytest.raises(ValueError, match="nn.reshape"):
        KERNELS["nn.reshape"](dict(newshape=(5, -1)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="nn.reshape"):
        KERNELS["nn.reshape"](dict(newshape=(-1, -1)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="nn.reshape"):
        KERNELS["nn.reshape"](dict(newshape=(0, 0, 0)), np.ones((2, 3)))


def test_transpose():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    rev = KERNELS["nn.transpose"](dict(axes=None), x)
    assert rev.shape == (4, 3, 2) and rev[3, 1, 0] == x[0, 1, 3]
    got = KERNELS["nn.transpose"](dict(axes=(1, -1, 0)), x)
    assert got.shape == (3, 4, 2)
    for i, j, k in itertools.product(range(2), range(3), range(4)):
        assert got[j, k, i] == x[i, j, k]
    with pytest.raises(ValueError, match="nn.transpose"):
        KERNELS["nn.transpose"](dict(axes=(0, 0, 1)), x)


LAYOUT_GROUPS = [["NCHW", "NHWC", "CHWN", "HWCN"], ["OIHW", "HWIO", "OHWI", "IOHW"]]
LAYOUT_PAIRS = [(s, d) for group in LAYOUT_GROUPS for s in group for d in group]


@pytest.mark.parametrize("src,dst", LAYOUT_PAIRS)
def test_layout_transform_index_mapping(src, dst):
    sizes = dict(zip(src, (2, 3, 4, 5)))  # distinct sizes, so a wrong permutation shows in the shape
    x = RNG.standard_normal(tuple(sizes[ch] for ch in src)).astype(np.float32)
    got = KERNELS["nn.layout_transform"](dict(src_layout=src, dst_layout=dst), x)
    assert got.shape == tuple(sizes[ch] for ch in dst)
    assert got.dtype == np.float32 and got.flags.c_contiguous
    for src_index in itertools.product(*map(range, x.shape)):
        by_letter = dict(zip(src, src_index))
        assert got[tuple(by_letter[ch] for ch in dst)] == x[src_index]
    back = KERNELS["nn.layout_transform"](dict(src_layout=dst, dst_layout=src), got)
    np.testing.assert_array_equal(back, x)


def test_layout_transform_hand_values():
    x = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)  # NCHW: x[0,c,h,w] = 12c + 4h + w
    nhwc = KERNELS["nn.layout_transform"](dict(src_layout="NCHW", dst_layout="NHWC"), x)
    assert nhwc.shape == (1, 3, 4, 2)
    assert nhwc[0, 2, 1, 1] == 12 * 1 + 4 * 2 + 1
    w = np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2)  # OIHW: w[o,i,h,w] = 12o + 4i + 2h + w
    hwio = KERNELS["nn.layout_transform"](dict(src_layout="OIHW", dst_layout="HWIO"), w)
    assert hwio.shape == (2, 2, 3, 2) and hwio[1, 0, 2, 1] == 12 * 1 + 4 * 2 + 2 * 1 + 0
    ohwi = KERNELS["nn.layout_transform"](dict(src_layout="HWIO", dst_layout="OHWI"), hwio)
    assert ohwi.shape == (2, 2, 2, 3) and ohwi[1, 1, 0, 2] == 12 * 1 + 4 * 2 + 2 * 1 + 0


def test_layout_transform_rejects_mismatched_letters():
    with pytest.raises(ValueError, match="NCHW.*OIHW"):
        KERNELS["nn.layout_transform"](dict(src_layout="NCHW", dst_layout="OIHW"), np.ones((1, 2, 3, 4)))
    with pytest.raises(ValueError, match="layout_transform"):
        KERNELS["nn.layout_transform"](dict(src_layout="NCW", dst_layout="NWC"), np.ones((1, 2, 3, 4)))


def test_batch_flatten_and_constant():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2)
    flat = KERNELS["nn.batch_flatten"]({}, x)
    assert flat.shape == (2, 12) and flat[1, 5] == x[1, 1, 0, 1]
    value = np.array([[1.0, 2.0]], np.float32)
    np.testing.assert_array_equal(KERNELS["nn.constant"](dict(value=value)), value)


def test_kernels_do_not_write_operands():
    x = RNG.standard_normal((1, 4, 6, 6)).astype(np.float32)
    x.flags.writeable = False  # constants reach kernels as read-only views
    w = RNG.standard_normal((4, 1, 3, 3)).astype(np.float32)
    w.flags.writeable = False
    KERNELS["nn.conv2d"](dict(padding=(1, 1, 1, 1), groups=4), x, w)
    KERNELS["nn.max_pool2d"](dict(pool_size=(3, 3)), x)
    KERNELS["nn.avg_pool2d"](dict(pool_size=(2, 2), strides=(2, 2)), x)
    KERNELS["nn.relu"]({}, x)
    KERNELS["nn.softmax"]({}, x)
