"""The tutorial's passes on imported graphs: outputs kept (against ONNX Runtime) and the folds done on
the structures real models have: a MobileNet block (depthwise conv, batch norm, ReLU6 as Clip,
pointwise conv, residual add) and a DenseNet block (BN-ReLU-conv whose output is concatenated to its
input)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx_models import close, model, run_onnxruntime

from xrelay import passes, transform
from xrelay.frontend import bind_params_by_name, from_onnx
from xrelay.frontend.onnx.registry import has_op
from xrelay.instrument.op_count import count_ops
from xrelay.runtime import run

RNG = np.random.default_rng(11)


def weights(*shape):
    return (RNG.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[1:]))).astype(np.float32)


def bn(prefix, channels):
    return {f"{prefix}_s": RNG.uniform(0.5, 1.5, channels).astype(np.float32),
            f"{prefix}_b": (RNG.standard_normal(channels) * 0.1).astype(np.float32),
            f"{prefix}_m": (RNG.standard_normal(channels) * 0.1).astype(np.float32),
            f"{prefix}_v": RNG.uniform(0.5, 1.5, channels).astype(np.float32)}


def bn_node(prefix, x, y):
    return helper.make_node("BatchNormalization", [x] + [f"{prefix}_{k}" for k in "sbmv"], [y], epsilon=1e-5)


def opt3_then_nhwc(module, params):
    with transform.PassContext(opt_level=3):
        bound = bind_params_by_name(module, params)
        opt3 = transform.Sequential([passes.SimplifyInference(), passes.FoldScaleAxis(), passes.FoldConstant()])(bound)
        nhwc = transform.Sequential([passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}),
                                     passes.FoldConstant()])(opt3)
    return opt3, nhwc


def mobilenet_block():
    nodes = [
        helper.make_node("Conv", ["x", "dw"], ["c1"], group=8, pads=[1, 1, 1, 1]),
        bn_node("bn1", "c1", "b1"),
        helper.make_node("Clip", ["b1", "zero", "six"], ["r1"]),
        helper.make_node("Conv", ["r1", "pw"], ["c2"]),
        bn_node("bn2", "c2", "b2"),
        helper.make_node("Add", ["b2", "x"], ["y"]),
    ]
    inits = {"dw": weights(8, 1, 3, 3), "pw": weights(8, 8, 1, 1), "zero": np.array(0, np.float32),
             "six": np.array(6, np.float32), **bn("bn1", 8), **bn("bn2", 8)}
    return model(nodes, {"x": (1, 8, 6, 6)}, ["y"], inits)


def densenet_block():
    nodes = [
        bn_node("bn1", "x", "b1"),
        helper.make_node("Relu", ["b1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Concat", ["x", "c1"], ["cat"], axis=1),
        bn_node("bn2", "cat", "b2"),
        helper.make_node("Relu", ["b2"], ["r2"]),
        helper.make_node("Conv", ["r2", "w2"], ["y"]),
    ]
    inits = {"w1": weights(4, 6, 3, 3), "w2": weights(5, 10, 1, 1), **bn("bn1", 6), **bn("bn2", 10)}
    return model(nodes, {"x": (1, 6, 5, 5)}, ["y"], inits)


def test_mobilenet_block_batch_norms_fold_into_the_convolutions():
    proto = mobilenet_block()
    x = RNG.standard_normal((1, 8, 6, 6)).astype(np.float32) * 3
    (expected,) = run_onnxruntime(proto, {"x": x})
    module, params = from_onnx(proto)
    opt3, nhwc = opt3_then_nhwc(module, params)
    counts = count_ops(opt3)
    assert "nn.batch_norm" not in counts and "nn.multiply" not in counts, counts
    assert counts["nn.conv2d"] == 2 and counts["nn.clip"] == 1
    assert all(op.attrs()["data_layout"] == "NHWC" for op in nhwc.walk() if op.name == "nn.conv2d")
    # The clip follows its input's layout: the only transforms are at the graph's edges.
    assert count_ops(nhwc)["nn.layout_transform"] == 2
    for module_ in (opt3, nhwc):
        assert close(run(module_, {"x": x}), expected)


@pytest.mark.skipif(not has_op("nn.concatenate"), reason="nn.concatenate is being added by other work")
def test_densenet_block_keeps_outputs_and_the_concatenation_follows_the_layout():
    proto = densenet_block()
    x = RNG.standard_normal((1, 6, 5, 5)).astype(np.float32)
    (expected,) = run_onnxruntime(proto, {"x": x})
    module, params = from_onnx(proto)
    opt3, nhwc = opt3_then_nhwc(module, params)
    assert "nn.batch_norm" not in count_ops(opt3)
    concats = [op for op in nhwc.walk() if op.name == "nn.concatenate"]
    assert [op.attrs()["axis"] for op in concats] == [3]  # channels of NHWC
    for module_ in (opt3, nhwc):
        assert close(run(module_, {"x": x}), expected)
