"""Elementwise ops whose body is a chain of ufuncs (a softmax's exp(x - max), a sigmoid) run as those
calls into the output view, and ops yielding an input as it is (a transpose) as one copy between
views (elementwise_programs.ufunc_program); against numpy written here, twice
on the same planned buffers (the kept views), with the path checked on the compiled ops."""

import numpy as np
from module_builder import single_op_linalg as module_of, structured_ops
import pytest

from xrelay.dialects import nn
from xrelay.runtime.kernels import linalg_structured
from xrelay.runtime.executor.linalg_exec import LinalgProgram

RNG = np.random.default_rng(53)


def elementwise(module) -> list:
    return structured_ops(module, "parallel")


def taken(module, attribute: str) -> int:
    return sum(bool(getattr(linalg_structured.compile_structured(op, [False] * len(op.outputs)), attribute, False))
               for op in elementwise(module))


@pytest.mark.parametrize("shape", [(1, 1000), (3, 7), (2, 1)])
def test_softmax_exp_of_difference(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    module = module_of(nn.SoftmaxOp, shape)
    program = LinalgProgram(module)
    for scale in (1.0, -2.0):
        z = x.astype(np.float64) * scale
        y = np.exp(z - z.max(axis=1, keepdims=True))
        np.testing.assert_allclose(program(x * np.float32(scale))[0], y / y.sum(axis=1, keepdims=True),
                                   rtol=1e-5, atol=1e-7)
    assert taken(module, "ufunc_chain") == 1  # the subf/exp body (the divide is one ufunc)


@pytest.mark.parametrize("shape", [(1, 5, 3, 2), (7,)])
def test_sigmoid(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    module = module_of(nn.SigmoidOp, shape)
    program = LinalgProgram(module)
    for scale in (1.0, 3.0):
        np.testing.assert_allclose(program(x * np.float32(scale))[0],
                                   1 / (1 + np.exp(-x.astype(np.float64) * scale)), rtol=1e-5, atol=1e-7)
    assert taken(module, "ufunc_chain") == 1


@pytest.mark.parametrize("shape, axes", [((1, 1, 1, 512), (0, 3, 1, 2)), ((2, 3, 4, 5), (0, 3, 1, 2)),
                                         ((3, 1), (1, 0))])
def test_transpose_is_a_copy(shape, axes):
    x = RNG.standard_normal(shape).astype(np.float32)
    module = module_of(nn.TransposeOp, shape, axes=axes)
    program = LinalgProgram(module)
    for scale in (1.0, -1.5):
        np.testing.assert_array_equal(program(x * np.float32(scale))[0], np.transpose(x * np.float32(scale), axes))
    assert taken(module, "direct_copy") == 1
