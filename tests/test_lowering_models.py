"""Whole models agree across levels: the tiny model and ResNet-18 at nn/linalg/memref/loops."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay import passes, transform
from xrelay.frontend import bind_params_by_name, resnet, tiny
from xrelay.lowering import lower
from xrelay.runtime.reference.interpreter import run as run_nn
from xrelay.runtime.executor.linalg_exec import run_linalg
from xrelay.runtime.reference.loops_exec import run_loops


def run_at(module, level, inputs):
    lowered = lower(module, to=level)
    lowered.verify()
    return (run_loops if level == "loops" else run_linalg)(lowered, inputs)[0]


def assert_close(got, expected):
    # ≤ 1e-4 relative per element (a tiny absolute floor for entries near zero).
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-7 * np.abs(expected).max())


@pytest.fixture(scope="module")
def tiny_workload():
    module, params = tiny.get_workload(batch_size=2, image_shape=(3, 8, 8), channels=4)
    data = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    return module, params, data


@pytest.mark.parametrize("level", ["linalg", "memref", "loops"])
def test_tiny_model_agrees_with_nn_level(tiny_workload, level):
    module, params, data = tiny_workload
    expected = run_nn(module, {"data": data}, params)
    assert_close(run_at(module, level, dict(params, data=data)), expected)


@pytest.mark.parametrize("level", ["linalg", "memref", "loops"])
def test_tiny_model_with_bound_params_agrees(tiny_workload, level):
    module, params, data = tiny_workload
    expected = run_nn(module, {"data": data}, params)
    bound = bind_params_by_name(module, params)
    assert_close(run_at(bound, level, {"data": data}), expected)


@pytest.fixture(scope="module")
def resnet18():
    module, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 224, 224))
    data = np.random.default_rng(2).standard_normal((1, 3, 224, 224)).astype(np.float32)
    return module, params, data, run_nn(module, {"data": data}, params)


@pytest.mark.parametrize("level", ["linalg", "memref", "loops"])
def test_resnet18_agrees_with_nn_level(resnet18, level):
    module, params, data, expected = resnet18
    assert_close(run_at(module, level, dict(params, data=data)), expected)


def test_resnet18_optimized_nhwc_agrees_at_linalg_level(resnet18):
    """After the tutorial's opt-level-3 pipeline (NHWC/HWIO convs, folded BN), lowering still agrees."""
    module, params, data, expected = resnet18
    bound = bind_params_by_name(module, params)
    with transform.PassContext(opt_level=3):
        optimized = transform.Sequential([
            passes.SimplifyInference(), passes.FoldScaleAxis(), passes.FoldConstant(),
            passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}), passes.FoldConstant(),
        ])(bound)
    names = {op.name for op in optimized.walk()}
    assert "nn.layout_transform" in names and "nn.batch_norm" not in names
    assert_close(run_at(optimized, "linalg", {"data": data}), expected)
