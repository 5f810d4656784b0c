"""Kernels of the window ops (dialects/ops/window.py); the numerics are in runtime/conv.py and runtime/pool.py."""

from __future__ import annotations

from xrelay.dialects import nn
from xrelay.runtime.conv import conv2d
from xrelay.runtime.kernels.base import kernel
from xrelay.runtime.pool import avg_pool2d, global_avg_pool2d, max_pool2d

kernel(nn.Conv2DOp)(conv2d)
kernel(nn.MaxPool2DOp)(max_pool2d)
kernel(nn.AvgPool2DOp)(avg_pool2d)
kernel(nn.GlobalAvgPool2DOp)(global_avg_pool2d)
