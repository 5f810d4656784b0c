"""Backward/ForwardFoldScaleAxis and the FoldScaleAxis Sequential: folding, blocking, outputs."""

import numpy as np
import pytest

from tool_passes import PassNames

from xrelay import passes, transform
from xrelay.dialects import nn
from xrelay.passes.fold_scale_axis import along
from xrelay.runtime import run
from module_builder import make_module




def count(mod, name):
    return sum(op.name == name for op in mod.walk())


def per_channel(rng, channels, axis, ndim, positive):
    """A random per-channel vector in one of the shapes that broadcast along `axis`."""
    vector = rng.uniform(0.5, 2.0, channels) * (1 if positive else rng.choice([-1, 1], channels))
    full = [1] * ndim
    full[axis] = channels
    shapes = [tuple(full), tuple(full[axis:])]
    return vector.astype(np.float32).reshape(shapes[rng.randint(len(shapes))])


def random_conv(rng, data_layout, in_channels, groups):
    out_channels = groups * int(rng.randint(1, 4))
    kh, kw = (int(k) for k in rng.randint(1, 4, size=2))
    kernel_layout = "OIHW" if data_layout == "NCHW" else ["HWIO", "OHWI"][rng.randint(2)]
    oihw = (out_channels, in_channels // groups, kh, kw)
    weight_shape = tuple(oihw["OIHW".index(c)] for c in kernel_layout)
    attrs = dict(
        strides=tuple(int(s) for s in rng.randint(1, 3, size=2)),
        padding=tuple(int(p) for p in rng.randint(0, 2, size=4)),
        groups=groups,
        data_layout=data_layout,
        kernel_layout=kernel_layout,
    )
    return weight_shape, attrs, out_channels


@pytest.mark.parametrize("seed", range(16))
def test_backward_random(seed):
    rng = np.random.RandomState(seed)
    layout = ["NCHW", "NHWC"][seed % 2]
    groups = [1, 2][rng.randint(2)]
    in_channels = 2 * groups
    spatial = tuple(int(d) for d in rng.randint(3, 6, size=2))
    shape = (1, in_channels, *spatial) if layout == "NCHW" else (1, *spatial, in_channels)
    weight_shape, attrs, out_channels = random_conv(rng, layout, in_channels, groups)
    bound = bool(rng.rand() < 0.5)
    weight = rng.randn(*weight_shape).astype(np.float32)
    scale = per_channel(rng, out_channels, layout.index("C"), 4, positive=False)
    x = rng.randn(*shape).astype(np.float32)

    def body(values, emit):
        w = emit(nn.ConstantOp(weight)) if bound else values["w"]
        conv = emit(nn.Conv2DOp(values["x"], w, **attrs))
        s = emit(nn.ConstantOp(scale))
        operands = (conv, s) if seed % 3 else (s, conv)  # the constant on either side
        return [emit(nn.MultiplyOp(*operands))]

    mod = make_module({"x": shape} if bound else {"x": shape, "w": weight_shape}, body)
    params = {} if bound else {"w": weight}
    expected = run(mod, {"x": x}, params)
    with transform.PassContext(opt_level=3):
        out = passes.BackwardFoldScaleAxis()(mod)
        folded = passes.FoldConstant()(out)
    last = folded.body.block.first_op.body.block.last_op.operands[0].owner
    assert last.name == "nn.conv2d"  # the multiply after the conv is gone
    assert count(folded, "nn.multiply") == (0 if bound else 1)  # an unbound weight keeps w * s
    np.testing.assert_allclose(run(out, {"x": x}, params), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(run(folded, {"x": x}, params), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("seed", range(16))
def test_forward_random(seed):
    rng = np.random.RandomState(100 + seed)
    layout = ["NCHW", "NHWC"][seed % 2]
    channels = int(rng.randint(1, 4))
    spatial = tuple(int(d) for d in rng.randint(3, 6, size=2))
    shape = (2, channels, *spatial) if layout == "NCHW" else (2, *spatial, channels)
    axis = layout.index("C")
    with_add, with_relu = bool(seed & 2), bool(seed & 4)
    consumers = 1 + (seed & 8 > 0)
    convs = [random_conv(rng, layout, channels, 1) for _ in range(consumers)]
    weights = [rng.randn(*w).astype(np.float32) for w, _, _ in convs]
    scale = per_channel(rng, channels, axis, 4, positive=True)
    bias = per_channel(rng, channels, axis, 4, positive=False)
    x = rng.randn(*shape).astype(np.float32)

    def body(values, emit):
        v = emit(nn.MultiplyOp(values["x"], emit(nn.ConstantOp(scale))))
        if with_add:
            v = emit(nn.AddOp(v, emit(nn.ConstantOp(bias))))
        if with_relu:
            v = emit(nn.ReluOp(v))
        return [emit(nn.Conv2DOp(v, emit(nn.ConstantOp(w)), **attrs)) for w, (_, attrs, _) in zip(weights, convs)]

    mod = make_module({"x": shape}, body)
    expected = run(mod, {"x": x})
    with transform.PassContext(opt_level=3):
        out = passes.FoldScaleAxis()(mod)
    assert count(out, "nn.multiply") == 0
    got = run(out, {"x": x})
    for g, e in zip(got if consumers > 1 else [got], expected if consumers > 1 else [expected]):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def forward_case(scale, consumer):
    def body(values, emit):
        v = emit(nn.ReluOp(emit(nn.MultiplyOp(values["x"], emit(nn.ConstantOp(scale))))))
        w = emit(nn.ConstantOp(np.ones((2, 2, 1, 1), np.float32)))
        outs = [emit(nn.Conv2DOp(v, w))]
        if consumer:
            outs.append(emit(consumer(v)))
        return outs

    return make_module({"x": (1, 2, 2, 2)}, body)


@pytest.mark.parametrize(
    "scale, consumer",
    [
        (np.array([[[-1.0]], [[2.0]]], np.float32), None),  # relu needs positive scales
        (np.array([[[1.0, 2.0]], [[1.0, 2.0]]], np.float32), None),  # varies along W too
        (np.array([[[1.0]], [[2.0]]], np.float32), nn.NegativeOp),  # a non-conv user of the chain
    ],
)
def test_forward_blocked(scale, consumer):
    mod = forward_case(scale, consumer)
    with transform.PassContext(opt_level=3):
        out = passes.ForwardFoldScaleAxis()(mod)
    assert str(out) == str(mod)


def test_backward_blocked_when_conv_has_another_user():
    def body(values, emit):
        conv = emit(nn.Conv2DOp(values["x"], emit(nn.ConstantOp(np.ones((2, 2, 1, 1), np.float32)))))
        scaled = emit(nn.MultiplyOp(conv, emit(nn.ConstantOp(np.array([[[2.0]], [[3.0]]], np.float32)))))
        return [scaled, emit(nn.ReluOp(conv))]

    mod = make_module({"x": (1, 2, 2, 2)}, body)
    with transform.PassContext(opt_level=3):
        assert str(passes.BackwardFoldScaleAxis()(mod)) == str(mod)


def test_dense_backward_matches_numpy():
    rng = np.random.RandomState(7)
    x, w = rng.randn(3, 4).astype(np.float32), rng.randn(5, 4).astype(np.float32)
    s = rng.randn(5).astype(np.float32)

    def body(values, emit):
        dense = emit(nn.DenseOp(values["x"], emit(nn.ConstantOp(w))))
        return [emit(nn.MultiplyOp(dense, emit(nn.ConstantOp(s))))]

    with transform.PassContext(opt_level=3):
        out = passes.FoldScaleAxis()(make_module({"x": (3, 4)}, body))
    assert count(out, "nn.multiply") == 0 and count(out, "nn.dense") == 1
    np.testing.assert_allclose(run(out, {"x": x}), (x @ w.T) * s, rtol=1e-5, atol=1e-6)


def test_dense_through_bias_and_shift_matches_numpy():
    """(x @ w.T + b0) * s + b1, then relu: the scale crosses the bias into the weight and the two
    constant adds merge into one, leaving dense -> add -> relu."""
    rng = np.random.RandomState(3)
    x, w = rng.randn(3, 4).astype(np.float32), rng.randn(5, 4).astype(np.float32)
    b0, s, b1 = (rng.randn(5).astype(np.float32) for _ in range(3))

    def body(values, emit):
        dense = emit(nn.DenseOp(values["x"], emit(nn.ConstantOp(w))))
        biased = emit(nn.AddOp(emit(nn.ConstantOp(b0)), dense))  # the constant on either side
        scaled = emit(nn.MultiplyOp(biased, emit(nn.ConstantOp(s))))
        return [emit(nn.ReluOp(emit(nn.AddOp(scaled, emit(nn.ConstantOp(b1))))))]

    with transform.PassContext(opt_level=3):
        out = passes.FoldScaleAxis()(make_module({"x": (3, 4)}, body))
    assert [op.name for op in out.walk() if op.name.startswith("nn.") and op.name != "nn.constant"] == [
        "nn.dense", "nn.add", "nn.relu"]
    np.testing.assert_allclose(run(out, {"x": x}), np.maximum((x @ w.T + b0) * s + b1, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_two_scale_shift_pairs_become_one(layout):
    """DenseNet's BN + Scale after a concat: ((x * s1 + b1) * s2 + b2) is one multiply and one add."""
    rng = np.random.RandomState(5)
    shape = (1, 3, 4, 5) if layout == "NCHW" else (1, 4, 5, 3)
    axis = layout.index("C")
    s1, b1, s2, b2 = (per_channel(rng, 3, axis, 4, positive=False) for _ in range(4))
    x, y = rng.randn(*shape).astype(np.float32), rng.randn(*shape).astype(np.float32)

    def body(values, emit):
        joined = emit(nn.AddOp(values["x"], values["y"]))  # no constant to fold into
        chain = joined
        for scale, shift in ((s1, b1), (s2, b2)):
            chain = emit(nn.AddOp(emit(nn.MultiplyOp(chain, emit(nn.ConstantOp(scale)))), emit(nn.ConstantOp(shift))))
        return [emit(nn.ReluOp(chain))]

    with transform.PassContext(opt_level=3):
        out = passes.FoldScaleAxis()(make_module({"x": shape, "y": shape}, body))
    assert (count(out, "nn.multiply"), count(out, "nn.add")) == (1, 2)
    expected = np.maximum(((x + y) * s1 + b1) * s2 + b2, 0)
    np.testing.assert_allclose(run(out, {"x": x, "y": y}), expected, rtol=1e-5, atol=1e-5)


def test_scale_does_not_cross_an_add_with_another_user():
    def body(values, emit):
        conv = emit(nn.Conv2DOp(values["x"], emit(nn.ConstantOp(np.ones((2, 2, 1, 1), np.float32)))))
        biased = emit(nn.AddOp(conv, emit(nn.ConstantOp(np.array([[[1.0]], [[2.0]]], np.float32)))))
        scaled = emit(nn.MultiplyOp(biased, emit(nn.ConstantOp(np.array([[[2.0]], [[3.0]]], np.float32)))))
        return [scaled, emit(nn.ReluOp(biased))]

    mod = make_module({"x": (1, 2, 2, 2)}, body)
    with transform.PassContext(opt_level=3):
        assert str(passes.BackwardFoldScaleAxis()(mod)) == str(mod)


@pytest.mark.parametrize("seed", range(8))
def test_backward_through_adds_random(seed):
    """conv -> add(b0) -> multiply(s) -> add(b1) in either layout, grouped or not: the conv is
    followed by one add, and the output is unchanged."""
    rng = np.random.RandomState(100 + seed)
    layout = ["NCHW", "NHWC"][seed % 2]
    groups = [1, 2][rng.randint(2)]
    in_channels = 2 * groups
    shape = (1, in_channels, 5, 4) if layout == "NCHW" else (1, 5, 4, in_channels)
    weight_shape, attrs, out_channels = random_conv(rng, layout, in_channels, groups)
    weight = rng.randn(*weight_shape).astype(np.float32)
    b0, s, b1 = (per_channel(rng, out_channels, layout.index("C"), 4, positive=False) for _ in range(3))
    x = rng.randn(*shape).astype(np.float32)

    bias_add = seed % 4 >= 2  # the conv's bias as nn.bias_add of a vector (as imported from ONNX)

    def body(values, emit):
        conv = emit(nn.Conv2DOp(values["x"], emit(nn.ConstantOp(weight)), **attrs))
        if bias_add:
            biased = emit(nn.BiasAddOp(conv, emit(nn.ConstantOp(b0.reshape(-1))), axis=layout.index("C")))
        else:
            biased = emit(nn.AddOp(conv, emit(nn.ConstantOp(b0))))
        scaled = emit(nn.MultiplyOp(biased, emit(nn.ConstantOp(s))))
        return [emit(nn.AddOp(scaled, emit(nn.ConstantOp(b1))))]

    mod = make_module({"x": shape}, body)
    expected = run(mod, {"x": x})
    with transform.PassContext(opt_level=3):
        out = passes.FoldScaleAxis()(mod)
    assert [op.name for op in out.walk() if op.name in ("nn.conv2d", "nn.add", "nn.multiply", "nn.bias_add")] == (
        ["nn.conv2d", "nn.bias_add", "nn.add"] if bias_add else ["nn.conv2d", "nn.add"])
    np.testing.assert_allclose(run(out, {"x": x}), expected, rtol=1e-5, atol=1e-5)


def test_sequential_children_filtered_by_opt_level():
    assert passes.BackwardFoldScaleAxis().info == transform.PassInfo("BackwardFoldScaleAxis", 3, ("InferType",))
    assert passes.ForwardFoldScaleAxis().info == transform.PassInfo("ForwardFoldScaleAxis", 3, ("InferType",))
    sequential = passes.FoldScaleAxis()
    assert sequential.info == transform.PassInfo("FoldScaleAxis", 0, ())  # TVM's Sequential(passes, name)
    mod = forward_case(np.array([[[1.0]], [[2.0]]], np.float32), None)
    names = PassNames()
    with transform.PassContext(instruments=[names]):  # default opt level 2
        out2 = passes.FoldScaleAxis()(mod)
    assert names.events == ["FoldScaleAxis", "FoldConstant", "InferType"]
    assert count(out2, "nn.multiply") == 1
    names = PassNames()
    with transform.PassContext(opt_level=3, instruments=[names]):
        out3 = passes.FoldScaleAxis()(mod)
    assert names.events == [
        "FoldScaleAxis",
        "InferType", "BackwardFoldScaleAxis", "InferType",
        "InferType", "ForwardFoldScaleAxis", "InferType",
        "FoldConstant", "InferType",
    ]  # fmt: skip
    assert count(out3, "nn.multiply") == 0
    # The pipeline form runs the same Sequential.
    names = PassNames()
    with transform.PassContext(opt_level=3, instruments=[names]):
        transform.get_pass("fold-scale-axis")(mod)
    assert names.events[0] == "FoldScaleAxis" and len(names.events) == 9


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("groups, padding", [(1, 0), (2, 0), (4, 0), (2, 1)])
def test_bias_moves_through_pointwise_conv(layout, groups, padding):
    """add(x, b) -> 1x1 conv (stride 2) -> add(b2): without padding b moves past the conv as
    w . b per output channel and joins b2 (conv -> one add); with padding (a border of zeros, where
    x + b would be b) nothing changes. Checked against numpy's einsum of the original graph."""
    rng = np.random.RandomState(groups + 10 * padding)
    channels, filters = 4, 8
    shape = (1, channels, 5, 6) if layout == "NCHW" else (1, 5, 6, channels)
    x = rng.randn(*shape).astype(np.float32)
    b, b2 = rng.randn(channels).astype(np.float32), rng.randn(filters).astype(np.float32)
    w = rng.randn(filters, channels // groups, 1, 1).astype(np.float32)  # OIHW
    axis = layout.index("C")
    attrs = dict(strides=(2, 2), padding=(padding,) * 4, groups=groups, data_layout=layout,
                 kernel_layout="OIHW" if layout == "NCHW" else "HWIO")
    kernel = w if layout == "NCHW" else w.transpose(2, 3, 1, 0)

    def body(values, emit):
        shifted = emit(nn.AddOp(values["x"], emit(nn.ConstantOp(along(b, axis, 4)))))
        conv = emit(nn.Conv2DOp(shifted, emit(nn.ConstantOp(kernel)), **attrs))
        return [emit(nn.AddOp(conv, emit(nn.ConstantOp(along(b2, axis, 4)))))]

    with transform.PassContext(opt_level=3):
        out = passes.FoldScaleAxis()(make_module({"x": shape}, body))
    names = [op.name for op in out.walk() if op.name in ("nn.conv2d", "nn.add")]
    assert names == (["nn.conv2d", "nn.add"] if padding == 0 else ["nn.add", "nn.conv2d", "nn.add"])
    nhwc = (x if layout == "NHWC" else x.transpose(0, 2, 3, 1)).astype(np.float64) + b
    nhwc = np.pad(nhwc, ((0, 0), (padding, padding), (padding, padding), (0, 0)))[:, ::2, ::2, :]
    grouped = nhwc.reshape(*nhwc.shape[:3], groups, channels // groups)
    expected = np.einsum("nhwgi,goi->nhwgo", grouped, w[:, :, 0, 0].reshape(groups, filters // groups, -1))
    expected = expected.reshape(*nhwc.shape[:3], filters) + b2
    if layout == "NCHW":
        expected = expected.transpose(0, 3, 1, 2)
    np.testing.assert_allclose(run(out, {"x": x}), expected, rtol=1e-5, atol=1e-5)
