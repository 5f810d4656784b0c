"""`xrelay.build` on the ONNX light zoo (random weights) and ResNet-18: six successive calls with new
inputs, in the default threading (from the third call on 2 threads, two processes), each against
ONNX Runtime (1e-4); and the built program fuses only what the IR's kernels say.

SqueezeNet runs in `make test`; the other models are marked `zoo` (`make test-zoo`), ResNet-18 `slow`.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx_models import LIGHT_MODELS, close, run_onnxruntime
from test_build import assert_executor_follows_ir
from test_frontend_onnx_zoo import IN_MAKE_TEST, _lacking, assert_log_close, imported, light_model, prepared

import xrelay
from xrelay import transform
from xrelay.runtime.native.conv_kernels import available

CALLS = 6


def _param(name):
    return pytest.param(name, marks=() if name in IN_MAKE_TEST else (pytest.mark.zoo,))


@pytest.mark.parametrize("name", [_param(n) for n in LIGHT_MODELS])
def test_built_light_model_matches_onnxruntime_call_after_call(name, blas_workers):
    blas_workers(2)
    if _lacking(light_model(name)):
        pytest.skip("the importer lacks an op of this model")
    proto, inputs, _ = prepared(name)
    module, params = imported(name)
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(module, params)
    assert_executor_follows_ir(executable.program)
    softmax = any(node.op_type == "Softmax" for node in proto.graph.node)
    rng = np.random.default_rng(5)
    try:
        for call in range(CALLS):
            fresh = {k: rng.random(v.shape, dtype=np.float32) for k, v in inputs.items()}
            (expected,) = run_onnxruntime(proto, fresh)
            actual = executable(fresh)
            if softmax:
                assert_log_close(actual, expected)
            else:
                assert close(actual, expected), f"call {call}: max error {np.max(np.abs(actual - expected))}"
        if name == "squeezenet" and available():  # later calls ran the bound body's kept compiled calls
            bound = {getattr(step, "__name__", "") for body in executable.program.runs.bodies.values() for step in body}
            assert {"pad", "convolution", "ufuncs"} <= bound, bound
    finally:
        executable.close()


@pytest.mark.slow
def test_built_resnet18_follows_its_ir():
    from xrelay.frontend import resnet
    from xrelay.runtime import run

    module, params = resnet.get_workload(num_layers=18)
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(module, params)
    assert_executor_follows_ir(executable.program)
    x = np.random.default_rng(3).random((1, 3, 224, 224), dtype=np.float32)
    np.testing.assert_allclose(executable(x), run(module, {"data": x}, params), rtol=1e-4, atol=1e-6)
    executable.close()
