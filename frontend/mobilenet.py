"""Depthwise-separable networks over the `nn` dialect: MobileNet v2 and an EfficientNet-B0-like net.

    mobilenet_v2:    stem conv 3x3/2 -> inverted residuals (1x1 expand, ReLU6, 3x3 depthwise,
                     ReLU6, 1x1 project, + input when the shape allows) -> 1x1 conv -> pool -> dense
    efficientnet_b0: the same skeleton with SiLU (x * sigmoid(x)) for ReLU6, 3x3 and 5x5 depthwise
                     kernels and a squeeze-excitation after each depthwise convolution (global
                     average pool, 1x1 reduce + bias, SiLU, 1x1 expand + bias, sigmoid, multiply)

Every convolution is followed by `nn.batch_norm` (folded into it by xrelay.build). NCHW/OIHW;
weights named as ResNet's (`init.py` rules, depthwise kernels `*_depthwise_weight`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from xrelay.dialects import nn
from xrelay.frontend.builder import GraphBuilder, shape_of
from xrelay.frontend.init import create_params

_BN_EPS = 1e-3

# (expansion t, output channels c, repeats n, first stride s): the MobileNet v2 paper's table 2.
MOBILENET_V2_STAGES = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                       (6, 160, 3, 2), (6, 320, 1, 1))
# (expansion, kernel, first stride, output channels, repeats): EfficientNet-B0's stages.
EFFICIENTNET_B0_STAGES = ((1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
                          (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1))


def scaled_channels(channels: int, width: float, divisor: int = 8) -> int:
    """`channels * width` rounded to a multiple of `divisor`, never below 90% of it (the papers' rule)."""
    rounded = max(divisor, int(channels * width + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * channels * width else rounded


def _relu6(b: GraphBuilder, x: SSAValue) -> SSAValue:
    return b.op(nn.ClipOp, x, a_min=0.0, a_max=6.0).results[0]


def _silu(b: GraphBuilder, x: SSAValue) -> SSAValue:
    return b.op(nn.MultiplyOp, x, b.op(nn.SigmoidOp, x)).results[0]


def _conv_bn(b: GraphBuilder, x: SSAValue, name: str, channels: int, kernel: int = 1, stride: int = 1,
             depthwise: bool = False) -> SSAValue:
    groups = shape_of(x)[1] if depthwise else 1
    conv = b.conv2d(x, name + ("_depthwise" if depthwise else ""), channels, (kernel, kernel),
                    (stride, stride), (kernel // 2, kernel // 2), groups=groups)
    return b.batch_norm(conv, name + "_bn", _BN_EPS)


def _squeeze_excitation(b: GraphBuilder, x: SSAValue, name: str, reduced: int) -> SSAValue:
    channels = shape_of(x)[1]
    pooled = b.op(nn.GlobalAvgPool2DOp, x)
    squeeze = b.conv2d(pooled, name + "_reduce", reduced, (1, 1))
    squeeze = _silu(b, b.op(nn.BiasAddOp, squeeze, b.param(name + "_reduce_bias", [reduced])).results[0])
    excite = b.conv2d(squeeze, name + "_expand", channels, (1, 1))
    excite = b.op(nn.BiasAddOp, excite, b.param(name + "_expand_bias", [channels]))
    return b.op(nn.MultiplyOp, x, b.op(nn.SigmoidOp, excite)).results[0]


def _head(b: GraphBuilder, x: SSAValue, channels: int, num_classes: int, act) -> ModuleOp:
    x = act(b, _conv_bn(b, x, "head_conv", channels))
    flat = b.op(nn.BatchFlattenOp, b.op(nn.GlobalAvgPool2DOp, x))
    return b.finish(b.op(nn.SoftmaxOp, b.dense_add_bias(flat, "fc", num_classes)))


def _inverted_residuals(b: GraphBuilder, x, stages, width: float, activation, squeeze: bool):
    """The inverted-residual blocks of `stages` ((expansion, kernel, first stride, channels, repeats)
    each) after `x`: 1x1 expand + `activation` (unless the expansion is 1), depthwise k x k +
    `activation`, squeeze-excitation if `squeeze`, 1x1 project, the input added where shapes allow."""
    for i, (expansion, kernel, first_stride, channels, repeats) in enumerate(stages):
        out_channels = scaled_channels(channels, width)
        for j in range(repeats):
            name, stride, in_channels = f"block{i + 1}_{j + 1}", first_stride if j == 0 else 1, shape_of(x)[1]
            body = x
            if expansion != 1:
                body = activation(b, _conv_bn(b, body, name + "_expand", in_channels * expansion))
            body = activation(b, _conv_bn(b, body, name + "_dw", shape_of(body)[1], kernel, stride, depthwise=True))
            if squeeze:
                body = _squeeze_excitation(b, body, name + "_se", max(1, in_channels // 4))
            body = _conv_bn(b, body, name + "_project", out_channels)
            x = b.op(nn.AddOp, body, x).results[0] if stride == 1 and in_channels == out_channels else body
    return x


def mobilenet_v2(data_shape: Sequence[int], num_classes: int = 1000, width: float = 1.0,
                 stages: Sequence[tuple[int, int, int, int]] = MOBILENET_V2_STAGES,
                 head_channels: int = 1280) -> ModuleOp:
    """MobileNet v2 (width multiplier `width`; `stages` as MOBILENET_V2_STAGES) on `data_shape` NCHW."""
    b = GraphBuilder(data_shape)
    x = _relu6(b, _conv_bn(b, b.input, "stem_conv", scaled_channels(32, width), 3, 2))
    blocks = [(expansion, 3, stride, channels, repeats) for expansion, channels, repeats, stride in stages]
    x = _inverted_residuals(b, x, blocks, width, _relu6, squeeze=False)
    return _head(b, x, max(head_channels, scaled_channels(head_channels, width)), num_classes, _relu6)


def efficientnet_b0(data_shape: Sequence[int], num_classes: int = 1000, width: float = 1.0,
                    stages: Sequence[tuple[int, int, int, int, int]] = EFFICIENTNET_B0_STAGES,
                    head_channels: int = 1280) -> ModuleOp:
    """An EfficientNet-B0-like net (no drop-connect; `stages` as EFFICIENTNET_B0_STAGES) on `data_shape`."""
    b = GraphBuilder(data_shape)
    x = _silu(b, _conv_bn(b, b.input, "stem_conv", scaled_channels(32, width), 3, 2))
    x = _inverted_residuals(b, x, stages, width, _silu, squeeze=True)
    return _head(b, x, scaled_channels(head_channels, width), num_classes, _silu)


NETWORKS = {"mobilenet_v2": mobilenet_v2, "efficientnet_b0": efficientnet_b0}


def get_workload(name: str = "mobilenet_v2", batch_size: int = 1, image_shape: Sequence[int] = (3, 224, 224),
                 seed: int = 0, **net_options) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """`(module, params)` of the network `name` (a key of NETWORKS; `net_options`: num_classes, width,
    stages, head_channels), parameters initialised like ResNet's."""
    if name not in NETWORKS:
        raise ValueError(f"mobilenet: unknown network {name!r}; expected one of {', '.join(NETWORKS)}")
    module = NETWORKS[name]((batch_size, *image_shape), **net_options)
    return module, variance_preserving(create_params(module, seed), seed)


def variance_preserving(params: dict[str, np.ndarray], seed: int = 0) -> dict[str, np.ndarray]:
    """`params` with every weight redrawn normal with variance 2 / fan-in and random batch-norm
    statistics: TVM's Xavier rule shrinks activations layer after layer in nets this deep (to
    ~1e-7 at MobileNet v2's logits, and float32 denormals on the way), which no trained net does."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, value in params.items():
        shape, dtype = value.shape, value.dtype
        if name.endswith("weight"):
            value = rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[1:]))
        elif name.endswith("gamma"):
            value = rng.uniform(0.5, 1.0, shape)
        elif name.endswith(("beta", "bias", "mean")):
            value = rng.uniform(-0.1, 0.1, shape)
        elif name.endswith("var"):
            value = rng.uniform(0.5, 1.5, shape)
        out[name] = value.astype(dtype)
    return out
