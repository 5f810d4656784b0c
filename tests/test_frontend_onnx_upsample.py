"""Transposed convolution and resizing: nn.conv2d_transpose against numpy written here (a scatter of
kernel-scaled pixels) at every level, and ConvTranspose, Resize and Upsample against ONNX Runtime at the
nn, linalg, memref and loops levels and through IREE."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx_models import close, imported_at_every_level, iree_against_onnxruntime, model, run_onnxruntime
from op_levels import LEVELS, run_lowered, run_nn

from xrelay.frontend import from_onnx
from xrelay.runtime.iree import backend as iree_backend

RNG = np.random.default_rng(34)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def transposed_conv(x, w, strides, dilation, padding, output_padding, groups):
    """Each input pixel (i, j) adds w[c, :, a, b] * x at output (i * s + a * d, j * s + b * d), then the
    padding is cut off (top, left, bottom, right)."""
    n, c, h, width = x.shape
    _, per_group, kh, kw = w.shape
    full = np.zeros((n, groups * per_group, (h - 1) * strides[0] + dilation[0] * (kh - 1) + 1 + output_padding[0],
                     (width - 1) * strides[1] + dilation[1] * (kw - 1) + 1 + output_padding[1]))
    for ci in range(c):
        group = ci // (c // groups)
        outs = slice(group * per_group, (group + 1) * per_group)
        for i in range(h):
            for j in range(width):
                for a in range(kh):
                    for b in range(kw):
                        full[:, outs, i * strides[0] + a * dilation[0], j * strides[1] + b * dilation[1]] += \
                            x[:, ci, i, j, None] * w[ci, :, a, b]
    top, left, bottom, right = padding
    return full[:, :, top:full.shape[2] - bottom, left:full.shape[3] - right].astype(np.float32)


TRANSPOSED = {
    "plain": (rand(1, 3, 4, 4), rand(3, 2, 3, 3), dict()),
    "strided_padded": (rand(2, 2, 3, 4), rand(2, 3, 3, 2), dict(strides=(2, 3), padding=(1, 0, 1, 1),
                                                                  output_padding=(1, 2))),
    "grouped_dilated": (rand(1, 4, 3, 3), rand(4, 2, 2, 3), dict(groups=2, dilation=(2, 1), strides=(1, 2))),
}


@pytest.mark.parametrize("level", ("nn",) + LEVELS)
@pytest.mark.parametrize("case", sorted(TRANSPOSED))
def test_conv2d_transpose_matches_numpy(case, level):
    x, w, attrs = TRANSPOSED[case]
    full = dict(strides=(1, 1), dilation=(1, 1), padding=(0, 0, 0, 0), output_padding=(0, 0), groups=1) | attrs
    expected = transposed_conv(x, w, full["strides"], full["dilation"], full["padding"], full["output_padding"],
                               full["groups"])
    got = run_nn("nn.conv2d_transpose", [x, w], attrs) if level == "nn" else \
        run_lowered("nn.conv2d_transpose", [x, w], attrs, level)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def _node(op_type, inputs, attrs=None, inits=None, opset=13):
    """One `op_type` node on run-time `inputs` (name -> array) and `inits` (initializers)."""
    inits = inits or {}
    node = helper.make_node(op_type, list(inputs) + list(inits), ["y"], **(attrs or {}))
    return model([node], {n: v.shape for n, v in inputs.items()}, ["y"], inits, opset=opset), inputs


def _resize(attrs, scales=None, sizes=None, shape=(1, 2, 4, 5), opset=13):
    x = rand(*shape)
    inits = {"roi": np.zeros(0, np.float32), "scales": np.array(scales or [], np.float32)}
    if sizes is not None:
        inits["sizes"] = np.array(sizes, np.int64)
    return _node("Resize", {"x": x}, attrs, inits, opset)


CASES = {
    "convtranspose_bias": lambda: _node("ConvTranspose", {"x": rand(1, 3, 4, 4)}, dict(strides=[2, 2], pads=[1, 1, 1, 1]),
                                        {"w": rand(3, 2, 3, 3), "b": rand(2)}),
    "convtranspose_groups_output_padding": lambda: _node(
        "ConvTranspose", {"x": rand(1, 4, 3, 5)}, dict(group=2, strides=[3, 2], output_padding=[2, 1], dilations=[1, 2]),
        {"w": rand(4, 3, 2, 3)}),
    "convtranspose_output_shape": lambda: _node("ConvTranspose", {"x": rand(1, 2, 3, 3)},
                                                dict(strides=[2, 2], output_shape=[6, 7]), {"w": rand(2, 2, 3, 3)}),
    "convtranspose_same_upper": lambda: _node("ConvTranspose", {"x": rand(1, 2, 3, 3)},
                                              dict(strides=[2, 2], auto_pad="SAME_UPPER"), {"w": rand(2, 1, 3, 3)}),
    "convtranspose_same_lower_output_shape": lambda: _node(
        "ConvTranspose", {"x": rand(1, 2, 3, 3)}, dict(strides=[2, 2], auto_pad="SAME_LOWER", output_shape=[6, 5]),
        {"w": rand(2, 1, 3, 3)}),
    "convtranspose_1d": lambda: _node("ConvTranspose", {"x": rand(2, 2, 5)}, dict(strides=[2], pads=[1, 0]),
                                      {"w": rand(2, 3, 3), "b": rand(3)}),
    "resize_nearest_scales": lambda: _resize(dict(mode="nearest"), scales=[1, 1, 2, 1.5]),
    "resize_nearest_sizes_asymmetric_floor": lambda: _resize(
        dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"), sizes=[1, 2, 7, 3]),
    "resize_nearest_align_corners_ceil": lambda: _resize(
        dict(mode="nearest", coordinate_transformation_mode="align_corners", nearest_mode="ceil"), sizes=[1, 2, 8, 9]),
    "resize_nearest_round_prefer_ceil_tf": lambda: _resize(
        dict(mode="nearest", coordinate_transformation_mode="tf_half_pixel_for_nn", nearest_mode="round_prefer_ceil"),
        scales=[1, 1, 0.5, 2]),
    "resize_linear_half_pixel": lambda: _resize(dict(mode="linear"), scales=[1, 1, 2, 2]),
    "resize_linear_down_pytorch": lambda: _resize(dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"),
                                                  sizes=[1, 2, 3, 1]),
    "resize_linear_align_corners": lambda: _resize(dict(mode="linear", coordinate_transformation_mode="align_corners"),
                                                   sizes=[1, 2, 7, 8]),
    "resize_linear_asymmetric": lambda: _resize(dict(mode="linear", coordinate_transformation_mode="asymmetric"),
                                                scales=[1, 1, 1.5, 2.5]),
    "resize_opset10_nearest": lambda: _node("Resize", {"x": rand(1, 2, 3, 4)}, dict(mode="nearest"),
                                            {"scales": np.array([1, 1, 2, 3], np.float32)}, opset=10),
    "upsample_opset9_linear": lambda: _node("Upsample", {"x": rand(1, 2, 3, 4)}, dict(mode="linear"),
                                            {"scales": np.array([1, 1, 2, 2], np.float32)}, opset=9),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_conversion_matches_onnxruntime_at_every_level(name):
    proto, inputs = CASES[name]()
    (expected,) = run_onnxruntime(proto, inputs)
    for level, got in imported_at_every_level(proto, inputs):
        assert got.shape == expected.shape and close(got, expected), f"{level}: {got} != {expected}"


def test_resizing_batch_or_channels_is_refused_with_the_node_named():
    proto, _ = _resize(dict(mode="nearest"), scales=[1, 2, 2, 2])
    with pytest.raises(Exception, match=r"resizing N or C \(\(1, 2\) to \(1, 4\)\) is not supported"):
        from_onnx(proto)


@pytest.mark.slow  # one IREE compilation
@pytest.mark.skipif(not iree_backend.available(), reason="IREE is not installed (the 'iree' extra)")
def test_every_conversion_through_iree_matches_onnxruntime():
    cases = {name: CASES[name]() for name in sorted(CASES)}
    for name, got, expected in iree_against_onnxruntime(cases):
        assert got.shape == expected.shape and close(got, expected), name
