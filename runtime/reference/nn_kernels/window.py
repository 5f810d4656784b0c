"""Kernels of the window ops (dialects/ops/window.py); the numerics are in runtime/kernels/conv.py and runtime/kernels/pool.py."""

from __future__ import annotations

from xrelay.dialects import nn
from xrelay.runtime.kernels.conv import conv2d
from xrelay.runtime.reference.nn_kernels.base import kernel
from xrelay.dialects.layout import check_layout
from xrelay.runtime.kernels.pool import avg_pool2d, global_avg_pool2d, max_pool2d

kernel(nn.Conv2DOp)(conv2d)
kernel(nn.MaxPool2DOp)(max_pool2d)
kernel(nn.AvgPool2DOp)(avg_pool2d)
kernel(nn.GlobalAvgPool2DOp)(global_avg_pool2d)


@kernel(nn.GlobalMaxPool2DOp)
def global_max_pool2d(attrs: dict, data):
    """The maximum over H and W, kept as size-1 axes in the op's layout."""
    layout = check_layout(attrs.get("layout") or "NCHW", "NCHW", "nn.global_max_pool2d")
    if data.ndim != 4:
        raise ValueError(f"nn.global_max_pool2d: expected a 4-D input, got shape {data.shape}")
    return data.max(axis=(layout.index("H"), layout.index("W")), keepdims=True)
