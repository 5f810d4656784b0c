"""Pre-activation ResNet (v2) as TVM's `relay.testing.resnet` builds it, over the `nn` dialect.

Same ops in the same order, the same attributes and parameter names (`%conv0_weight`,
`%stage1_unit1_bn1_gamma`, ...), and the same initial values for a given seed (see `init.py`).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from xrelay.dialects import nn
from xrelay.dialects.layout import DEFAULT_KERNEL_LAYOUT
from xrelay.frontend.builder import GraphBuilder
from xrelay.frontend.init import create_params

_BN_EPS = 2e-5

# num_layers -> units per stage for ImageNet-sized inputs (TVM's table).
IMAGENET_UNITS: dict[int, tuple[int, ...]] = {
    18: (2, 2, 2, 2),
    34: (3, 4, 6, 3),
    50: (3, 4, 6, 3),
    101: (3, 4, 23, 3),
    152: (3, 8, 36, 3),
    200: (3, 24, 36, 3),
    269: (3, 30, 48, 8),
}


def residual_unit(
    b: GraphBuilder,
    data: SSAValue,
    num_filter: int,
    stride: tuple[int, int],
    dim_match: bool,
    name: str,
    bottle_neck: bool,
    data_layout: str,
    kernel_layout: str,
) -> SSAValue:
    """One pre-activation unit: (bn, relu, conv) x 2 (basic) or x 3 (bottleneck) plus the shortcut."""
    axis = data_layout.index("C")
    layouts = {"data_layout": data_layout, "kernel_layout": kernel_layout}
    act1 = b.op(nn.ReluOp, b.batch_norm(data, name + "_bn1", _BN_EPS, axis)).results[0]
    if bottle_neck:
        mid = int(num_filter * 0.25)
        body = b.conv2d(act1, name + "_conv1", mid, (1, 1), stride, (0, 0), **layouts)
        act2 = b.op(nn.ReluOp, b.batch_norm(body.results[0], name + "_bn2", _BN_EPS, axis))
        body = b.conv2d(act2, name + "_conv2", mid, (3, 3), (1, 1), (1, 1), **layouts)
        act3 = b.op(nn.ReluOp, b.batch_norm(body.results[0], name + "_bn3", _BN_EPS, axis))
        body = b.conv2d(act3, name + "_conv3", num_filter, (1, 1), (1, 1), (0, 0), **layouts)
    else:
        body = b.conv2d(act1, name + "_conv1", num_filter, (3, 3), stride, (1, 1), **layouts)
        act2 = b.op(nn.ReluOp, b.batch_norm(body.results[0], name + "_bn2", _BN_EPS, axis))
        body = b.conv2d(act2, name + "_conv2", num_filter, (3, 3), (1, 1), (1, 1), **layouts)
    if dim_match:
        shortcut = data
    else:
        # The projection shortcut reads the first activation, as in TVM (not the unit's input).
        shortcut = b.conv2d(act1, name + "_sc", num_filter, (1, 1), stride, (0, 0), **layouts).results[0]
    return b.op(nn.AddOp, body, shortcut).results[0]


def resnet(
    units: Sequence[int],
    filter_list: Sequence[int],
    num_classes: int,
    data_shape: Sequence[int],
    bottle_neck: bool,
    layout: str = "NCHW",
    dtype: str = "float32",
) -> ModuleOp:
    """The ResNet module for explicit stage sizes (TVM's `resnet()`)."""
    if layout not in DEFAULT_KERNEL_LAYOUT:
        raise ValueError(f"resnet: layout must be 'NCHW' or 'NHWC', got {layout!r}")
    kernel_layout = DEFAULT_KERNEL_LAYOUT[layout]
    layouts = {"data_layout": layout, "kernel_layout": kernel_layout}
    axis = layout.index("C")
    b = GraphBuilder(data_shape, dtype)
    data = b.batch_norm(b.input, "bn_data", _BN_EPS, axis, scale=False)
    height = data_shape[layout.index("H")]
    if height <= 32:  # CIFAR-sized input: 3x3 stem, no pooling
        body = b.conv2d(data, "conv0", filter_list[0], (3, 3), (1, 1), (1, 1), **layouts).results[0]
    else:
        body = b.conv2d(data, "conv0", filter_list[0], (7, 7), (2, 2), (3, 3), **layouts)
        body = b.op(nn.ReluOp, b.batch_norm(body.results[0], "bn0", _BN_EPS, axis))
        body = b.op(
            nn.MaxPool2DOp,
            body,
            pool_size=(3, 3),
            strides=(2, 2),
            padding=(1, 1, 1, 1),
            **({"layout": layout} if layout != "NCHW" else {}),
        ).results[0]
    for i, num_units in enumerate(units):
        stride = (1, 1) if i == 0 else (2, 2)
        for j in range(num_units):
            body = residual_unit(
                b,
                body,
                filter_list[i + 1],
                stride if j == 0 else (1, 1),
                dim_match=j > 0,
                name=f"stage{i + 1}_unit{j + 1}",
                bottle_neck=bottle_neck,
                data_layout=layout,
                kernel_layout=kernel_layout,
            )
    relu1 = b.op(nn.ReluOp, b.batch_norm(body, "bn1", _BN_EPS, axis))
    pool_attrs = {"layout": layout} if layout != "NCHW" else {}
    pool1 = b.op(nn.GlobalAvgPool2DOp, relu1, **pool_attrs)
    flat = b.op(nn.BatchFlattenOp, pool1)
    fc1 = b.dense_add_bias(flat, "fc1", num_classes)
    return b.finish(b.op(nn.SoftmaxOp, fc1))


def _is_positive_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value > 0


def get_net(
    batch_size: int,
    num_classes: int,
    num_layers: int = 50,
    image_shape: Sequence[int] = (3, 224, 224),
    layout: str = "NCHW",
    dtype: str = "float32",
) -> ModuleOp:
    """Choose stages and unit kind from `num_layers` and the image height (TVM's `get_net`)."""
    for name, value in (("batch_size", batch_size), ("num_classes", num_classes)):
        if not _is_positive_int(value):
            raise ValueError(f"resnet: {name} must be a positive int, got {value!r}")
    if isinstance(image_shape, str) or not all(_is_positive_int(d) for d in image_shape):
        raise ValueError(f"resnet: image_shape must be 3 positive ints, got {image_shape!r}")
    image_shape = tuple(int(d) for d in image_shape)
    if len(image_shape) != 3:
        raise ValueError(f"resnet: image_shape must have 3 dims, got {image_shape}")
    height = image_shape[0] if layout == "NHWC" else image_shape[1]
    data_shape = (batch_size, *image_shape)
    if height <= 28:  # CIFAR-style: three stages of (num_layers - 2) / 6 or / 9 units
        if (num_layers - 2) % 9 == 0 and num_layers >= 164:
            per_unit, filter_list, bottle_neck = (num_layers - 2) // 9, [16, 64, 128, 256], True
        elif (num_layers - 2) % 6 == 0 and num_layers < 164:
            per_unit, filter_list, bottle_neck = (num_layers - 2) // 6, [16, 16, 32, 64], False
        else:
            raise ValueError(f"resnet: no configuration for num_layers={num_layers} at height {height}")
        units: Sequence[int] = (per_unit,) * 3
    else:
        if num_layers not in IMAGENET_UNITS:
            raise ValueError(
                f"resnet: num_layers must be one of {sorted(IMAGENET_UNITS)}, got {num_layers!r}"
            )
        units = IMAGENET_UNITS[num_layers]
        bottle_neck = num_layers >= 50
        filter_list = [64, 256, 512, 1024, 2048] if bottle_neck else [64, 64, 128, 256, 512]
    return resnet(units, filter_list, num_classes, data_shape, bottle_neck, layout, dtype)


def get_workload(
    num_layers: int = 18,
    batch_size: int = 1,
    image_shape: Sequence[int] = (3, 224, 224),
    dtype: str = "float32",
    layout: str = "NCHW",
    seed: int = 0,
    num_classes: int = 1000,
) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """`(module, params)`: the ResNet module and its seeded initial parameters by name."""
    module = get_net(batch_size, num_classes, num_layers, image_shape, layout, dtype)
    return module, create_params(module, seed)
