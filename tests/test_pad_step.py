"""A "transpose" kernel (passes/kernels/form_kernels.py, runtime/executor/pad_step.py): a pad of a transposed
activation (a channel shuffle before a depthwise convolution's pad) copies once, from the transpose's input,
against numpy; an unrelated op in between does not stop it; run op by op, the transpose copies."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.linalg import ops as linalg

from xrelay.dialects.kernel import DispatchOp
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.executor.plan import FusedTail
from xrelay.runtime.parallel.threads import set_blas_threads

from module_builder import formed, generic4
from test_lowering_executor import parse, run_all_levels

X = "tensor<1x4x5x6xf32>"


def shuffle_then_pad(returns: str = "", returned: str = "") -> str:
    """ReLU(x), channel-shuffled (expand, transpose, collapse) and padded; and 2 * x; `returned` (of
    types `returns`) also returned."""
    relu = generic4("r", [("x", X)], X, ["%z = arith.constant 0.0 : f32", "%s = arith.maximumf %in0, %z : f32"])
    doubled = generic4("q", [("x", X)], X, ["%two = arith.constant 2.0 : f32", "%s = arith.mulf %in0, %two : f32"])
    return f"""
func.func @main(%x: {X}) -> (tensor<1x6x8x6xf32>, {X}{returns}) {{
  {relu}
  %g = tensor.expand_shape %r [[0], [1], [2], [3, 4]] output_shape [1, 4, 5, 2, 3] : {X} into tensor<1x4x5x2x3xf32>
  %e1 = tensor.empty() : tensor<1x4x5x3x2xf32>
  %t = linalg.transpose ins(%g : tensor<1x4x5x2x3xf32>) outs(%e1 : tensor<1x4x5x3x2xf32>) permutation = [0, 1, 2, 4, 3]
  {doubled}
  %s = tensor.collapse_shape %t [[0], [1], [2], [3, 4]] : tensor<1x4x5x3x2xf32> into {X}
  %p = tensor.pad %s low[0, 1, 2, 0] high[0, 1, 1, 0] {{
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    %c = arith.constant -1.5 : f32
    tensor.yield %c : f32
  }} : {X} to tensor<1x6x8x6xf32>
  func.return %p, %q{returned} : tensor<1x6x8x6xf32>, {X}{returns}
}}
"""


def expected_shuffle_pad(x: np.ndarray) -> np.ndarray:
    shuffled = np.maximum(x, 0).reshape(1, 4, 5, 2, 3).transpose(0, 1, 2, 4, 3).reshape(1, 4, 5, 6)
    return np.pad(shuffled, ((0, 0), (1, 1), (2, 1), (0, 0)), constant_values=-1.5)


def transposes_that_copy(program: LinalgProgram) -> int:
    return sum(isinstance(step, FusedTail) and isinstance(step.members[0][0].op, linalg.TransposeOp)
               for step in program.steps)


@pytest.mark.parametrize("threads", [1, 2])
def test_pad_of_a_single_use_shuffle_copies_from_the_transpose_input(threads):
    x = np.random.default_rng(1).standard_normal((1, 4, 5, 6)).astype(np.float32)
    module = formed(parse(shuffle_then_pad(returns="", returned="")))
    assert [op.root.data for op in module.walk() if isinstance(op, DispatchOp)] == ["transpose"]
    program = LinalgProgram(module)
    assert transposes_that_copy(program) == 0  # the transpose's step only binds its result
    assert transposes_that_copy(LinalgProgram(parse(shuffle_then_pad()))) == 1  # op by op: it copies
    set_blas_threads(threads)
    try:
        for _ in range(3):  # planned buffers are reused from run to run
            got, doubled = program(x)
            np.testing.assert_array_equal(got, expected_shuffle_pad(x))
            np.testing.assert_array_equal(doubled, 2 * x)
            x = x[:, ::-1].copy()
    finally:
        set_blas_threads(1)
    for level in run_all_levels(shuffle_then_pad(returns="", returned=""), {"x": x}):
        np.testing.assert_array_equal(level[0], expected_shuffle_pad(x))


def test_a_shuffle_read_elsewhere_is_still_copied():
    text = shuffle_then_pad(returns=", tensor<1x4x5x3x2xf32>", returned=", %t")
    x = np.random.default_rng(2).standard_normal((1, 4, 5, 6)).astype(np.float32)
    module = formed(parse(text))
    assert not [op for op in module.walk() if isinstance(op, DispatchOp) and op.root.data == "transpose"]
    program = LinalgProgram(module)
    assert transposes_that_copy(program) == 1
    padded, _, shuffled = program(x)
    np.testing.assert_array_equal(padded, expected_shuffle_pad(x))
    np.testing.assert_array_equal(shuffled, np.maximum(x, 0).reshape(1, 4, 5, 2, 3).transpose(0, 1, 2, 4, 3))
