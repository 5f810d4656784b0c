"""`pool-as-window-slices` (lowering/pool_as_window_slices.py): max and average pools whose named
pooling op becomes strided window slices folded by an elementwise generic give the pool's values
(numpy written here) in xrelay's linalg executor and through IREE with its default data-tiling flags;
windows over `max_taps` taps stay named ops."""

from __future__ import annotations

import numpy as np
import pytest
from tool_passes import parse_module

from xrelay.lowering import lower
from xrelay.lowering.pool_as_window_slices import PoolAsWindowSlices
from xrelay.runtime.iree import backend as iree_backend
from xrelay.runtime.reference.interpreter import run

# (id, op, layout, input shape, pool size, strides, dilation, padding (top, left, bottom, right))
CASES = [
    ("max-nhwc-3x3-stride2-pad1", "max", "NHWC", (1, 9, 8, 5), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1)),
    ("max-nchw-3x2-stride1x2", "max", "NCHW", (2, 3, 7, 9), (3, 2), (1, 2), (1, 1), (0, 0, 0, 0)),
    ("max-nhwc-dilation2-uneven-pad", "max", "NHWC", (1, 10, 9, 4), (2, 3), (2, 1), (2, 2), (1, 0, 0, 2)),
    ("avg-nhwc-2x2-stride2", "avg", "NHWC", (2, 8, 6, 3), (2, 2), (2, 2), (1, 1), (0, 0, 0, 0)),
    ("avg-nchw-3x3-pad1", "avg", "NCHW", (1, 4, 6, 6), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1)),
]


def pool_reference(x, op, layout, size, strides, dilation, padding) -> np.ndarray:
    """The pool in numpy: a max, or a mean over the window's in-bounds taps (count_include_pad false),
    of strided NHWC windows of the padded input."""
    if layout == "NCHW":
        x = x.transpose(0, 2, 3, 1)
    (kh, kw), (sh, sw), (dh, dw) = size, strides, dilation
    top, left, bottom, right = padding
    pads = [(0, 0), (top, bottom), (left, right), (0, 0)]
    filled = np.pad(x.astype(np.float64), pads, constant_values=-np.inf if op == "max" else 0.0)
    inside = np.pad(np.ones(x.shape[:3] + (1,)), pads)
    oh = (filled.shape[1] - dh * (kh - 1) - 1) // sh + 1
    ow = (filled.shape[2] - dw * (kw - 1) - 1) // sw + 1
    taps = [(filled[:, i * dh: i * dh + sh * (oh - 1) + 1: sh, j * dw: j * dw + sw * (ow - 1) + 1: sw],
             inside[:, i * dh: i * dh + sh * (oh - 1) + 1: sh, j * dw: j * dw + sw * (ow - 1) + 1: sw])
            for i in range(kh) for j in range(kw)]
    if op == "max":
        out = np.max([t for t, _ in taps], axis=0)
    else:
        out = np.sum([t for t, _ in taps], axis=0) / np.sum([c for _, c in taps], axis=0)
    return out.transpose(0, 3, 1, 2) if layout == "NCHW" else out


def pool_module(op, layout, shape, size, strides, dilation, padding, out_shape):
    x_type = f"tensor<{'x'.join(map(str, shape))}xf32>"
    y_type = f"tensor<{'x'.join(map(str, out_shape))}xf32>"
    text = f"""func.func @main(%x: {x_type}) -> {y_type} {{
  %y = nn.{op}_pool2d(%x) {{layout = "{layout}", pool_size = array<i64: {size[0]}, {size[1]}>,
    strides = array<i64: {strides[0]}, {strides[1]}>, dilation = array<i64: {dilation[0]}, {dilation[1]}>,
    padding = array<i64: {', '.join(map(str, padding))}>}} : ({x_type}) -> {y_type}
  func.return %y : {y_type}
}}"""
    return parse_module(text)


def rewritten_case(case, rewrite=PoolAsWindowSlices()):
    """(the case's pool lowered to linalg and rewritten by `rewrite`, input, numpy's result)."""
    _, op, layout, shape, size, strides, dilation, padding = case
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    expected = pool_reference(x, op, layout, size, strides, dilation, padding)
    module = lower(pool_module(op, layout, shape, size, strides, dilation, padding, expected.shape), to="linalg")
    return rewrite(module), x, expected


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_rewritten_pool_matches_numpy_in_the_linalg_executor(case):
    module, x, expected = rewritten_case(case)
    names = [op.name for op in module.walk()]
    assert not any(name.startswith("linalg.pooling") for name in names)
    size = case[4]
    assert names.count("tensor.extract_slice") == size[0] * size[1]
    got = run(module, {"x": x})
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.skipif(not iree_backend.available(), reason="IREE is not installed (the 'iree' extra)")
@pytest.mark.parametrize("case", CASES[::2], ids=[c[0] for c in CASES[::2]])
def test_rewritten_pool_matches_numpy_through_iree_with_data_tiling(case):
    module, x, expected = rewritten_case(case)
    got = iree_backend.compile_text(str(module))(x)[0]  # DEFAULT_FLAGS: data tiling
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_max_taps_is_the_threshold():
    case = CASES[0]  # a 3x3 window: 9 taps
    kept = {op.name for op in rewritten_case(case, PoolAsWindowSlices(max_taps=8))[0].walk()}
    rewritten = {op.name for op in rewritten_case(case, PoolAsWindowSlices(max_taps=9))[0].walk()}
    assert "linalg.pooling_nhwc_max" in kept and "tensor.extract_slice" not in kept
    assert "linalg.pooling_nhwc_max" not in rewritten and "tensor.extract_slice" in rewritten
