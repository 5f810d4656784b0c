"""An average pool's zero pad and window sum run as one step from the unpadded data
(runtime/kernels/padded_pool.py `PaddedPoolStep`): checked against numpy written here (count_include_pad
false and true, odd sizes, strides 1 and 2, uneven pads, NHWC and NCHW, a batch), that the step is
planned (and the pad is not), on 1 and 2 threads."""

from __future__ import annotations

import numpy as np
import pytest
from tool_passes import parse_module

from xrelay.lowering import lower
from xrelay.runtime.executor import plan as split_plan
from xrelay.runtime.executor.linalg_exec import compile_linalg
from xrelay.runtime.executor.pad_step import PadStep
from xrelay.runtime.kernels.padded_pool import PaddedPoolStep
from xrelay.runtime.parallel.threads import set_blas_threads

# (id, layout, input shape (N, H, W, C), pool size, strides, padding (top, left, bottom, right), count_include_pad)
CASES = [
    ("nhwc-3x3-stride2-pad1", "NHWC", (1, 13, 11, 5), (3, 3), (2, 2), (1, 1, 1, 1), False),
    ("nhwc-3x3-stride2-pad1-count-pad", "NHWC", (1, 13, 11, 5), (3, 3), (2, 2), (1, 1, 1, 1), True),
    ("nhwc-3x3-stride1-pad1-batch2", "NHWC", (2, 7, 9, 3), (3, 3), (1, 1), (1, 1, 1, 1), False),
    ("nhwc-3x2-stride2x1-uneven", "NHWC", (1, 10, 9, 4), (3, 2), (2, 1), (2, 0, 0, 1), True),
    ("nchw-3x3-stride2-pad1", "NCHW", (1, 9, 9, 3), (3, 3), (2, 2), (1, 1, 1, 1), False),
    ("nchw-3x3-stride1-pad1-count-pad", "NCHW", (2, 6, 7, 4), (3, 3), (1, 1), (1, 1, 1, 1), True),
]


def reference(x: np.ndarray, size, strides, padding, count_include_pad: bool) -> np.ndarray:
    """NHWC average pool in float64: the sum of the zero-padded window over its in-data taps, or over
    all its taps with count_include_pad."""
    (kh, kw), (sh, sw) = size, strides
    top, left, bottom, right = padding
    pads = [(0, 0), (top, bottom), (left, right), (0, 0)]
    filled = np.pad(x.astype(np.float64), pads)
    inside = np.pad(np.ones(x.shape[:3] + (1,)), pads)
    oh, ow = (filled.shape[1] - kh) // sh + 1, (filled.shape[2] - kw) // sw + 1
    total = np.zeros((x.shape[0], oh, ow, x.shape[3]))
    count = np.zeros((x.shape[0], oh, ow, 1))
    for i in range(kh):
        for j in range(kw):
            total += filled[:, i: i + sh * (oh - 1) + 1: sh, j: j + sw * (ow - 1) + 1: sw]
            count += 1 if count_include_pad else inside[:, i: i + sh * (oh - 1) + 1: sh, j: j + sw * (ow - 1) + 1: sw]
    return total / count


def program(layout, shape, size, strides, padding, count_include_pad, out_shape):
    """The average pool of the argument, returned with it (a tail before the pad would write into it:
    `TailIntoPad`, or copy its rows there)."""
    x_type = f"tensor<{'x'.join(map(str, shape))}xf32>"
    y_type = f"tensor<{'x'.join(map(str, out_shape))}xf32>"
    text = f"""func.func @main(%x: {x_type}) -> ({y_type}, {x_type}) {{
  %y = nn.avg_pool2d(%x) {{layout = "{layout}", pool_size = array<i64: {size[0]}, {size[1]}>,
    strides = array<i64: {strides[0]}, {strides[1]}>, dilation = array<i64: 1, 1>,
    padding = array<i64: {', '.join(map(str, padding))}>, count_include_pad = {str(count_include_pad).lower()}}}
    : ({x_type}) -> {y_type}
  func.return %y, %x : {y_type}, {x_type}
}}"""
    return compile_linalg(lower(parse_module(text), to="linalg"))


def case_program(case):
    _, layout, shape, size, strides, padding, count_include_pad = case
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    expected = reference(x, size, strides, padding, count_include_pad)
    if layout == "NCHW":
        x, expected = x.transpose(0, 3, 1, 2).copy(), expected.transpose(0, 3, 1, 2)
    return program(layout, x.shape, size, strides, padding, count_include_pad, expected.shape), x, expected


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_padded_average_pool_matches_numpy(case, threads, monkeypatch):
    monkeypatch.setattr(split_plan, "MIN_SPLIT_ELEMENTS", 1)  # split these small pools over the threads
    compiled, x, expected = case_program(case)
    steps = [s for s in compiled.steps if isinstance(s, PaddedPoolStep)]
    assert len(steps) == 1 and not any(isinstance(s, PadStep) for s in compiled.steps)
    set_blas_threads(threads)
    try:
        for _ in range(2):  # the planned buffers' second run too
            np.testing.assert_allclose(compiled(x)[0], expected, rtol=1e-5, atol=1e-6)
    finally:
        set_blas_threads(1)


def test_kept_calls_follow_new_data_and_new_arrays():
    """Run whole, the step keeps its pooling's calls for the same arrays: new input
    values in the same planned buffer still give numpy's answer, and so do new arrays."""
    compiled, x, expected = case_program(CASES[0])
    (step,) = [s for s in compiled.steps if isinstance(s, PaddedPoolStep)]
    np.testing.assert_allclose(compiled(x)[0], expected, rtol=1e-5, atol=1e-6)
    assert step.kept is not None
    _, _, shape, size, strides, padding, count_include_pad = CASES[0]
    for seed in (7, 8):
        y = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
        np.testing.assert_allclose(compiled(y)[0], reference(y, size, strides, padding, count_include_pad),
                                   rtol=1e-5, atol=1e-6)
    assert step.kept is not None
