"""run() on ResNet-18 (64x64 input) against an independent reference evaluator written here.

The reference walks @main's ops itself (no xDSL interpreter, no runtime kernels) and evaluates
each with plain numpy: convolution as one tensordot per kernel tap on np.pad-ded float64 data.
"""

import numpy as np
import pytest

from xrelay.frontend import bind_params_by_name, resnet
from xrelay.runtime import run


def ref_conv(x, w, a):
    assert a["data_layout"] == "NCHW" and a["kernel_layout"] == "OIHW" and a["groups"] == 1
    assert tuple(a["dilation"]) == (1, 1)
    top, left, bottom, right = a["padding"]
    sh, sw = a["strides"]
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    kh, kw = w.shape[2:]
    oh, ow = (xp.shape[2] - kh) // sh + 1, (xp.shape[3] - kw) // sw + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i in range(kh):
        for j in range(kw):
            window = xp[:, :, i : i + sh * oh : sh, j : j + sw * ow : sw]
            out += np.tensordot(window, w[:, :, i, j], axes=([1], [1])).transpose(0, 3, 1, 2)
    return out


def ref_batch_norm(x, gamma, beta, mean, var, a):
    assert a["axis"] == 1
    ch = (slice(None), None, None)
    y = (x - mean[ch]) / np.sqrt(var[ch] + a["epsilon"])
    if a["scale"]:
        y = y * gamma[ch]
    if a["center"]:
        y = y + beta[ch]
    return y, mean, var


def ref_max_pool(x, a):
    assert a["layout"] == "NCHW" and not a["ceil_mode"] and tuple(a["dilation"]) == (1, 1)
    (kh, kw), (sh, sw) = a["pool_size"], a["strides"]
    top, left, bottom, right = a["padding"]
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=-np.inf)
    oh, ow = (xp.shape[2] - kh) // sh + 1, (xp.shape[3] - kw) // sw + 1
    out = np.full(x.shape[:2] + (oh, ow), -np.inf)
    for i in range(kh):
        for j in range(kw):
            out = np.maximum(out, xp[:, :, i : i + sh * oh : sh, j : j + sw * ow : sw])
    return out


def ref_softmax(x, a):
    e = np.exp(x - x.max(axis=a["axis"], keepdims=True))
    return e / e.sum(axis=a["axis"], keepdims=True)


REFERENCE = {
    "nn.conv2d": lambda a, x, w: ref_conv(x, w, a),
    "nn.batch_norm": lambda a, *xs: ref_batch_norm(*xs, a),
    "nn.relu": lambda a, x: np.maximum(x, 0),
    "nn.add": lambda a, x, y: x + y,
    "nn.max_pool2d": lambda a, x: ref_max_pool(x, a),
    "nn.global_avg_pool2d": lambda a, x: x.mean(axis=(2, 3), keepdims=True),
    "nn.batch_flatten": lambda a, x: x.reshape(x.shape[0], -1),
    "nn.dense": lambda a, x, w: x @ w.T,
    "nn.bias_add": lambda a, x, b: x + b.reshape((-1,) + (1,) * (x.ndim - 1 - a["axis"] % x.ndim)),
    "nn.softmax": lambda a, x: ref_softmax(x, a),
    "nn.constant": lambda a: a["value"],
}


def reference_forward(module, values):
    main = next(iter(module.ops))
    env = {arg: np.asarray(values[arg.name_hint], np.float64) for arg in main.body.block.args}
    for op in main.body.block.ops:
        operands = [env[v] for v in op.operands]
        if op.name == "func.return":
            return operands
        results = REFERENCE[op.name](op.attrs(), *operands)
        results = results if isinstance(results, tuple) else (results,)
        env.update(zip(op.results, results))
    raise AssertionError("@main has no func.return")


@pytest.fixture(scope="module")
def resnet18():
    module, params = resnet.get_workload(num_layers=18, image_shape=(3, 64, 64))
    rng = np.random.default_rng(5)
    for name in params:  # non-trivial batch-norm statistics, so a wrong BN would show
        if name.endswith("moving_mean") or name.endswith("beta"):
            params[name] = rng.uniform(-0.2, 0.2, params[name].shape).astype(np.float32)
        elif name.endswith("moving_var") or name.endswith("gamma"):
            params[name] = rng.uniform(0.7, 1.3, params[name].shape).astype(np.float32)
    data = rng.standard_normal((1, 3, 64, 64)).astype(np.float32)
    return module, params, data


def test_resnet18_unbound_matches_reference(resnet18):
    module, params, data = resnet18
    got = run(module, {"data": data}, params)
    (expected,) = reference_forward(module, {"data": data, **params})
    assert got.shape == (1, 1000) and got.dtype == np.float32
    assert expected.std() > 1e-5  # not a degenerate uniform distribution
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-7)


def test_resnet18_bound_params_give_the_same_output(resnet18):
    module, params, data = resnet18
    bound = bind_params_by_name(module, params)
    np.testing.assert_array_equal(run(bound, {"data": data}), run(module, {"data": data}, params))
