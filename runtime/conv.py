"""``nn.conv2d`` as im2col + one BLAS matmul per group (depthwise: one multiply-add per tap).

Any data layout that is a permutation of NCHW and any kernel layout that is a permutation of OIHW
is accepted; the computation runs channels-first (NCHW data, OIHW weights) because then the
im2col matrix and the matmul result are both contiguous for batch 1, and the layout changes cost
one copy of the input and of the output (a fraction of the KH*KW-times larger im2col copy).
"""

from __future__ import annotations

import numpy as np

from xrelay.runtime.layout import check_layout, layout_permutation, padding_4, pair


def pad_spatial(x: np.ndarray, pad: tuple[int, int, int, int], value: float = 0.0) -> np.ndarray:
    """Pad the last two axes of an (N, C, H, W) array by (top, left, bottom, right) with ``value``."""
    top, left, bottom, right = pad
    if pad == (0, 0, 0, 0):
        return x
    n, c, h, w = x.shape
    out = np.full((n, c, h + top + bottom, w + left + right), value, dtype=x.dtype)
    out[:, :, top : top + h, left : left + w] = x
    return out


def output_size(size: int, pad_total: int, kernel: int, stride: int, dilation: int, ceil: bool = False) -> int:
    """Relay's output extent of a strided, dilated window along one axis."""
    span = size + pad_total - dilation * (kernel - 1) - 1
    return (span + (stride - 1 if ceil else 0)) // stride + 1


def tap(xp: np.ndarray, kh: int, kw: int, dil: tuple[int, int], strides: tuple[int, int], out_hw: tuple[int, int]) -> np.ndarray:
    """The (N, C, OH, OW) view of padded input ``xp`` seen by kernel position (kh, kw)."""
    h0, w0 = kh * dil[0], kw * dil[1]
    return xp[
        :,
        :,
        h0 : h0 + strides[0] * (out_hw[0] - 1) + 1 : strides[0],
        w0 : w0 + strides[1] * (out_hw[1] - 1) + 1 : strides[1],
    ]


def conv2d(attrs: dict, data: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """2-D convolution with Relay's attributes (strides, padding, dilation, groups, layouts)."""
    data_layout = check_layout(attrs.get("data_layout") or "NCHW", "NCHW", "nn.conv2d data")
    kernel_layout = check_layout(attrs.get("kernel_layout") or "OIHW", "OIHW", "nn.conv2d kernel")
    out_layout = check_layout(attrs.get("out_layout") or data_layout, "NCHW", "nn.conv2d out")
    strides = pair(attrs.get("strides", (1, 1)), "nn.conv2d", "strides")
    dil = pair(attrs.get("dilation", (1, 1)), "nn.conv2d", "dilation")
    pad = padding_4(attrs.get("padding", (0, 0, 0, 0)), "nn.conv2d")
    groups = int(attrs.get("groups", 1))

    x = np.ascontiguousarray(data.transpose(layout_permutation(data_layout, "NCHW")))
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
    oh = output_size(h, pad[0] + pad[2], kh_size, strides[0], dil[0])
    ow = output_size(wd, pad[1] + pad[3], kw_size, strides[1], dil[1])
    if oh < 1 or ow < 1:
        raise ValueError(f"nn.conv2d: kernel {w.shape[2:]} does not fit padded input {data.shape}")

    xp = pad_spatial(x, pad)
    og = o // groups
    if cg == 1 and groups > 1:
        out = _depthwise(xp, w, groups, og, dil, strides, (oh, ow))
    else:
        out = _im2col_matmul(xp, w, groups, dil, strides, (oh, ow))
    out = out.astype(data.dtype, copy=False)
    return np.ascontiguousarray(out.transpose(layout_permutation("NCHW", out_layout)))


def _im2col_matmul(xp: np.ndarray, w: np.ndarray, groups: int, dil, strides, out_hw) -> np.ndarray:
    n, c = xp.shape[:2]
    o, cg, kh_size, kw_size = w.shape
    oh, ow = out_hw
    taps = kh_size * kw_size
    if taps == 1:
        cols = tap(xp, 0, 0, dil, strides, out_hw).transpose(1, 0, 2, 3)
    else:
        # cols[c, kh, kw, n, oh, ow] with c = (group, channel in group): contiguous, so the
        # reshape to (groups, cg*KH*KW, N*OH*OW) below is free.
        cols = np.empty((c, kh_size, kw_size, n, oh, ow), dtype=xp.dtype)
        for kh in range(kh_size):
            for kw in range(kw_size):
                cols[:, kh, kw] = tap(xp, kh, kw, dil, strides, out_hw).transpose(1, 0, 2, 3)
    cols = cols.reshape(groups, cg * taps, n * oh * ow)
    wmat = w.reshape(groups, o // groups, cg * taps)
    out = np.matmul(wmat, cols)  # (groups, og, n*oh*ow)
    return out.reshape(o, n, oh, ow).transpose(1, 0, 2, 3)


def _depthwise(xp: np.ndarray, w: np.ndarray, groups: int, og: int, dil, strides, out_hw) -> np.ndarray:
    n = xp.shape[0]
    kh_size, kw_size = w.shape[2:]
    wg = w.reshape(groups, og, kh_size, kw_size)
    out = np.zeros((n, groups, og) + tuple(out_hw), dtype=np.result_type(xp.dtype, w.dtype))
    for kh in range(kh_size):
        for kw in range(kw_size):
            out += tap(xp, kh, kw, dil, strides, out_hw)[:, :, None] * wg[None, :, :, kh, kw, None, None]
    return out.reshape((n, groups * og) + tuple(out_hw))
