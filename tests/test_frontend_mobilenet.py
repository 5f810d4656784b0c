"""frontend.mobilenet: small MobileNet v2 and EfficientNet-like nets built by xrelay.build (native
kernels and XRELAY_NATIVE=0) against a numpy forward of the same architecture written here."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import xrelay
from xrelay import transform
from xrelay.frontend import mobilenet
from xrelay.runtime.reference.interpreter import run as run_nn

SHAPE = (1, 3, 16, 16)
# Small stages with every feature of the full ones: a block without expansion, strides 1 and 2, a
# residual add (second block of stage 2), 3x3 and 5x5 depthwise kernels.
MOBILENET_STAGES = ((1, 8, 1, 1), (6, 8, 2, 2), (6, 16, 1, 2))
EFFICIENTNET_STAGES = ((1, 3, 1, 8, 1), (6, 5, 2, 8, 2), (4, 3, 2, 16, 1))


def conv(x, w, stride, groups=1):
    """NCHW/OIHW convolution, padding k // 2 on every side, `groups` channel groups."""
    k = w.shape[2]
    pad = k // 2
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    oh, ow = (h - k) // stride + 1, (wd - k) // stride + 1
    out = np.zeros((n, w.shape[0], oh, ow), np.float64)
    per_in, per_out = c // groups, w.shape[0] // groups
    for g in range(groups):
        xs = x[:, g * per_in:(g + 1) * per_in]
        ws = w[g * per_out:(g + 1) * per_out]
        for i in range(k):
            for j in range(k):
                window = xs[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
                out[:, g * per_out:(g + 1) * per_out] += np.einsum("nchw,oc->nohw", window, ws[:, :, i, j])
    return out


def bn(x, p, name):
    scale = p[name + "_gamma"] / np.sqrt(p[name + "_moving_var"] + 1e-3)
    return (x - p[name + "_moving_mean"][:, None, None]) * scale[:, None, None] + p[name + "_beta"][:, None, None]


def relu6(x):
    return np.clip(x, 0.0, 6.0)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def silu(x):
    return x * sigmoid(x)


def head(x, p, act):
    x = act(bn(conv(x, p["head_conv_weight"], 1), p, "head_conv_bn"))
    logits = x.mean(axis=(2, 3)) @ p["fc_weight"].T + p["fc_bias"]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def inverted_residuals(x, p, blocks, act, squeeze_excite: bool):
    """The blocks `(expansion t, stride)` in order, named block{stage}_{repeat}: expand (t != 1),
    depthwise, squeeze-excitation when asked, project, and the residual when the shapes agree."""
    for name, t, stride in blocks:
        y = x
        if t != 1:
            y = act(bn(conv(y, p[name + "_expand_weight"], 1), p, name + "_expand_bn"))
        y = act(bn(conv(y, p[name + "_dw_depthwise_weight"], stride, groups=y.shape[1]), p, name + "_dw_bn"))
        if squeeze_excite:
            pooled = y.mean(axis=(2, 3), keepdims=True)
            squeeze = silu(conv(pooled, p[name + "_se_reduce_weight"], 1) + p[name + "_se_reduce_bias"][:, None, None])
            excite = conv(squeeze, p[name + "_se_expand_weight"], 1) + p[name + "_se_expand_bias"][:, None, None]
            y = y * sigmoid(excite)
        y = bn(conv(y, p[name + "_project_weight"], 1), p, name + "_project_bn")
        x = y + x if y.shape == x.shape else y
    return x


def mobilenet_forward(x, p):
    x = relu6(bn(conv(x, p["stem_conv_weight"], 2), p, "stem_conv_bn"))
    blocks = [(f"block{i + 1}_{j + 1}", t, s if j == 0 else 1)
              for i, (t, _, n, s) in enumerate(MOBILENET_STAGES) for j in range(n)]
    return head(inverted_residuals(x, p, blocks, relu6, squeeze_excite=False), p, relu6)


def efficientnet_forward(x, p):
    x = silu(bn(conv(x, p["stem_conv_weight"], 2), p, "stem_conv_bn"))
    blocks = [(f"block{i + 1}_{j + 1}", t, s if j == 0 else 1)
              for i, (t, _, s, _, n) in enumerate(EFFICIENTNET_STAGES) for j in range(n)]
    return head(inverted_residuals(x, p, blocks, silu, squeeze_excite=True), p, silu)


CASES = {
    "mobilenet_v2": (dict(stages=MOBILENET_STAGES, head_channels=32, num_classes=10), mobilenet_forward),
    "efficientnet_b0": (dict(stages=EFFICIENTNET_STAGES, head_channels=32, num_classes=10), efficientnet_forward),
}


@pytest.mark.parametrize("native", ["1", "0"])
@pytest.mark.parametrize("name", list(CASES))
def test_build_matches_numpy_forward(name, native, monkeypatch):
    monkeypatch.setenv("XRELAY_NATIVE", native)
    options, forward = CASES[name]
    module, params = mobilenet.get_workload(name, image_shape=SHAPE[1:], **options)
    data = np.random.default_rng(1).standard_normal(SHAPE).astype(np.float32)
    expected = forward(data.astype(np.float64), {k: v.astype(np.float64) for k, v in params.items()})
    assert expected.std() > 1e-3  # the logits differ: a wrong layer changes the answer
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(module, params)
    np.testing.assert_allclose(executable.program(data)[0], expected, rtol=1e-4, atol=1e-6)


def test_nn_level_matches_numpy_forward():
    options, forward = CASES["efficientnet_b0"]
    module, params = mobilenet.get_workload("efficientnet_b0", image_shape=SHAPE[1:], **options)
    data = np.random.default_rng(2).standard_normal(SHAPE).astype(np.float32)
    out = run_nn(module, {"data": data}, params)
    expected = forward(data.astype(np.float64), {k: v.astype(np.float64) for k, v in params.items()})
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-6)


def test_full_size_shapes():
    """MobileNet v2 1.0 at 224x224: 52 convolutions, 17 of them depthwise, 10 residual adds."""
    module = mobilenet.mobilenet_v2((1, 3, 224, 224))
    ops = [op for op in module.ops.first.body.block.ops]
    convs = [op for op in ops if op.name == "nn.conv2d"]
    assert len(convs) == 52
    assert sum(op.attrs()["groups"] > 1 for op in convs) == 17
    assert sum(op.name == "nn.add" for op in ops) == 10
    assert tuple(ops[-2].results[0].type.get_shape()) == (1, 1000)


@pytest.mark.parametrize("bad", ["mobilenet_v3", "resnet18"])
def test_unknown_network(bad):
    with pytest.raises(ValueError, match=f"unknown network '{bad}'"):
        mobilenet.get_workload(bad)


@pytest.mark.parametrize(("channels", "width", "expected"), [(32, 1.0, 32), (32, 0.35, 16), (24, 0.5, 16), (1280, 1.4, 1792)])
def test_scaled_channels(channels, width, expected):
    assert mobilenet.scaled_channels(channels, width) == expected


@pytest.mark.parametrize("name", list(CASES))
def test_benchmark_onnx_export_matches_numpy_forward(name):
    """benchmarks/execution.py's ONNX export (Clip, Sigmoid, Mul, a per-channel bias reshaped for
    ONNX's broadcast) run by ONNX Runtime, as `--models mobilenet_v2,efficientnet_b0` compares."""
    ort = pytest.importorskip("onnxruntime")
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    from execution import onnx_model

    from xrelay.frontend import bind_params_by_name

    options, forward = CASES[name]
    module, params = mobilenet.get_workload(name, image_shape=SHAPE[1:], **options)
    data = np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)
    model = onnx_model(bind_params_by_name(module, params))
    (got,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"data": data})
    expected = forward(data.astype(np.float64), {k: v.astype(np.float64) for k, v in params.items()})
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)
