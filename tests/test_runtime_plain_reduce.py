"""Reductions without windows (a global average pool's sum, a softmax's sum and max) run as one
`ufunc.reduce` call (linalg_structured.compile_structured) instead of one ufunc call per reduced point, and
write their output whole, so the fill of their identity before them is dropped
(linalg_exec._elide_zero_fill); against numpy written here, with every planned buffer set to NaN
before each run (an output the dropped fill left unwritten shows up), the path checked on the
compiled op and the fills' steps counted."""

import numpy as np
from module_builder import formed
import pytest

from xrelay.dialects import nn
from xrelay.frontend import GraphBuilder
from xrelay.lowering import lower
from xrelay.runtime.kernels import linalg_structured
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.kernels.linalg_structured import plain_reduction_identity

RNG = np.random.default_rng(31)


def module_of(op_class, shape, **attrs):
    b = GraphBuilder(None)
    return lower(b.finish(b.op(op_class, b.param("data", shape), **attrs)), to="linalg")


def reductions(module) -> list:
    """The linalg ops of `module` with a reduction loop."""
    return [op for op in module.walk() if isinstance(op, linalg_structured.Structured)
            and any(str(it.data) == "reduction" for it in op.get_iterator_types())]


@pytest.mark.parametrize("shape, layout", [((1, 7, 7, 24), "NHWC"), ((2, 3, 3, 5), "NHWC"), ((2, 6, 5, 4), "NCHW"),
                                           ((1, 1, 1, 8), "NHWC")])
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
    assert linalg_structured.compile_structured(op, [True]).tap_by_tap is False
    assert plain_reduction_identity(op, 0) == 0.0
    assert fills_run(program) == 0


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
    assert len(ops) == 2 and [plain_reduction_identity(op, 0) for op in ops] == [-np.inf, 0.0]
    assert fills_run(program) == 0


def test_a_pooling_window_is_still_folded_tap_by_tap():
    """A max pool's window (the input read at oh * s + kh) is not plain: tap by tap, as before."""
    module = module_of(nn.MaxPool2DOp, (1, 9, 9, 4), pool_size=(3, 3), strides=(2, 2), layout="NHWC")
    (op,) = reductions(module)
    assert linalg_structured.compile_structured(op, [True]).tap_by_tap
