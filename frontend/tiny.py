"""A tiny conv-bn-relu-pool-dense-softmax network for fast tests (runs in milliseconds).

    data[N,C,H,W] -> conv 3x3 pad 1 (`conv_weight`) -> batch_norm (`bn_*`) -> relu
      -> max_pool 2x2/2 -> batch_flatten -> dense (`fc_weight`) -> bias_add (`fc_bias`) -> softmax
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from xrelay.dialects import nn
from xrelay.frontend.builder import GraphBuilder
from xrelay.frontend.init import create_params


def get_net(
    batch_size: int = 1,
    image_shape: Sequence[int] = (3, 8, 8),
    channels: int = 4,
    num_classes: int = 10,
    dtype: str = "float32",
) -> ModuleOp:
    """The tiny module; H and W must be even."""
    if len(image_shape) != 3 or image_shape[1] % 2 or image_shape[2] % 2:
        raise ValueError(f"tiny: image_shape must be (C, H, W) with even H and W, got {tuple(image_shape)}")
    b = GraphBuilder((batch_size, *image_shape), dtype)
    conv = b.conv2d(b.input, "conv", channels, (3, 3), padding=(1, 1))
    act = b.op(nn.ReluOp, b.batch_norm(conv, "bn"))
    pool = b.op(nn.MaxPool2DOp, act, pool_size=(2, 2), strides=(2, 2))
    flat = b.op(nn.BatchFlattenOp, pool)
    logits = b.dense_add_bias(flat, "fc", num_classes)
    return b.finish(b.op(nn.SoftmaxOp, logits))


def get_workload(seed: int = 0, **net_options) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """`(module, params)` for the tiny network (`get_net`'s options: batch_size, image_shape,
    channels, num_classes, dtype), parameters initialised like ResNet's."""
    module = get_net(**net_options)
    return module, create_params(module, seed)
