"""A small Vision Transformer imported from ONNX: `xrelay.build` and the nn interpreter give ONNX
Runtime's answer, with the compiled kernels and on numpy alone."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_models import close, run_onnxruntime
from onnx_transformer import vision_transformer

import xrelay
from xrelay import transform
from xrelay.frontend import from_onnx
from xrelay.runtime import run

VIT = vision_transformer(depth=2, dim=32, heads=2, mlp=64, image=32, patch=8, classes=10)


def images(count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    return [rng.standard_normal((1, 3, 32, 32)).astype(np.float32) for _ in range(count)]


@pytest.mark.parametrize("native", ["1", "0"], ids=["compiled", "numpy"])
def test_built_vit_matches_onnxruntime_over_successive_calls(monkeypatch, native):
    monkeypatch.setenv("XRELAY_NATIVE", native)
    module, params = from_onnx(VIT)
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(module, params)
    for data in images(3):
        (expected,) = run_onnxruntime(VIT, {"input": data})
        assert close(executable(data), expected)


def test_vit_at_the_nn_level_matches_onnxruntime():
    module, params = from_onnx(VIT)
    (data,) = images(1)
    (expected,) = run_onnxruntime(VIT, {"input": data})
    assert close(run(module, {"input": data}, params), expected)
