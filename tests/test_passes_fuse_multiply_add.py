"""fuse-multiply-add: a matmul's and a convolution's loops with their multiply-adds fused compute what
numpy written here does (each update rounded once, so within float32 rounding of the unfused nest),
and the fused nest calls the C library's fmaf; the numpy loops executor (no compiler) runs it too."""

from __future__ import annotations

import numpy as np
import pytest

from op_levels import conv2d_reference, single_op_module
from xrelay.codegen.program import NativeProgram
from xrelay.lowering import lower
from xrelay.passes.fuse_multiply_add import FuseMultiplyAdd
from xrelay.runtime.reference.loops_exec import LoopsProgram

pytestmark = pytest.mark.usefixtures("native_cache")
RNG = np.random.default_rng(36)
A, B = RNG.standard_normal((16, 24), np.float32), RNG.standard_normal((12, 24), np.float32)
X, W = RNG.standard_normal((1, 4, 9, 9), np.float32), RNG.standard_normal((6, 4, 3, 3), np.float32)


def test_fused_matmul_and_convolution_equal_numpy():
    cases = [("nn.dense", [A, B], {}, A.astype(np.float64) @ B.T.astype(np.float64)),
             ("nn.conv2d", [X, W], {"padding": (1, 1, 1, 1)}, conv2d_reference(X, W, padding=1))]
    for name, args, attrs, expected in cases:
        loops = lower(single_op_module(name, args, attrs), to="loops")
        fused = FuseMultiplyAdd()(loops)
        assert not any(op.name == "arith.mulf" for op in fused.walk())
        program = NativeProgram(fused)
        assert "fmaf(" in program.source
        (got,) = program(*args)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got, NativeProgram(loops)(*args)[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(LoopsProgram(fused)(*args)[0], expected, rtol=1e-5, atol=1e-5)
