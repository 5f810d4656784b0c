"""Reductions without windows (a global average pool's sum, a softmax's sum and max) run as one
`ufunc.reduce` call (linalg_structured.compile_structured) of the input's view straight into the
output's view (reduction_programs.reduce_into) instead of one ufunc call per reduced
point, and write their output whole, so the fill of their identity before them is dropped
(linalg_exec._elide_zero_fill); a kept fill's contents are folded in. Against numpy written here,
with every planned buffer set to NaN before each run (an output the dropped fill left unwritten
shows up), the path checked on the compiled op and the fills' steps counted."""

import numpy as np
from module_builder import formed, single_op_linalg as module_of, structured_ops
import pytest

from xrelay.dialects import nn
from xrelay.runtime.kernels import linalg_structured
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.kernels.linalg_structured import overwritten_identity

RNG = np.random.default_rng(31)


def reductions(module) -> list:
    """The linalg ops of `module` with a reduction loop."""
    return structured_ops(module, "reduction")


@pytest.mark.parametrize("shape, layout", [((1, 7, 7, 24), "NHWC"), ((2, 3, 3, 5), "NHWC"), ((2, 6, 5, 4), "NCHW"),
                                           ((1, 1, 1, 8), "NHWC"), ((1, 3, 2, 300), "NHWC")])
def test_global_average_pool_is_one_reduce(shape, layout):
    module = module_of(nn.GlobalAvgPool2DOp, shape, layout=layout)
    x = RNG.standard_normal(shape).astype(np.float32)
    axes = (1, 2) if layout == "NHWC" else (2, 3)
    want = x.astype(np.float64).mean(axis=axes, keepdims=True)
    program = LinalgProgram(formed(module))
    for scale in (1.0, -3.0):  # again on the same planned buffers
        poison(program)
        np.testing.assert_allclose(program(x * np.float32(scale))[0], want * scale, rtol=1e-5, atol=1e-6)
    (op,) = reductions(module)
    assert overwritten_identity(op, 0) == 0.0
    assert fills_run(program) == 0


def test_several_axes_with_few_values_after_them_reduce_one_at_a_time():
    """A global pool over NHWC with fewer than MAX_STEPWISE_INNER channels is reduced by H, then by
    W (numpy's loop over both at once is slow for few channels); with more, or axes not in memory
    order, in one call."""
    from xrelay.runtime.kernels.reduction_programs import _stepwise

    x = np.zeros((1, 7, 7, 24), np.float32)
    assert _stepwise(x, (1, 2))
    assert not _stepwise(np.zeros((1, 3, 2, 300), np.float32), (1, 2))
    assert not _stepwise(x.transpose(0, 2, 1, 3), (1, 2))  # W's stride before H's: as one


def poison(program) -> None:
    for array in program._planned:
        if isinstance(array, np.ndarray) and array.flags.writeable and array.dtype.kind == "f":
            array[...] = np.nan


def fills_run(program) -> int:
    """How many `linalg.fill` ops of the program still have a step that writes memory."""
    from xdsl.dialects.linalg.ops import FillOp

    return sum(1 for op, (index, _) in program.fill_steps.items() if isinstance(op, FillOp))


def test_softmax_reductions_are_plain_and_right():
    x = RNG.standard_normal((3, 40)).astype(np.float32)
    module = module_of(nn.SoftmaxOp, x.shape)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    program = LinalgProgram(formed(module))
    for scale in (1.0, 0.5):
        poison(program)
        y = e ** scale
        np.testing.assert_allclose(program(x * np.float32(scale))[0], y / y.sum(axis=1, keepdims=True),
                                   rtol=1e-5, atol=1e-7)
    ops = reductions(module)
    assert len(ops) == 2 and [overwritten_identity(op, 0) for op in ops] == [-np.inf, 0.0]
    assert fills_run(program) == 0


@pytest.mark.parametrize("shape, layout", [((1, 7, 7, 24), "NHWC"), ((2, 3, 3, 5), "NHWC"), ((2, 6, 5, 4), "NCHW"),
                                           ((1, 1, 1, 8), "NHWC"), ((3, 1, 1, 1), "NHWC")])
def test_global_average_pool(shape, layout):
    module = module_of(nn.GlobalAvgPool2DOp, shape, layout=layout)
    x = RNG.standard_normal(shape).astype(np.float32)
    want = x.astype(np.float64).mean(axis=(1, 2) if layout == "NHWC" else (2, 3), keepdims=True)
    program = LinalgProgram(module)
    for scale in (1.0, -3.0):  # again on the same planned buffers (the kept views)
        poison(program)
        np.testing.assert_allclose(program(x * np.float32(scale))[0], want * scale, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(3, 40), (1, 1000), (2, 1)])
def test_softmax(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    module = module_of(nn.SoftmaxOp, x.shape)
    program = LinalgProgram(module)
    for scale in (1.0, 0.5):
        poison(program)
        y = np.exp(x.astype(np.float64) * scale - (x.astype(np.float64) * scale).max(axis=1, keepdims=True))
        np.testing.assert_allclose(program(x * np.float32(scale))[0], y / y.sum(axis=1, keepdims=True),
                                   rtol=1e-5, atol=1e-7)
    assert len(reductions(module)) == 2


def test_kept_fill_is_folded_in():
    """Without the fill dropped (zero_init False) the output's contents are combined with the reduction."""
    module = module_of(nn.GlobalAvgPool2DOp, (2, 5, 3, 7), layout="NHWC")
    (op,) = reductions(module)
    run = linalg_structured.compile_structured(op, [False])
    x = RNG.standard_normal((2, 5, 3, 7)).astype(np.float32)
    out = RNG.standard_normal((2, 1, 1, 7)).astype(np.float32)
    want = out.astype(np.float64) + x.astype(np.float64).sum(axis=(1, 2), keepdims=True)
    run([x, out])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)

