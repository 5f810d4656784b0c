"""CanonicalizeOps (bias_add -> add) and DeadCodeElimination."""

import numpy as np
import pytest

from xrelay import passes, transform
from xrelay.dialects import nn
from xrelay.runtime import run
from module_builder import make_module




def names(mod):
    return [op.name for op in mod.walk() if isinstance(op, (nn.NNOp, nn.ConstantOp))]


@pytest.mark.parametrize(
    "shape, axis, bound, expected_ops",
    [
        ((1, 5), -1, True, ["nn.constant", "nn.add"]),
        ((1, 5), 1, False, ["nn.add"]),  # axis 1 is the last axis of 2-D data
        ((2, 3, 4, 4), 1, True, ["nn.constant", "nn.add"]),  # stored as (3, 1, 1)
        ((2, 3, 4, 4), 1, False, ["nn.expand_dims", "nn.add"]),
        ((2, 4, 4, 3), -1, False, ["nn.add"]),
        ((2, 4, 3, 4), -2, False, ["nn.expand_dims", "nn.add"]),
        ((3, 2), 0, True, ["nn.constant", "nn.add"]),
    ],
)
def test_bias_add_becomes_add(shape, axis, bound, expected_ops):
    rng = np.random.RandomState(len(shape) + axis)
    x = rng.randn(*shape).astype(np.float32)
    bias = rng.randn(shape[axis]).astype(np.float32)

    def body(values, emit):
        b = emit(nn.ConstantOp(bias)) if bound else values["b"]
        return [emit(nn.BiasAddOp(values["x"], b, axis=axis))]

    mod = make_module({"x": shape} if bound else {"x": shape, "b": bias.shape}, body)
    with transform.PassContext(opt_level=3):
        out = passes.CanonicalizeOps()(mod)
    assert names(out) == expected_ops
    along = [1] * len(shape)
    along[axis] = -1
    got = run(out, {"x": x}, {} if bound else {"b": bias})
    np.testing.assert_allclose(got, x + bias.reshape(along), rtol=1e-6)


def test_canonicalize_info():
    assert passes.CanonicalizeOps().info == transform.PassInfo("CanonicalizeOps", 3, ("InferType",))


def test_dead_code_elimination():
    def body(values, emit):
        c = emit(nn.ConstantOp(np.ones(3, np.float32)))
        dead = emit(nn.ReluOp(emit(nn.AddOp(values["x"], c))))
        emit(nn.SoftmaxOp(dead))
        live = emit(nn.NegativeOp(values["x"]))
        return [live]

    mod = make_module({"x": (2, 3)}, body)
    assert passes.DeadCodeElimination().info == transform.PassInfo("DeadCodeElimination", 1, ())
    out = passes.DeadCodeElimination()(mod)
    assert names(out) == ["nn.negative"]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(run(out, {"x": x}), -x)
