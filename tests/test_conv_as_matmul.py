"""`conv-to-matmul` (lowering/conv_as_matmul.py): 1x1 and few-input-channel NHWC convolutions as a
`linalg.matmul` between reshapes give the convolution's values (numpy written here) in xrelay's
linalg executor and through IREE with its default data-tiling flags; other convolutions stay."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.parser import Parser

from xrelay.dialects.nn import NN
from xrelay.lowering import lower
from xrelay.lowering.conv_as_matmul import ConvToMatmul
from xrelay.runtime.iree import backend as iree_backend
from xrelay.runtime.reference.interpreter import run

# (id, N, H, W, C, F, kernel, stride, dilation, padding, becomes a matmul)
CASES = [
    ("1x1", 1, 6, 5, 8, 16, 1, 1, 1, 0, True),
    ("1x1-stride2-odd", 1, 7, 7, 8, 5, 1, 2, 1, 0, True),
    ("1x1-stride2x3-batch2", 2, 9, 8, 4, 6, 1, (2, 3), 1, 0, True),
    ("rgb-7x7-stride2-pad3", 1, 20, 18, 3, 8, 7, 2, 1, 3, True),
    ("rgb-3x3-dilation2", 2, 9, 10, 3, 4, 3, 1, 2, 1, True),
    ("one-channel-3x3", 1, 6, 6, 1, 3, 3, 1, 1, 0, True),
    ("3x3-8-channels-stays", 1, 6, 6, 8, 4, 3, 1, 1, 1, False),
]


def pair(v) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else v


def conv_nhwc(x: np.ndarray, w: np.ndarray, stride, dilation, padding: int) -> np.ndarray:
    """Direct NHWC/HWIO convolution: a sum over the kernel taps of strided input windows times the tap's weights."""
    (sh, sw), (dh, dw) = pair(stride), pair(dilation)
    x = np.pad(x.astype(np.float64), [(0, 0), (padding, padding), (padding, padding), (0, 0)])
    kh, kw = w.shape[:2]
    oh = (x.shape[1] - dh * (kh - 1) - 1) // sh + 1
    ow = (x.shape[2] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i in range(kh):
        for j in range(kw):
            window = x[:, i * dh: i * dh + sh * (oh - 1) + 1: sh, j * dw: j * dw + sw * (ow - 1) + 1: sw, :]
            out += window @ w[i, j].astype(np.float64)
    return out


def conv_module(n, h, w, c, f, k, stride, dilation, padding):
    (sh, sw), (dh, dw) = pair(stride), pair(dilation)
    oh = (h + 2 * padding - dh * (k - 1) - 1) // sh + 1
    ow = (w + 2 * padding - dw * (k - 1) - 1) // sw + 1
    x_type, w_type, y_type = (f"tensor<{n}x{h}x{w}x{c}xf32>", f"tensor<{k}x{k}x{c}x{f}xf32>",
                              f"tensor<{n}x{oh}x{ow}x{f}xf32>")
    text = f"""func.func @main(%x: {x_type}, %w: {w_type}) -> {y_type} {{
  %y = nn.conv2d(%x, %w) {{data_layout = "NHWC", kernel_layout = "HWIO", strides = array<i64: {sh}, {sw}>,
    dilation = array<i64: {dh}, {dw}>, padding = array<i64: {padding}, {padding}, {padding}, {padding}>}}
    : ({x_type}, {w_type}) -> {y_type}
  func.return %y : {y_type}
}}"""
    ctx = Context()
    for dialect in (Builtin, Func, NN):
        ctx.load_dialect(dialect)
    return Parser(ctx, text).parse_module()


def rewritten_case(case, rewrite=ConvToMatmul()):
    """(the case's convolution lowered to linalg and rewritten by `rewrite`, input, weight, numpy's result)."""
    _, n, h, w, c, f, k, stride, dilation, padding, _ = case
    rng = np.random.default_rng(3)
    x = rng.standard_normal((n, h, w, c)).astype(np.float32)
    weight = rng.standard_normal((k, k, c, f)).astype(np.float32)
    module = rewrite(lower(conv_module(n, h, w, c, f, k, stride, dilation, padding), to="linalg"))
    return module, x, weight, conv_nhwc(x, weight, stride, dilation, padding)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_rewritten_convolution_matches_numpy_in_the_linalg_executor(case):
    module, x, weight, expected = rewritten_case(case)
    names = {op.name for op in module.walk()}
    assert ("linalg.matmul" in names) == case[-1]
    assert ("linalg.conv_2d_nhwc_hwcf" in names) == (not case[-1])
    got = run(module, {"x": x, "w": weight})
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)


@pytest.mark.skipif(not iree_backend.available(), reason="IREE is not installed (the 'iree' extra)")
@pytest.mark.parametrize("case", CASES[1::2], ids=[c[0] for c in CASES[1::2]])
def test_rewritten_convolution_matches_numpy_through_iree_with_data_tiling(case):
    module, x, weight, expected = rewritten_case(case)
    got = iree_backend.compile_text(str(module))(x, weight)[0]  # DEFAULT_FLAGS: data tiling
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)


def test_im2col_channels_is_the_threshold():
    module = lower(conv_module(1, 6, 6, 3, 4, 3, 1, 1, 0), to="linalg")
    kept = {op.name for op in ConvToMatmul(im2col_channels=3)(module).walk()}
    rewritten = {op.name for op in ConvToMatmul(im2col_channels=4)(module).walk()}
    assert "linalg.conv_2d_nhwc_hwcf" in kept and "linalg.matmul" not in kept
    assert "linalg.matmul" in rewritten and "linalg.conv_2d_nhwc_hwcf" not in rewritten
