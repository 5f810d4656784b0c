"""The nine ONNX-zoo light models with deterministically re-randomised weights (the shipped ones are
all 0.02, so their outputs are uniform) against ONNX Runtime: at the nn level, after the opt-level-3
pipeline (SimplifyInference, FoldScaleAxis, FoldConstant) on bound parameters, after ConvertLayout
to NHWC/HWIO, and at the linalg level, to 1e-4 of the output's largest magnitude (softmax outputs
in log space).

SqueezeNet (the cheapest) runs in `make test`; the others are marked `zoo` (`make test-zoo`).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from onnx_models import LIGHT_MODELS, close, light_model, randomised, run_onnxruntime, zoo_inputs

from xrelay import passes, transform
from xrelay.frontend import bind_params_by_name, from_onnx
from xrelay.frontend.onnx.graph import import_time_nodes
from xrelay.frontend.onnx.registry import supported
from xrelay.lowering import lower
from xrelay.runtime import run

IN_MAKE_TEST = ("squeezenet",)
STAGES = ("nn", "opt3", "nhwc", "linalg")


def _lacking(proto):
    evaluated = import_time_nodes(proto, proto.opset_import[0].version)
    return sorted({n.op_type for i, n in enumerate(proto.graph.node) if i not in evaluated and not supported(n.op_type)})


@functools.cache
def prepared(name):
    proto = randomised(light_model(name))
    inputs = zoo_inputs(proto)
    (expected,) = run_onnxruntime(proto, inputs)
    return proto, inputs, expected


@functools.cache
def imported(name):
    proto, _, _ = prepared(name)
    return from_onnx(proto)


def optimised(name):
    module, params = imported(name)
    with transform.PassContext(opt_level=3):
        seq = transform.Sequential([passes.SimplifyInference(), passes.FoldScaleAxis(), passes.FoldConstant()])
        return seq(bind_params_by_name(module, params))


def nn_op_counts(module):
    counts: dict[str, int] = {}
    for op in module.walk():
        if op.name.startswith("nn.") and op.name != "nn.constant":
            counts[op.name] = counts.get(op.name, 0) + 1
    return counts


def assert_log_close(actual, expected, rtol=1e-4):
    assert actual.shape == expected.shape
    log_a, log_e = np.log(actual.astype(np.float64)), np.log(expected.astype(np.float64))
    error = np.max(np.abs(log_a - log_e)) / np.max(np.abs(log_e))
    assert error <= rtol, f"log-space error {error:.2e} relative to the largest magnitude"


def _param(name):
    marks = () if name in IN_MAKE_TEST else (pytest.mark.zoo,)
    return pytest.param(name, marks=marks)


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("name", [_param(n) for n in LIGHT_MODELS])
def test_light_model_with_random_weights_matches_onnxruntime(name, stage):
    lacking = _lacking(light_model(name))
    if lacking:
        pytest.skip(f"needs nn ops other work is adding for: {', '.join(lacking)}")
    proto, inputs, expected = prepared(name)
    module, params = imported(name)
    if stage == "nn":
        actual = run(module, inputs, params)
    elif stage == "linalg":
        actual = run(lower(module, to="linalg"), inputs, params)
    else:
        module = optimised(name)
        counts = nn_op_counts(module)
        # The batch norms fold away: SimplifyInference makes them scale-and-shift, FoldScaleAxis
        # moves the scales into the convolution weights and FoldConstant folds those.
        assert "nn.batch_norm" not in counts
        if stage == "nhwc":
            with transform.PassContext(opt_level=3):
                layout = passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]})
                module = transform.Sequential([layout, passes.FoldConstant()])(module)
            assert all(op.attrs()["data_layout"] == "NHWC" for op in module.walk() if op.name == "nn.conv2d")
        actual = run(module, inputs)
    if any(node.op_type == "Softmax" for node in proto.graph.node):
        assert_log_close(actual, expected)
    else:
        assert close(actual, expected), f"max error {np.max(np.abs(actual - expected))}"


