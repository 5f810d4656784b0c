"""nn.conv2d and the pooling kernels against naive loop references written here."""

import itertools

import numpy as np
import pytest

from xrelay.runtime.reference.nn_kernels import KERNELS as KERNELS_BY_OP_CLASS

KERNELS = {op.name: kernel for op, kernel in KERNELS_BY_OP_CLASS.items()}  # these tests call kernels by op name
RNG = np.random.default_rng(0)

# Axes taking a canonical array to another layout, written out by hand (not via the runtime's helper).
NCHW_TO = {"NCHW": (0, 1, 2, 3), "NHWC": (0, 2, 3, 1)}
OIHW_TO = {"OIHW": (0, 1, 2, 3), "HWIO": (2, 3, 1, 0), "OHWI": (0, 2, 3, 1)}


def naive_conv(x, w, strides, pad, dil, groups):
    """NCHW x OIHW convolution by direct summation; out-of-range taps are zero padding."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    top, left, bottom, right = pad
    oh = (h + top + bottom - dil[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + left + right - dil[1] * (kw - 1) - 1) // strides[1] + 1
    og = o // groups
    out = np.zeros((n, o, oh, ow), dtype=np.float64)
    for b, oc, i, j in itertools.product(range(n), range(o), range(oh), range(ow)):
        g = oc // og
        acc = 0.0
        for p, q in itertools.product(range(kh), range(kw)):
            y = i * strides[0] - top + p * dil[0]
            xx = j * strides[1] - left + q * dil[1]
            if 0 <= y < h and 0 <= xx < wd:
                acc += float(np.dot(x[b, g * cg : (g + 1) * cg, y, xx].astype(np.float64), w[oc, :, p, q]))
        out[b, oc, i, j] = acc
    return out


CONV_CASES = [
    # (N, C, H, W), (O, KH, KW), strides, padding (t, l, b, r), dilation, groups
    ((2, 4, 7, 6), (6, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
    ((1, 3, 9, 8), (5, 3, 2), (2, 3), (0, 0, 0, 0), (1, 1), 1),
    ((1, 4, 10, 9), (4, 3, 3), (2, 2), (2, 1, 0, 3), (1, 1), 1),  # asymmetric padding
    ((1, 2, 11, 10), (3, 3, 3), (1, 2), (1, 2, 1, 2), (2, 3), 1),  # dilation
    ((2, 6, 6, 7), (4, 3, 1), (1, 1), (1, 0, 1, 0), (1, 1), 2),  # groups
    ((1, 4, 8, 8), (4, 3, 3), (2, 1), (1, 1, 2, 2), (1, 1), 4),  # depthwise
    ((1, 3, 7, 7), (6, 3, 3), (1, 1), (1, 1, 1, 1), (2, 1), 3),  # depthwise, multiplier 2
    ((1, 5, 6, 6), (7, 1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1),  # 1x1 strided
]


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("data_layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("kernel_layout", ["OIHW", "HWIO", "OHWI"])
def test_conv2d_matches_naive(case, data_layout, kernel_layout):
    dshape, (o, kh, kw), strides, pad, dil, groups = case
    x = RNG.standard_normal(dshape).astype(np.float32)
    w = RNG.standard_normal((o, dshape[1] // groups, kh, kw)).astype(np.float32)
    expected = naive_conv(x, w, strides, pad, dil, groups)
    attrs = dict(
        strides=strides, padding=pad, dilation=dil, groups=groups,
        data_layout=data_layout, kernel_layout=kernel_layout, out_layout="",
    )
    got = KERNELS["nn.conv2d"](attrs, x.transpose(NCHW_TO[data_layout]), w.transpose(OIHW_TO[kernel_layout]))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected.transpose(NCHW_TO[data_layout]), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("data_layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("kernel_layout", ["OIHW", "HWIO"])
@pytest.mark.parametrize("groups", [1, 2, 4])
def test_conv2d_out_layout_differs_from_data_layout(data_layout, kernel_layout, groups):
    x = RNG.standard_normal((1, 4, 5, 6)).astype(np.float32)
    w = RNG.standard_normal((4, 4 // groups, 3, 2)).astype(np.float32)
    out_layout = "NHWC" if data_layout == "NCHW" else "NCHW"
    attrs = dict(padding=(1, 0, 1, 1), groups=groups, data_layout=data_layout, kernel_layout=kernel_layout,
                 out_layout=out_layout)
    got = KERNELS["nn.conv2d"](attrs, x.transpose(NCHW_TO[data_layout]), w.transpose(OIHW_TO[kernel_layout]))
    expected = naive_conv(x, w, (1, 1), (1, 0, 1, 1), (1, 1), groups).transpose(NCHW_TO[out_layout])
    assert got.flags.c_contiguous
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_conv2d_defaults_and_hand_value():
    # All-ones 1x1x3x3 input, 1x1x2x2 kernel of ones: every output is 4.
    got = KERNELS["nn.conv2d"]({}, np.ones((1, 1, 3, 3), np.float32), np.ones((1, 1, 2, 2), np.float32))
    np.testing.assert_array_equal(got, np.full((1, 1, 2, 2), 4.0, np.float32))


def test_conv2d_bad_groups_names_shapes():
    with pytest.raises(ValueError, match=r"nn.conv2d.*\(1, 4, 5, 5\).*groups=3"):
        KERNELS["nn.conv2d"](dict(groups=3), np.ones((1, 4, 5, 5), np.float32), np.ones((3, 1, 3, 3), np.float32))


def pool_out(size, pad_total, k, s, d, ceil):
    span = size + pad_total - d * (k - 1) - 1
    return -(-span // s) + 1 if ceil else span // s + 1


def naive_pool(x, kind, k, s, d, pad, ceil, count_include_pad=False):
    """NCHW pooling by direct loops: max ignores out-of-range taps; avg divides as TVM does."""
    n, c, h, w = x.shape
    top, left, bottom, right = pad
    oh, ow = pool_out(h, top + bottom, k[0], s[0], d[0], ceil), pool_out(w, left + right, k[1], s[1], d[1], ceil)
    out = np.zeros((n, c, oh, ow))
    for b, ch, i, j in itertools.product(range(n), range(c), range(oh), range(ow)):
        vals, taps_in_pad = [], 0
        for p, q in itertools.product(range(k[0]), range(k[1])):
            y, xx = i * s[0] - top + p * d[0], j * s[1] - left + q * d[1]
            if -top <= y < h + bottom and -left <= xx < w + right:
                taps_in_pad += 1
            if 0 <= y < h and 0 <= xx < w:
                vals.append(float(x[b, ch, y, xx]))
        if kind == "max":
            out[b, ch, i, j] = max(vals)
        else:
            out[b, ch, i, j] = sum(vals) / (taps_in_pad if count_include_pad else len(vals))
    return out


POOL_CASES = [
    # (N, C, H, W), pool_size, strides, dilation, padding, ceil_mode
    ((1, 2, 6, 6), (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), False),
    ((2, 3, 7, 7), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), False),
    ((1, 2, 7, 8), (3, 2), (2, 2), (1, 1), (1, 1, 1, 0), True),
    ((1, 1, 9, 9), (3, 3), (3, 2), (2, 1), (0, 1, 2, 0), True),
    ((1, 2, 5, 5), (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), True),
]


@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_max_pool2d_matches_naive(case, layout):
    dshape, k, s, d, pad, ceil = case
    x = RNG.standard_normal(dshape).astype(np.float32) - 5.0  # all negative: zero padding would show
    attrs = dict(pool_size=k, strides=s, dilation=d, padding=pad, layout=layout, ceil_mode=ceil)
    got = KERNELS["nn.max_pool2d"](attrs, x.transpose(NCHW_TO[layout]))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, naive_pool(x, "max", k, s, d, pad, ceil).transpose(NCHW_TO[layout]), rtol=1e-6)


@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("count_include_pad", [False, True])
def test_avg_pool2d_matches_naive(case, layout, count_include_pad):
    dshape, k, s, d, pad, ceil = case
    x = RNG.standard_normal(dshape).astype(np.float32)
    attrs = dict(pool_size=k, strides=s, dilation=d, padding=pad, layout=layout, ceil_mode=ceil,
                 count_include_pad=count_include_pad)
    got = KERNELS["nn.avg_pool2d"](attrs, x.transpose(NCHW_TO[layout]))
    assert got.dtype == np.float32
    expected = naive_pool(x, "avg", k, s, d, pad, ceil, count_include_pad)
    np.testing.assert_allclose(got, expected.transpose(NCHW_TO[layout]), rtol=1e-5, atol=1e-6)


def test_pools_ceil_mode_hand_values():
    x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    attrs = dict(pool_size=(2, 2), strides=(2, 2), ceil_mode=True)
    np.testing.assert_array_equal(
        KERNELS["nn.max_pool2d"](attrs, x)[0, 0], [[6, 8, 9], [16, 18, 19], [21, 23, 24]]
    )
    np.testing.assert_array_equal(
        KERNELS["nn.avg_pool2d"](attrs, x)[0, 0], [[3, 5, 6.5], [13, 15, 16.5], [20.5, 22.5, 24]]
    )
    # Padding 1 everywhere, count_include_pad: the corner window holds x[0,0] and three pads.
    padded = dict(pool_size=(2, 2), strides=(2, 2), padding=(1, 1, 1, 1), count_include_pad=True)
    assert KERNELS["nn.avg_pool2d"](padded, x)[0, 0, 0, 0] == 0.0 / 4
    assert KERNELS["nn.avg_pool2d"](padded, x + 4)[0, 0, 0, 0] == 4.0 / 4
    assert KERNELS["nn.avg_pool2d"](dict(padded, count_include_pad=False), x + 4)[0, 0, 0, 0] == 4.0


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_global_avg_pool2d(layout):
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    xs = x.transpose(NCHW_TO[layout])
    got = KERNELS["nn.global_avg_pool2d"](dict(layout=layout), xs)
    expected = np.zeros((2, 3, 1, 1))
    for b, c in itertools.product(range(2), range(3)):
        expected[b, c, 0, 0] = sum(float(v) for v in x[b, c].ravel()) / 20
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected.transpose(NCHW_TO[layout]), rtol=1e-6)


# ---------------------------------------------------------------- Winograd F(m x m, 3 x 3)


def test_winograd_weights_are_g_w_gt():
    from xrelay.runtime.kernels.conv import winograd_weights

    # F(2x2, 3x3): G = [[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]]; a kernel of ones gives
    # G 1 G^T = (G 1)(G 1)^T with G 1 = [1, 1.5, 0.5, 1]; laid out (points, C, F).
    w = np.ones((2, 3, 3, 3), np.float32)
    w[1] *= 2
    u = winograd_weights(w, 2)
    g1 = np.array([1, 1.5, 0.5, 1])
    assert u.shape == (16, 3, 2) and u.dtype == np.float32
    np.testing.assert_array_equal(u[:, 0, 0], np.outer(g1, g1).ravel())
    np.testing.assert_array_equal(u[:, 2, 1], 2 * np.outer(g1, g1).ravel())
    with pytest.raises(ValueError, match=r"winograd_weights.*\(2, 3, 5, 5\)"):
        winograd_weights(np.ones((2, 3, 5, 5), np.float32), 2)


def test_winograd_tile_choice():
    from xrelay.passes.kernels.choose_conv_algorithm import winograd_tile

    assert winograd_tile(1, 64, 64, 56, 56) == 4  # 196 tiles of 4x4
    assert winograd_tile(1, 128, 128, 28, 28) == 4  # 49 tiles
    assert winograd_tile(1, 256, 256, 14, 14) == 2  # 14 is not a multiple of 4
    assert winograd_tile(1, 512, 512, 7, 7) is None  # odd: im2col
    assert winograd_tile(1, 3, 64, 56, 56) is None  # too few channels
    assert winograd_tile(1, 64, 64, 8, 8) is None  # 16 tiles of 2x2 are too few
    assert winograd_tile(10, 64, 64, 8, 8) == 4  # a batch makes them enough


@pytest.mark.parametrize("shape", [(1, 300, 200, 100), (2, 257, 130, 129), (1, 49, 700, 300), (1, 3, 4, 5)])
def test_threaded_matmul_matches_numpy(shape):
    from xrelay.runtime.kernels.conv import threaded_matmul

    b, m, k, n = shape
    lhs = RNG.standard_normal((b, m, k)).astype(np.float32)
    rhs = RNG.standard_normal((b, k, n)).astype(np.float32)
    expected = np.einsum("bmk,bkn->bmn", lhs.astype(np.float64), rhs.astype(np.float64))
    np.testing.assert_allclose(threaded_matmul(lhs, rhs, threads=2), expected, rtol=1e-4, atol=1e-3)
    out = np.empty((b, m, n), np.float32)
    assert threaded_matmul(lhs, rhs, out=out, threads=3) is out
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("along", [0, 1, 2])
@pytest.mark.parametrize("native", [True, False])
def test_threaded_matmul_cuts_the_axis_it_is_given(along, native, monkeypatch, blas_workers):
    """Cut along the batch, the rows or the columns, by the compiled kernel's parts (C threads) or by
    Python worker threads, with transposed and broadcast operands: numpy's product either way."""
    from xrelay.runtime.kernels import conv
    from xrelay.runtime.native import conv_kernels

    taken = []
    monkeypatch.setattr(conv, "native_matmul", lambda *args: native and conv_kernels.native_matmul(*args)
                        and not taken.append(args[3]))
    blas_workers(2)
    draw = lambda *shape: RNG.standard_normal(shape).astype(np.float32)  # noqa: E731
    for lhs, rhs in ((draw(4, 40, 24), draw(4, 24, 30)),
                     (draw(4, 24, 40).transpose(0, 2, 1), draw(4, 30, 24).transpose(0, 2, 1)),
                     (np.broadcast_to(draw(1, 40, 24), (4, 40, 24)), draw(4, 24, 30))):
        expected = np.einsum("bmk,bkn->bmn", lhs.astype(np.float64), rhs.astype(np.float64))
        np.testing.assert_allclose(conv.threaded_matmul(lhs, rhs, threads=2, along=along), expected, rtol=1e-4, atol=1e-4)
    assert taken == ([along] * 3 if native and conv_kernels.available() else [])
    # a matrix-vector product stays numpy's (its gemv: sgemm would pack the whole matrix)
    assert not conv_kernels.native_matmul(draw(4, 1, 24), draw(4, 24, 30), np.empty((4, 1, 30), np.float32), along, 2)


def test_split_blas_threads_restores_the_blas_thread_count(blas_workers):
    from xrelay.runtime.parallel.threads import blas_threads, split_blas_threads

    blas_workers(2)
    with split_blas_threads() as threads:
        assert threads == 2 and blas_threads() == 1
        with split_blas_threads() as inner:  # nested: still splits over the outer count
            assert inner == 2 and blas_threads() == 1
        assert blas_threads() == 1
    assert blas_threads() == 2


@pytest.mark.parametrize("threads, rows", [(2, 9), (3, 10), (2, 3)])
def test_run_parts_covers_every_row_once_the_first_part_here(threads, rows):
    import threading

    from xrelay.runtime.parallel.threads import run_parts

    seen = []
    run_parts(lambda r0, r1: seen.append((r0, r1, threading.get_ident())), rows, threads=threads)
    assert sorted(r for r0, r1, _ in seen for r in range(r0, r1)) == list(range(rows))
    assert len(seen) == (threads if rows >= 2 * threads else 1)
    assert (len({ident for *_, ident in seen}) > 1) == (len(seen) > 1)  # the other parts on worker threads
    assert (0, -(-rows // threads) if len(seen) > 1 else rows, threading.get_ident()) in seen  # first part here


def test_split_failure_on_a_worker_is_raised_here_and_the_workers_keep_serving():
    from xrelay.runtime.parallel.threads import run_parts

    def part(r0, r1):
        if r0 > 0:
            raise ValueError(f"part {r0}:{r1} failed")

    with pytest.raises(ValueError, match="part 4:8 failed"):
        run_parts(part, 8, threads=2)
    done = []
    run_parts(lambda r0, r1: done.append((r0, r1)), 8, threads=2)
    assert sorted(done) == [(0, 4), (4, 8)]


def test_split_inside_a_split_runs_on_the_calling_thread():
    """A part that splits again (or a second thread splitting meanwhile) finds the workers busy and
    runs its parts itself, instead of waiting for workers that wait for it."""
    import threading

    from xrelay.runtime.parallel.threads import run_parts

    inner = []

    def outer(r0, r1):
        run_parts(lambda a, b: inner.append((r0, a, b, threading.get_ident())), 4, threads=2)

    run_parts(outer, 4, threads=2)
    assert sorted((r0, a, b) for r0, a, b, _ in inner) == [(0, 0, 2), (0, 2, 4), (2, 0, 2), (2, 2, 4)]
    by_outer = {}
    for r0, _, _, ident in inner:
        by_outer.setdefault(r0, set()).add(ident)
    assert all(len(idents) == 1 for idents in by_outer.values())  # the inner split did not leave its thread
