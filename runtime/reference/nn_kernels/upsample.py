"""Kernels of the upsampling ops (dialects/ops/upsample.py): a transposed convolution as the scatter of
kernel-scaled input pixels, resizing through the per-axis tables of dialects/resize_tables.py."""

from __future__ import annotations

import numpy as np

from xrelay.dialects import nn
from xrelay.dialects.layout import pad4, pair
from xrelay.dialects.resize_tables import axis_tables
from xrelay.runtime.reference.nn_kernels.base import kernel


@kernel(nn.Conv2DTransposeOp)
def conv2d_transpose(attrs: dict, data: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Each kernel tap (kh, kw) adds `data` times that tap's (C, O) weights at rows kh*dh + i*sh and
    columns kw*dw + j*sw of the uncropped output, which `padding` then crops."""
    groups = int(attrs.get("groups", 1))
    (sh, sw), (dh, dw) = pair(attrs.get("strides", (1, 1))), pair(attrs.get("dilation", (1, 1)))
    out_pad = pair(attrs.get("output_padding", (0, 0)))
    top, left, bottom, right = pad4(attrs.get("padding", (0, 0, 0, 0)))
    n, c, h, w = data.shape
    _, per_group, kh, kw = weight.shape
    full_h = (h - 1) * sh + dh * (kh - 1) + 1 + out_pad[0]
    full_w = (w - 1) * sw + dw * (kw - 1) + 1 + out_pad[1]
    full = np.zeros((n, groups, per_group, full_h, full_w), np.result_type(data, weight))
    grouped = data.reshape(n, groups, c // groups, h, w)
    grouped_weight = weight.reshape(groups, c // groups, per_group, kh, kw)
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dh, i * dh + (h - 1) * sh + 1, sh)
            cols = slice(j * dw, j * dw + (w - 1) * sw + 1, sw)
            full[:, :, :, rows, cols] += np.einsum("ngchw,gco->ngohw", grouped, grouped_weight[:, :, :, i, j])
    full = full.reshape(n, groups * per_group, full_h, full_w)
    return np.ascontiguousarray(full[:, :, top:full_h - bottom, left:full_w - right]).astype(data.dtype, copy=False)


@kernel(nn.Resize2DOp)
def resize2d(attrs: dict, data: np.ndarray) -> np.ndarray:
    rows, cols = axis_tables(attrs, data.shape[2:])
    if attrs["method"] == "linear":
        if not np.issubdtype(data.dtype, np.floating):
            raise ValueError(f"nn.resize2d: linear resizing needs a float element type, got {data.dtype}")
        return np.einsum("ih,nchw,jw->ncij", rows, data, cols).astype(data.dtype)
    return np.ascontiguousarray(data[:, :, rows][:, :, :, cols])
