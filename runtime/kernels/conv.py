"""``nn.conv2d`` as im2col + one batched BLAS matmul over its groups (the nn interpreter's).

Also the weight transform of the linalg executor's Winograd F(m x m, 3 x 3) (`winograd_weights`; the
convolution itself is the native kernel's) and matmuls split over worker threads running
single-threaded BLAS (`threaded_matmul`; the threads are `runtime/parallel/threads.py`'s).
"""

from __future__ import annotations

import functools

import numpy as np

from xrelay.dialects.layout import check_layout, layout_permutation, pad4, pair, window_output_size
from xrelay.runtime.native.conv_kernels import native_matmul
from xrelay.runtime.parallel.threads import run_split, split_parts


def pad_spatial(x: np.ndarray, pad: tuple[int, int, int, int], value: float = 0.0) -> np.ndarray:
    """Pad axes 2 and 3 (H, W) of a 4-D array by (top, left, bottom, right) with ``value``."""
    return np.pad(x, ((0, 0), (0, 0), pad[0::2], pad[1::2]), constant_values=value)


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

_WINOGRAD_G = {
    # m: G of Lavin & Gray's F(m, 3) (interpolation points 0, ±1 and ±1, ±2, ∞); B^T and A^T, which
    # transform the data and the products, are in runtime/native/conv_kernels.c.
    2: [[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]],
    4: [[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6], [1 / 24, 1 / 12, 1 / 6],
        [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]],
}
WINOGRAD_TILES = tuple(_WINOGRAD_G)
"""Output tile sizes m with a Winograd F(m x m, 3 x 3) kernel (`native.conv_kernels.native_winograd`)."""


def winograd_weights(weight: np.ndarray, m: int) -> np.ndarray:
    """G w G^T of an (F, C, 3, 3) weight for F(m x m, 3 x 3), computed in float64, as (a*a, C, F)
    with a = m + 2; the dtype is the weight's."""
    if weight.ndim != 4 or weight.shape[2:] != (3, 3) or m not in _WINOGRAD_G:
        raise ValueError(f"winograd_weights: needs an (F, C, 3, 3) weight and m in {WINOGRAD_TILES}, "
                         f"got {weight.shape} and m={m}")
    g = np.array(_WINOGRAD_G[m])
    a = m + 2
    u = np.einsum("ai,fcij,bj->abcf", g, weight.astype(np.float64), g)
    return np.ascontiguousarray(u.reshape(a * a, *u.shape[2:]), dtype=weight.dtype)


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
