"""Kernels of the window ops (dialects/ops/window.py); the numerics are in runtime/kernels/conv.py and runtime/kernels/pool.py."""

from __future__ import annotations

from xrelay.dialects import nn
from xrelay.runtime.kernels.conv import conv2d
from xrelay.runtime.kernels.pool import avg_pool2d, global_avg_pool2d, global_max_pool2d, max_pool2d
from xrelay.runtime.reference.nn_kernels.base import kernel

kernel(nn.Conv2DOp)(conv2d)
kernel(nn.MaxPool2DOp)(max_pool2d)
kernel(nn.AvgPool2DOp)(avg_pool2d)
kernel(nn.GlobalAvgPool2DOp)(global_avg_pool2d)
kernel(nn.GlobalMaxPool2DOp)(global_max_pool2d)
