"""A reduction of an input as it is over bare loops (a global average pool's sum, a softmax's max and
sum) runs as one `ufunc.reduce` of the input's view straight into the output's view
(reduction_programs._direct_reduce_program); against numpy written here, with the planned buffers
set to NaN before each run, the output's earlier contents folded in when its fill was kept, and
the path checked on the compiled op."""

import numpy as np
import pytest

from xrelay.dialects import nn
from xrelay.frontend import GraphBuilder
from xrelay.lowering import lower
from xrelay.runtime.kernels import linalg_structured
from xrelay.runtime.executor.linalg_exec import LinalgProgram

RNG = np.random.default_rng(47)


def module_of(op_class, shape, **attrs):
    b = GraphBuilder(None)
    return lower(b.finish(b.op(op_class, b.param("data", shape), **attrs)), to="linalg")


def reductions(module) -> list:
    return [op for op in module.walk() if isinstance(op, linalg_structured.Structured)
            and any(str(it.data) == "reduction" for it in op.get_iterator_types())]


def poison(program) -> None:
    for array in program._planned:
        if isinstance(array, np.ndarray) and array.flags.writeable and array.dtype.kind == "f":
            array[...] = np.nan


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
    (op,) = reductions(module)
    assert getattr(linalg_structured.compile_structured(op, [True]), "direct_reduce", False) is True


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
    ops = reductions(module)  # the max (only an input) is direct; the sum of exp(x - max) too
    assert len(ops) == 2
    assert all(getattr(linalg_structured.compile_structured(op, [True]), "direct_reduce", False) is True
               for op in ops)


def test_kept_fill_is_folded_in():
    """Without the fill dropped (zero_init False) the output's contents are combined with the reduction."""
    module = module_of(nn.GlobalAvgPool2DOp, (2, 5, 3, 7), layout="NHWC")
    (op,) = reductions(module)
    run = linalg_structured.compile_structured(op, [False])
    assert getattr(run, "direct_reduce", False) is True
    x = RNG.standard_normal((2, 5, 3, 7)).astype(np.float32)
    out = RNG.standard_normal((2, 1, 1, 7)).astype(np.float32)
    want = out.astype(np.float64) + x.astype(np.float64).sum(axis=(1, 2), keepdims=True)
    run([x, out])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_a_pooling_window_is_not_direct():
    module = module_of(nn.MaxPool2DOp, (1, 9, 9, 4), pool_size=(3, 3), strides=(2, 2), layout="NHWC")
    (op,) = reductions(module)
    assert not getattr(linalg_structured.compile_structured(op, [True]), "direct_reduce", False)
