"""xrelay.runtime.run on modules built from nn ops, against numpy forwards written here."""

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Block, Region

from xrelay.dialects import nn
from xrelay.runtime import KERNELS, KernelError, run

RNG = np.random.default_rng(2)


class Module:
    """Builds ``@main`` op by op: named tensor arguments, appended ops, ``finish(*results)``."""

    def __init__(self):
        self.block = Block()

    def arg(self, name, shape):
        value = self.block.insert_arg(TensorType(f32, shape), len(self.block.args))
        value.name_hint = name
        return value

    def __call__(self, op_class, *operands, **attrs):
        op = op_class(*operands, **attrs)
        self.block.add_op(op)
        return op

    def finish(self, *results):
        values = [r.results[0] if hasattr(r, "results") else r for r in results]
        self.block.add_op(func.ReturnOp(*values))
        arg_types = [a.type for a in self.block.args]
        main = func.FuncOp("main", (arg_types, [v.type for v in values]), Region(self.block))
        module = ModuleOp([main])
        module.verify()
        return module


# Numpy forward pieces, written independently of the runtime (einsum per tap on np.pad-ded data).
def np_conv_nchw(x, w, stride, pad, groups=1):
    top, left, bottom, right = pad
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
    o, cg, kh, kw = w.shape
    oh = (xp.shape[2] - kh) // stride + 1
    ow = (xp.shape[3] - kw) // stride + 1
    og = o // groups
    out = np.zeros((x.shape[0], o, oh, ow))
    for g in range(groups):
        xs = xp[:, g * cg : (g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                window = xs[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
                out[:, g * og : (g + 1) * og] += np.einsum("ncyx,oc->noyx", window, w[g * og : (g + 1) * og, :, i, j])
    return out


def np_max_pool_nchw(x, k, stride, pad, out_hw):
    top, left = pad
    h_need = (out_hw[0] - 1) * stride + k - x.shape[2] - top
    w_need = (out_hw[1] - 1) * stride + k - x.shape[3] - left
    xp = np.pad(x, ((0, 0), (0, 0), (top, h_need), (left, w_need)), constant_values=-np.inf)
    out = np.full(x.shape[:2] + out_hw, -np.inf)
    for i in range(out_hw[0]):
        for j in range(out_hw[1]):
            out[:, :, i, j] = xp[:, :, i * stride : i * stride + k, j * stride : j * stride + k].max(axis=(2, 3))
    return out


def build_small_model():
    """conv/bn/relu (NCHW) -> grouped strided conv (NHWC, HWIO) -> ceil max pool -> arithmetic
    with constants -> global pool -> dense/bias_add -> expand_dims/reshape/transpose -> softmax."""
    m = Module()
    data = m.arg("data", [1, 3, 9, 9])
    w0 = m.arg("conv0_weight", [4, 3, 3, 3])
    gamma, beta, mean, var = (m.arg(f"bn_{n}", [4]) for n in ("gamma", "beta", "moving_mean", "moving_var"))
    w1 = m.arg("conv1_weight", [6, 2, 3, 3])
    fc_w, fc_b = m.arg("fc_weight", [5, 6]), m.arg("fc_bias", [5])

    c0 = m(nn.Conv2DOp, data, w0, padding=(1, 1, 1, 1), channels=4, kernel_size=(3, 3))
    bn = m(nn.BatchNormOp, c0, gamma, beta, mean, var, epsilon=1e-3)
    r = m(nn.ReluOp, bn.results[0])
    t = m(nn.LayoutTransformOp, r, src_layout="NCHW", dst_layout="NHWC")
    wt = m(nn.LayoutTransformOp, w1, src_layout="OIHW", dst_layout="HWIO")
    c1 = m(nn.Conv2DOp, t, wt, strides=(2, 2), padding=(0, 1, 2, 1), groups=2,
           data_layout="NHWC", kernel_layout="HWIO")
    p = m(nn.MaxPool2DOp, c1, pool_size=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1), layout="NHWC", ceil_mode=True)
    back = m(nn.LayoutTransformOp, p, src_layout="NHWC", dst_layout="NCHW")
    scale = m(nn.ConstantOp, np.linspace(0.5, 2.0, 6, dtype=np.float32).reshape(6, 1, 1))
    shift = m(nn.ConstantOp, np.array([0.25], np.float32))
    y = m(nn.AddOp, m(nn.MultiplyOp, back, scale), shift)
    y = m(nn.SubtractOp, m(nn.SqrtOp, m(nn.MultiplyOp, y, y)), m(nn.NegativeOp, shift))  # |y| + 0.25
    y = m(nn.DivideOp, y, scale)
    g = m(nn.GlobalAvgPool2DOp, y)
    f = m(nn.BatchFlattenOp, g)
    d = m(nn.BiasAddOp, m(nn.DenseOp, f, fc_w, units=5), fc_b, axis=-1)
    e = m(nn.ExpandDimsOp, d, axis=1, num_newaxis=2)  # (1, 1, 1, 5)
    rs = m(nn.ReshapeOp, e, newshape=(0, 0, -1))  # Relay codes -> (1, 1, 5)
    tr = m(nn.TransposeOp, rs, axes=(0, 2, 1))  # (1, 5, 1)
    out = m(nn.SoftmaxOp, m(nn.ReshapeOp, tr, newshape=(0, -1)), axis=-1)
    return m.finish(out, back)


def small_params():
    return {
        "conv0_weight": RNG.standard_normal((4, 3, 3, 3)).astype(np.float32),
        "bn_gamma": RNG.uniform(0.5, 1.5, 4).astype(np.float32),
        "bn_beta": RNG.standard_normal(4).astype(np.float32),
        "bn_moving_mean": RNG.standard_normal(4).astype(np.float32),
        "bn_moving_var": RNG.uniform(0.5, 2.0, 4).astype(np.float32),
        "conv1_weight": RNG.standard_normal((6, 2, 3, 3)).astype(np.float32),
        "fc_weight": RNG.standard_normal((5, 6)).astype(np.float32),
        "fc_bias": RNG.standard_normal(5).astype(np.float32),
    }


def numpy_forward(x, p):
    c0 = np_conv_nchw(x, p["conv0_weight"], 1, (1, 1, 1, 1))
    ch = (slice(None), None, None)
    bn = (c0 - p["bn_moving_mean"][ch]) / np.sqrt(p["bn_moving_var"][ch] + 1e-3) * p["bn_gamma"][ch] + p["bn_beta"][ch]
    r = np.maximum(bn, 0)
    c1 = np_conv_nchw(r, p["conv1_weight"], 2, (0, 1, 2, 1), groups=2)  # (1, 6, 5, 5)
    pooled = np_max_pool_nchw(c1, 3, 2, (1, 1), (3, 3))  # ceil((5 + 2 - 3) / 2) + 1 = 3
    scale = np.linspace(0.5, 2.0, 6).reshape(6, 1, 1)
    y = (np.abs(pooled * scale + 0.25) + 0.25) / scale
    logits = y.mean(axis=(2, 3)) @ p["fc_weight"].T + p["fc_bias"]
    e = np.exp(logits - logits.max())
    return e / e.sum(), pooled


def test_run_small_model_matches_numpy_forward():
    module = build_small_model()
    x = RNG.standard_normal((1, 3, 9, 9)).astype(np.float32)
    params = small_params()
    probs, pooled = run(module, {"data": x}, params)
    exp_probs, exp_pooled = numpy_forward(x, params)
    assert probs.dtype == np.float32 and probs.shape == (1, 5)
    assert pooled.shape == (1, 6, 3, 3)
    np.testing.assert_allclose(pooled, exp_pooled, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(probs, exp_probs, rtol=1e-4, atol=1e-6)


def test_single_result_comes_back_as_an_array():
    m = Module()
    a = m.arg("data", [2, 3])
    module = m.finish(m(nn.ReluOp, a))
    out = run(module, {"data": np.array([[-1, 2, -3], [4, -5, 6]], np.float32)})
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, [[0, 2, 0], [4, 0, 6]])


def test_returned_constant_is_writable_copy():
    m = Module()
    m.arg("data", [1])
    module = m.finish(m(nn.ConstantOp, np.array([1.0, 2.0], np.float32)))
    out = run(module, {"data": np.zeros(1, np.float32)})
    out[0] = 5.0  # constants are read-only views inside the module; run hands back a copy
    np.testing.assert_array_equal(module.body.block.ops.first.body.block.ops.first.numpy(), [1.0, 2.0])


def _tiny():
    m = Module()
    a, b = m.arg("data", [2, 3]), m.arg("bias", [3])
    return m.finish(m(nn.AddOp, a, b))


def test_argument_errors_name_the_argument():
    module = _tiny()
    data, bias = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    with pytest.raises(ValueError, match=r"missing .*'bias'"):
        run(module, {"data": data})
    with pytest.raises(ValueError, match=r"no argument\(s\) \['extra'\]"):
        run(module, {"data": data}, {"bias": bias, "extra": bias})
    with pytest.raises(ValueError, match=r"'data' has shape \(3, 2\).*\(2, 3\)"):
        run(module, {"data": data.T}, {"bias": bias})
    with pytest.raises(ValueError, match=r"'bias'.*both"):
        run(module, {"data": data, "bias": bias}, {"bias": bias})
    with pytest.raises(ValueError, match=r"'bias' has dtype int64"):
        run(module, {"data": data}, {"bias": np.ones(3, np.int64)})


def test_float64_inputs_are_cast_to_the_argument_dtype():
    out = run(_tiny(), {"data": np.ones((2, 3)), "bias": np.arange(3.0)})
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[1, 2, 3], [1, 2, 3]])


def test_kernel_failure_is_a_kernel_error_naming_the_op(monkeypatch):
    def broken(attrs, lhs, rhs):
        raise ValueError("boom")

    monkeypatch.setitem(KERNELS, nn.AddOp, broken)
    with pytest.raises(KernelError, match=r"nn.add on operands of shapes \(\(2, 3\), \(3,\)\): boom"):
        run(_tiny(), {"data": np.ones((2, 3), np.float32), "bias": np.ones(3, np.float32)})


@pytest.mark.parametrize("level", ["linalg", "memref", "loops"])
def test_run_executes_lowered_modules(level):
    from xrelay.lowering import lower
    from xrelay.runtime.reference.interpreter import execution_level, find_main

    lowered = lower(build_small_model(), to=level)
    assert execution_level(find_main(lowered)) == ("loops" if level == "loops" else "linalg")
    x = RNG.standard_normal((1, 3, 9, 9)).astype(np.float32)
    params = small_params()
    probs, pooled = run(lowered, {"data": x}, params)
    exp_probs, exp_pooled = numpy_forward(x, params)
    np.testing.assert_allclose(pooled, exp_pooled, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(probs, exp_probs, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="missing .*'fc_bias'"):
        run(lowered, {"data": x}, {k: v for k, v in params.items() if k != "fc_bias"})
