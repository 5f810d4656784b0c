"""Kernels of the window ops (dialects/ops/window.py): the convolution is runtime/kernels/conv.py's;
pools one vectorised op per window tap, global pools one numpy reduction."""

from __future__ import annotations

import functools

import numpy as np

from xrelay.dialects import nn
from xrelay.dialects.layout import avg_pool_divisor, check_layout, layout_permutation, pool_geometry
from xrelay.runtime.kernels.conv import conv2d, pad_spatial, tap
from xrelay.runtime.reference.nn_kernels.base import kernel

kernel(nn.Conv2DOp)(conv2d)


def _to_nchw(attrs: dict, data: np.ndarray, what: str) -> tuple[np.ndarray, str]:
    layout = check_layout(attrs.get("layout") or "NCHW", "NCHW", what)
    if data.ndim != 4:
        raise ValueError(f"{what}: expected a 4-D input, got shape {data.shape}")
    return data.transpose(layout_permutation(layout, "NCHW")), layout


def _from_nchw(out: np.ndarray, layout: str, dtype) -> np.ndarray:
    return np.ascontiguousarray(out.transpose(layout_permutation("NCHW", layout)).astype(dtype, copy=False))


def _lowest(dtype: np.dtype):
    return -np.inf if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).min


@kernel(nn.MaxPool2DOp)
def max_pool2d(attrs: dict, data: np.ndarray) -> np.ndarray:
    """Max over each window; padding never wins (it is -inf, or the dtype's minimum for integers)."""
    x, layout = _to_nchw(attrs, data, "nn.max_pool2d")
    window, strides, dil, _, padded, out_hw = pool_geometry(attrs, *x.shape[2:], "nn.max_pool2d")
    xp = pad_spatial(x, padded, _lowest(x.dtype))
    out = None
    for kh in range(window[0]):
        for kw in range(window[1]):
            view = tap(xp, kh, kw, dil, strides, out_hw)
            out = view.copy() if out is None else np.maximum(out, view, out=out)
    return _from_nchw(out, layout, data.dtype)


@kernel(nn.AvgPool2DOp)
def avg_pool2d(attrs: dict, data: np.ndarray) -> np.ndarray:
    """Mean over each window (`avg_pool_divisor` says how many taps count)."""
    x, layout = _to_nchw(attrs, data, "nn.avg_pool2d")
    window, strides, dil, _, padded, out_hw = pool_geometry(attrs, *x.shape[2:], "nn.avg_pool2d")
    acc_dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    xp = pad_spatial(x.astype(acc_dtype, copy=False), padded, 0)
    total = np.zeros(x.shape[:2] + out_hw, dtype=acc_dtype)
    for kh in range(window[0]):
        for kw in range(window[1]):
            total += tap(xp, kh, kw, dil, strides, out_hw)
    divisor = avg_pool_divisor(attrs, *x.shape[2:], "nn.avg_pool2d").astype(acc_dtype)
    return _from_nchw(total / divisor, layout, data.dtype)


def _global_pool(attrs: dict, data: np.ndarray, what: str, reduce) -> np.ndarray:
    """`reduce(data, axis=(H, W), keepdims=True)`, H and W where the op's layout puts them."""
    layout = check_layout(attrs.get("layout") or "NCHW", "NCHW", what)
    if data.ndim != 4:
        raise ValueError(f"{what}: expected a 4-D input, got shape {data.shape}")
    return reduce(data, axis=(layout.index("H"), layout.index("W")), keepdims=True)


@kernel(nn.GlobalAvgPool2DOp)
def global_avg_pool2d(attrs: dict, data: np.ndarray) -> np.ndarray:
    """Mean over H and W, kept as size-1 axes in the op's layout (accumulated in float64)."""
    return _global_pool(attrs, data, "nn.global_avg_pool2d", functools.partial(np.mean, dtype=np.float64)).astype(data.dtype)


@kernel(nn.GlobalMaxPool2DOp)
def global_max_pool2d(attrs: dict, data: np.ndarray) -> np.ndarray:
    """The maximum over H and W, kept as size-1 axes in the op's layout."""
    return _global_pool(attrs, data, "nn.global_max_pool2d", np.max)
