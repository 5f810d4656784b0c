"""SimplifyInference: batch_norm becomes a per-channel multiply and add with the same values."""

import numpy as np
import pytest

from xrelay import passes, transform
from xrelay.dialects import nn
from xrelay.frontend import tiny
from xrelay.runtime import run
from module_builder import make_module




def op_names(mod):
    """Names of the nn ops other than constants, in order."""
    return [op.name for op in mod.walk() if isinstance(op, nn.NNOp)]


def reference_batch_norm(x, gamma, beta, mean, var, axis, epsilon, center, scale):
    shape = [1] * x.ndim
    shape[axis] = -1
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + epsilon)
    if scale:
        y = y * gamma.reshape(shape)
    if center:
        y = y + beta.reshape(shape)
    return y


def test_info():
    assert passes.SimplifyInference().info == transform.PassInfo("SimplifyInference", 0, ("InferType",))


@pytest.mark.parametrize("seed", range(24))
def test_random_batch_norms(seed):
    """Random rank (2-4), axis, center/scale flags, epsilon, and constant or argument parameters."""
    rng = np.random.RandomState(seed)
    rank = rng.randint(2, 5)
    shape = tuple(int(d) for d in rng.randint(1, 5, size=rank))
    axis = int(rng.randint(-rank, rank))
    channels = shape[axis]
    epsilon = float(rng.choice([1e-5, 2e-5, 1e-3, 0.5]))
    center, scale = bool(rng.rand() < 0.7), bool(rng.rand() < 0.7)
    bound = bool(rng.rand() < 0.6)
    x = rng.randn(*shape).astype(np.float32)
    params = {
        "gamma": rng.uniform(-2, 2, channels).astype(np.float32),
        "beta": rng.randn(channels).astype(np.float32),
        "mean": rng.randn(channels).astype(np.float32),
        "var": rng.uniform(0.1, 3, channels).astype(np.float32),
    }
    arg_shapes = {"x": shape} if bound else {"x": shape, **{k: (channels,) for k in params}}

    def body(values, emit):
        operands = [emit(nn.ConstantOp(params[k])) if bound else values[k] for k in params]
        out, mean, var = emit(
            nn.BatchNormOp(values["x"], *operands, axis=axis, epsilon=epsilon, center=center, scale=scale)
        )
        return [out, mean, var]

    mod = make_module(arg_shapes, body)
    simplified = passes.SimplifyInference()(mod)
    simplified.verify()
    names = op_names(simplified)
    assert "nn.batch_norm" not in names
    if bound:  # the per-channel vectors are constants already shaped to broadcast: no expand_dims
        assert names == ["nn.multiply", "nn.add"]
        # mean and var stay (results 1 and 2 return them), gamma and beta are gone; scale, shift added
        assert sum(isinstance(op, nn.ConstantOp) for op in simplified.walk()) == 4
    out, mean, var = run(simplified, {"x": x}, None if bound else params)
    expected = reference_batch_norm(x, *params.values(), axis % rank, epsilon, center, scale)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(mean, params["mean"])
    np.testing.assert_array_equal(var, params["var"])


def test_constant_vectors_are_shaped_for_the_axis():
    x_shape = (1, 3, 2, 2)

    def body(values, emit):
        consts = [emit(nn.ConstantOp(np.full(3, v, np.float32))) for v in (2.0, 1.0, 0.0, 3.0)]
        return [emit(nn.BatchNormOp(values["x"], *consts, epsilon=1.0))[0]]

    out = passes.SimplifyInference()(make_module({"x": x_shape}, body))
    multiply = next(op for op in out.walk() if op.name == "nn.multiply")
    add = next(op for op in out.walk() if op.name == "nn.add")
    scale = multiply.operands[1].owner.numpy()
    shift = add.operands[1].owner.numpy()
    assert scale.shape == shift.shape == (3, 1, 1)
    np.testing.assert_allclose(scale.ravel(), [1.0, 1.0, 1.0])  # 2 / sqrt(3 + 1)
    np.testing.assert_allclose(shift.ravel(), [1.0, 1.0, 1.0])  # beta - mean * scale = 1 - 0
    assert add.operands[0] is multiply.results[0]


def test_tiny_model_unbound_params():
    mod, params = tiny.get_workload(batch_size=2)
    rng = np.random.RandomState(1)
    params["bn_moving_var"] = rng.uniform(0.5, 2, params["bn_moving_var"].shape).astype(np.float32)
    params["bn_moving_mean"] = rng.randn(*params["bn_moving_mean"].shape).astype(np.float32)
    data = rng.randn(2, 3, 8, 8).astype(np.float32)
    out = passes.SimplifyInference()(mod)
    assert "nn.batch_norm" not in op_names(out)
    assert op_names(out).count("nn.expand_dims") == 2  # scale and shift, Relay style
    np.testing.assert_allclose(run(out, {"data": data}, params), run(mod, {"data": data}, params), rtol=1e-5)
