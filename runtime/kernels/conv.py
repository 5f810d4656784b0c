"""``nn.conv2d`` as im2col + one batched BLAS matmul over its groups (the nn interpreter's).

Also the linalg executor's Winograd F(m x m, 3 x 3) (`winograd_conv3x3`, native through
`winograd_conv3x3_threaded`) and matmuls split over worker threads running single-threaded BLAS
(`threaded_matmul`; the threads are `runtime/parallel/threads.py`'s).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from xrelay.dialects.layout import check_layout, layout_permutation, pad4, pair, window_output_size
from xrelay.runtime.native.conv_kernels import NativeEpilogue, native_matmul, native_winograd
from xrelay.runtime.parallel.threads import run_split, split_parts



def pad_spatial(x: np.ndarray, pad: tuple[int, int, int, int], value: float = 0.0) -> np.ndarray:
    """Pad axes 2 and 3 (H, W) of a 4-D array by (top, left, bottom, right) with ``value``."""
    top, left, bottom, right = pad
    if pad == (0, 0, 0, 0):
        return x
    out = np.full((*x.shape[:2], x.shape[2] + top + bottom, x.shape[3] + left + right), value, dtype=x.dtype)
    out[:, :, top:top + x.shape[2], left:left + x.shape[3]] = x
    return out


def tap(xp: np.ndarray, kh: int, kw: int, dil: tuple[int, int], strides: tuple[int, int],
        out_hw: tuple[int, int]) -> np.ndarray:
    """The view of padded NCHW input ``xp`` seen by kernel position (kh, kw): spatial extent ``out_hw``."""
    (dh, dw), (sh, sw), (oh, ow) = dil, strides, out_hw
    return xp[:, :, kh * dh:kh * dh + sh * (oh - 1) + 1:sh, kw * dw:kw * dw + sw * (ow - 1) + 1:sw]


def conv2d(attrs: dict, data: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """2-D convolution with Relay's attributes (strides, padding, dilation, groups, layouts): any data
    layout that is a permutation of NCHW and kernel layout that is a permutation of OIHW, computed
    channels-first as im2col and one batched matmul over the groups."""
    data_layout = check_layout(attrs.get("data_layout") or "NCHW", "NCHW", "nn.conv2d data")
    kernel_layout = check_layout(attrs.get("kernel_layout") or "OIHW", "OIHW", "nn.conv2d kernel")
    out_layout = check_layout(attrs.get("out_layout") or data_layout, "NCHW", "nn.conv2d out")
    strides = pair(attrs.get("strides", (1, 1)))
    dil = pair(attrs.get("dilation", (1, 1)))
    pad = pad4(attrs.get("padding", (0, 0, 0, 0)), "nn.conv2d")
    groups = int(attrs.get("groups", 1))
    if data.ndim != 4 or weight.ndim != 4:
        raise ValueError(f"nn.conv2d: data {data.shape} and weight {weight.shape} must both be 4-D")

    x = data.transpose(layout_permutation(data_layout, "NCHW"))
    w = weight.transpose(layout_permutation(kernel_layout, "OIHW"))
    n, c, h, wd = x.shape
    o, cg, kh_size, kw_size = w.shape
    if groups < 1 or c != cg * groups or o % groups:
        raise ValueError(
            f"nn.conv2d: data {data.shape} ({data_layout}) and weight {weight.shape} ({kernel_layout}) "
            f"do not fit groups={groups}"
        )
    if min(pad) < 0 or min(strides) < 1 or min(dil) < 1:
        raise ValueError(f"nn.conv2d: bad padding {pad}, strides {strides} or dilation {dil}")
    out_hw = (
        window_output_size(h, pad[0] + pad[2], kh_size, strides[0], dil[0]),
        window_output_size(wd, pad[1] + pad[3], kw_size, strides[1], dil[1]),
    )
    if min(out_hw) < 1:
        raise ValueError(f"nn.conv2d: kernel {(kh_size, kw_size)} does not fit padded input {data.shape}")

    xp = pad_spatial(x, pad)
    # Patches (C, KH, KW, N, OH, OW): rows (group, channel in group, kh, kw), so splitting off the group is free.
    cols = np.empty((c, kh_size, kw_size, n, *out_hw), dtype=xp.dtype)
    for kh in range(kh_size):
        for kw in range(kw_size):
            cols[:, kh, kw] = tap(xp, kh, kw, dil, strides, out_hw).transpose(1, 0, 2, 3)
    cols = cols.reshape(groups, cg * kh_size * kw_size, -1)
    out = np.matmul(w.reshape(groups, o // groups, -1), cols).reshape(o, n, *out_hw)  # CNHW
    out = out.astype(data.dtype, copy=False)
    return np.ascontiguousarray(out.transpose(layout_permutation("CNHW", out_layout)))


# ---------------------------------------------------------------- Winograd F(m x m, 3 x 3)

_WINOGRAD_POINTS = {
    # m: (B^T, G, A^T) of Lavin & Gray's F(m, 3) (interpolation points 0, ±1 and ±1, ±2, ∞).
    2: ([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]],
        [[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]],
        [[1, 1, 1, 0], [0, 1, -1, -1]]),
    4: ([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0], [0, -2, -1, 2, 1, 0],
         [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]],
        [[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6], [1 / 24, 1 / 12, 1 / 6],
         [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]],
        [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]]),
}
WINOGRAD_TILES = tuple(_WINOGRAD_POINTS)
"""Output tile sizes m with a Winograd F(m x m, 3 x 3) kernel."""


def winograd_weights(weight: np.ndarray, m: int) -> np.ndarray:
    """G w G^T of an (F, C, 3, 3) weight for F(m x m, 3 x 3), computed in float64, as (a*a, C, F)
    with a = m + 2; the dtype is the weight's."""
    if weight.ndim != 4 or weight.shape[2:] != (3, 3) or m not in _WINOGRAD_POINTS:
        raise ValueError(f"winograd_weights: needs an (F, C, 3, 3) weight and m in {WINOGRAD_TILES}, "
                         f"got {weight.shape} and m={m}")
    g = np.array(_WINOGRAD_POINTS[m][1])
    a = m + 2
    u = np.einsum("ai,fcij,bj->abcf", g, weight.astype(np.float64), g)
    return np.ascontiguousarray(u.reshape(a * a, *u.shape[2:]), dtype=weight.dtype)


def _channels_innermost(array: np.ndarray) -> bool:
    """Whether axis 1 (C) of an (N, C, H, W) view has the smallest stride (NHWC memory)."""
    return array.strides[1] <= min(array.strides[2:])


def winograd_conv3x3(x: np.ndarray, u: np.ndarray, m: int, out: np.ndarray, accumulate: bool = False) -> None:
    """Stride-1, undilated 3x3 convolution by Winograd F(m x m, 3 x 3), written (or with ``accumulate``
    added) into ``out``: ``x`` the padded (N, C, H, W) input of any strides, ``out`` an (N, F, OH, OW)
    view, ``u`` ``winograd_weights(w, m)``. Channels-last (a, a)-tiles are gathered into one matrix and
    transformed with BLAS (B^T on tile rows, then columns), multiplied point by point as a batched
    (T, C) @ (C, F) matmul, and transformed back (A^T likewise); outputs not a multiple of m read a
    zero-extended copy of ``x``."""
    bt, at = _winograd_transforms(m, x.dtype)
    a = m + 2
    n, c, h, w = x.shape
    _, f, oh, ow = out.shape
    th, tw = -(-oh // m), -(-ow // m)
    if h < oh + 2 or w < ow + 2 or u.shape != (a * a, c, f):
        raise ValueError(f"winograd_conv3x3: input {x.shape}, transformed weight {u.shape} and output "
                         f"{out.shape} do not fit F({m}x{m}, 3x3)")
    if th * m + 2 > h or tw * m + 2 > w or not _channels_innermost(x):
        # NHWC memory, zero-extended to whole tiles where needed.
        grown = np.zeros((n, max(h, th * m + 2), max(w, tw * m + 2), c), x.dtype)
        grown[:, :h, :w] = x.transpose(0, 2, 3, 1)
        x = grown.transpose(0, 3, 1, 2)
    sn, sc, sh, sw = x.strides
    tiles = np.lib.stride_tricks.as_strided(x, (a, a, n, th, tw, c), (sh, sw, sn, sh * m, sw * m, sc))
    # B^T d B as two passes of B^T (rows, then columns): a third of kron(B^T, B^T)'s flops.
    d = np.ascontiguousarray(tiles).reshape(a, -1)
    v = np.matmul(bt, np.matmul(bt, d).reshape(a, a, -1)).reshape(a * a, -1, c)
    product = np.matmul(v, u)  # (a*a, T, F)
    y = np.matmul(at, np.matmul(at, product.reshape(a, -1)).reshape(m, a, -1))  # A^T M A, likewise
    # y is (m, m, N, th, tw, F): tile rows and columns back in place, channels last.
    full = y.reshape(m, m, n, th, tw, f).transpose(2, 3, 0, 4, 1, 5).reshape(n, th * m, tw * m, f)
    full = full[:, :oh, :ow]
    target = out.transpose(0, 2, 3, 1)
    if accumulate:
        np.add(target, full, out=target, casting="unsafe")
    else:
        np.copyto(target, full, casting="unsafe")


@functools.cache
def _winograd_transforms(m: int, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """B^T and A^T of F(m x m, 3 x 3) in `dtype`, made once (read-only)."""
    bt, _, at = (np.array(t, dtype=dtype) for t in _WINOGRAD_POINTS[m])
    bt.flags.writeable = at.flags.writeable = False
    return bt, at


def winograd_conv3x3_threaded(x: np.ndarray, u: np.ndarray, m: int, out: np.ndarray, accumulate: bool = False,
                              threads: int | None = None, epilogue: Callable[[int, int], None] | None = None,
                              by_filters: bool | None = None) -> None:
    """`winograd_conv3x3` as one call to the native kernel (`runtime/native/conv_kernels.py`) on
    `threads` OpenMP threads (its kernel's `split` parts; None: one), its epilogue a `NativeEpilogue`
    applied to each value before it is stored, cut by filters or by rows of tiles as `by_filters` says (None:
    as `winograd_splits_filters` does); without the native kernel, `winograd_conv3x3` whole on
    the calling thread, then `epilogue(0, OH)` if given."""
    threads = split_parts(threads)
    if (epilogue is None or isinstance(epilogue, NativeEpilogue)) and native_winograd(
            x, u, m, out, accumulate, threads, epilogue, by_filters):
        return
    winograd_conv3x3(x, u, m, out, accumulate)
    if epilogue is not None:
        epilogue(0, out.shape[2])


def threaded_matmul(lhs: np.ndarray, rhs: np.ndarray, out: np.ndarray | None = None,
                    threads: int | None = None, along: int | None = None) -> np.ndarray:
    """`np.matmul(lhs, rhs, out=out)` for (B, M, K) @ (B, K, N), split over `threads` worker threads running
    single-threaded BLAS along axis `along` of the (B, M, N) product (by default the larger operand's rows
    or columns), as the caller's `threads` (a kernel's `split` parts; None: whole) say."""
    threads = split_parts(threads)
    m = lhs.shape[1]
    b, n = out.shape[0] if out is not None else max(lhs.shape[0], rhs.shape[0]), rhs.shape[-1]
    if out is None:
        out = np.empty((b, m, n), np.result_type(lhs, rhs))
    if along is None:
        along = 1 if m >= n else 2
    extent = (b, m, n)[along]
    if threads == 1 or extent < 2 * threads:
        np.matmul(lhs, rhs, out=out)
        return out
    if native_matmul(lhs, rhs, out, along, threads):  # the parts claimed in C: no GIL hand-offs
        return out
    size = -(-extent // threads)
    cut = lambda a, r: a[(slice(None),) * along + (slice(r, r + size),)]  # noqa: E731
    cut_lhs = along == 1 or (along == 0 and lhs.shape[0] > 1)
    cut_rhs = along == 2 or (along == 0 and rhs.shape[0] > 1)
    calls = [functools.partial(np.matmul, cut(lhs, r) if cut_lhs else lhs, cut(rhs, r) if cut_rhs else rhs,
                               out=cut(out, r)) for r in range(0, extent, size)]
    run_split(threads, calls)
    return out
