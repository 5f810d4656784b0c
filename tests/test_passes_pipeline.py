"""Every graph pass and the opt-level-3 pipeline preserve model outputs (tiny model, ResNet-18)."""

import numpy as np
import pytest

from tool_passes import PassNames

from xrelay import passes, transform
from xrelay.dialects import nn
from xrelay.frontend import bind_params_by_name, resnet, tiny
from xrelay.runtime import run

RTOL = 1e-5


def randomise_batch_norm_stats(params, rng):
    """Non-trivial BN statistics (the initialiser's are gamma=var=1, beta=mean=0); gamma > 0
    so every BN scale is positive, as after training with the usual initialisation."""
    out = dict(params)
    for name, value in params.items():
        if name.endswith(("_gamma", "_moving_var")):
            out[name] = rng.uniform(0.5, 1.5, value.shape).astype(value.dtype)
        elif name.endswith(("_beta", "_moving_mean")):
            out[name] = (0.1 * rng.randn(*value.shape)).astype(value.dtype)
    return out


def nn_ops(mod):
    return [op for op in mod.walk() if isinstance(op, nn.NNOp)]


def count(mod, name):
    return sum(op.name == name for op in mod.walk())


@pytest.fixture(scope="module")
def tiny_model():
    rng = np.random.RandomState(0)
    mod, params = tiny.get_workload(batch_size=2)
    params = randomise_batch_norm_stats(params, rng)
    params["fc_bias"] = rng.randn(*params["fc_bias"].shape).astype(np.float32)
    data = rng.randn(2, 3, 8, 8).astype(np.float32)
    bound = bind_params_by_name(mod, params)
    return bound, data, run(bound, {"data": data})


@pytest.mark.parametrize(
    "make_pass",
    [
        passes.InferType,
        passes.FoldConstant,
        passes.SimplifyInference,
        passes.BackwardFoldScaleAxis,
        passes.ForwardFoldScaleAxis,
        passes.FoldScaleAxis,
        passes.CanonicalizeOps,
        passes.DeadCodeElimination,
        lambda: passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}),
    ],
)
def test_each_pass_preserves_tiny_model(tiny_model, make_pass):
    bound, data, expected = tiny_model
    with transform.PassContext(opt_level=3):
        out = make_pass()(bound)
    out.verify()
    np.testing.assert_allclose(run(out, {"data": data}), expected, rtol=RTOL)


def test_tiny_model_opt3_pipeline(tiny_model):
    bound, data, expected = tiny_model
    pipeline = transform.Sequential(
        [passes.SimplifyInference(), passes.FoldScaleAxis(), passes.CanonicalizeOps(), passes.FoldConstant()]
    )
    with transform.PassContext(opt_level=3):
        out = pipeline(bound)
    # conv -> bn folded into the conv weight and a per-channel add; the dense bias is an add.
    assert [op.name for op in nn_ops(out)] == [
        "nn.conv2d", "nn.add", "nn.relu", "nn.max_pool2d", "nn.batch_flatten", "nn.dense", "nn.add", "nn.softmax",
    ]  # fmt: skip
    np.testing.assert_allclose(run(out, {"data": data}), expected, rtol=RTOL)


def producers_before_conv(value):
    """Ops met walking back from a conv's data input through relu and constant adds."""
    seen = []
    while isinstance(owner := value.owner, nn.NNOp):
        seen.append(owner.name)
        if owner.name == "nn.relu":
            value = owner.operands[0]
        elif owner.name in ("nn.add", "nn.multiply") and any(isinstance(v.owner, nn.ConstantOp) for v in owner.operands):
            value = next(v for v in owner.operands if not isinstance(v.owner, nn.ConstantOp))
        else:
            break
    return seen


def test_resnet18_opt3_pipeline_folds_batch_norm_into_convs():
    """The real opt-level-3 pipeline SimplifyInference -> FoldScaleAxis -> FoldConstant on bound
    ResNet-18 leaves no batch_norm and no per-channel multiply in front of any conv, and the
    model computes the same outputs (two ResNet-18 runs, about a second each)."""
    rng = np.random.RandomState(18)
    mod, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 224, 224))
    bound = bind_params_by_name(mod, randomise_batch_norm_stats(params, rng))
    data = rng.randn(1, 3, 224, 224).astype(np.float32)
    expected = run(bound, {"data": data})
    names = PassNames()
    with transform.PassContext(opt_level=3, instruments=[names]):
        out = passes.SimplifyInference()(bound)
        out = passes.FoldScaleAxis()(out)
        out = passes.FoldConstant()(out)
    assert names.events[:3] == ["SimplifyInference", "InferType", "FoldScaleAxis"]
    assert count(out, "nn.batch_norm") == 0
    convs = [op for op in out.walk() if op.name == "nn.conv2d"]
    assert len(convs) == 21
    for conv in convs:
        assert "nn.multiply" not in producers_before_conv(conv.operands[0]), producers_before_conv(conv.operands[0])
        assert isinstance(conv.operands[1].owner, nn.ConstantOp)  # scaled weights folded
    # The only multiply left is the head's bn1 before global_avg_pool2d (no conv to fold into).
    (multiply,) = [op for op in out.walk() if op.name == "nn.multiply"]
    add = multiply.results[0].first_use.operation
    relu = add.results[0].first_use.operation
    assert relu.results[0].first_use.operation.name == "nn.global_avg_pool2d"
    np.testing.assert_allclose(run(out, {"data": data}), expected, rtol=RTOL)
    # The rest of the real opt-level-3 pipeline: ConvertLayout (with its required InferType and
    # CanonicalizeOps) -> FoldConstant, to NHWC and back to NCHW; outputs stay the same.
    def convert(layouts):
        return transform.Sequential([passes.ConvertLayout({"nn.conv2d": layouts}), passes.FoldConstant()])

    with transform.PassContext(opt_level=3):
        nhwc = convert(["NHWC", "HWIO"])(out)
        back = convert(["NCHW", "default"])(nhwc)
    assert {conv.attrs()["data_layout"] for conv in nhwc.walk() if conv.name == "nn.conv2d"} == {"NHWC"}
    assert count(nhwc, "nn.layout_transform") == 2  # into conv0 and out before batch_flatten
    assert {conv.attrs()["data_layout"] for conv in back.walk() if conv.name == "nn.conv2d"} == {"NCHW"}
    assert count(back, "nn.layout_transform") == 0
    np.testing.assert_allclose(run(nhwc, {"data": data}), expected, rtol=RTOL)
    np.testing.assert_allclose(run(back, {"data": data}), expected, rtol=RTOL)
