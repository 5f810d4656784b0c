"""`conv-space-to-depth` (lowering/conv_space_to_depth.py): a strided convolution over few input
channels as a stride-1 one over the input's space-to-depth phases gives the convolution's values
(numpy written in test_conv_as_matmul.py) in xrelay's linalg executor and through IREE; other
convolutions stay as they are."""

from __future__ import annotations

import numpy as np
import pytest
from test_conv_as_matmul import rewritten_case

from xrelay.lowering.conv_space_to_depth import ConvSpaceToDepth
from xrelay.runtime.iree import backend as iree_backend
from xrelay.runtime.reference.interpreter import run

# (id, N, H, W, C, F, kernel, stride, dilation, padding, input channels after it or None if it stays)
CASES = [
    ("stem-7x7-stride2-pad3", 1, 20, 18, 3, 8, 7, 2, 1, 3, 12),
    ("3x3-stride2-padded-up", 2, 9, 9, 3, 4, 3, 2, 1, 0, 12),
    ("3x3-stride2-exact", 1, 10, 10, 3, 4, 3, 2, 1, 0, 12),
    ("2x2-stride2-cut", 1, 9, 9, 3, 5, 2, 2, 1, 0, 12),
    ("3x3-stride2x3-one-channel", 1, 11, 13, 1, 4, 3, (2, 3), 1, 1, 6),
    ("1x1-stride2", 1, 7, 7, 2, 4, 1, 2, 1, 0, 8),
    ("stride1-stays", 1, 8, 8, 3, 4, 3, 1, 1, 1, None),
    ("dilated-stays", 1, 12, 12, 3, 4, 3, 2, 2, 0, None),
    ("8-channels-stay", 1, 9, 9, 8, 4, 3, 2, 1, 1, None),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_space_to_depth_convolution_matches_numpy_in_the_linalg_executor(case):
    module, x, weight, expected = rewritten_case(case, ConvSpaceToDepth())
    convs = [op for op in module.walk() if op.name == "linalg.conv_2d_nhwc_hwcf"]
    assert len(convs) == 1
    strides = [int(v) for v in convs[0].strides.get_values()]
    channels = convs[0].inputs[0].type.get_shape()[3]
    if case[-1] is None:
        assert channels == case[4] and not any(op.name == "linalg.transpose" for op in module.walk())
    else:
        assert (strides, channels) == ([1, 1], case[-1])
    got = run(module, {"x": x, "w": weight})
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)


@pytest.mark.skipif(not iree_backend.available(), reason="IREE is not installed (the 'iree' extra)")
@pytest.mark.parametrize("case", CASES[:5:2], ids=[c[0] for c in CASES[:5:2]])
def test_space_to_depth_convolution_matches_numpy_through_iree_with_data_tiling(case):
    module, x, weight, expected = rewritten_case(case, ConvSpaceToDepth())
    got = iree_backend.compile_text(str(module))(x, weight)[0]  # DEFAULT_FLAGS: data tiling
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)
