"""The ONNX light model zoo (re-randomised weights, as in test_frontend_onnx_zoo.py) imported by
`from_onnx` and compiled by IREE (`backend="iree"`: parameters as arguments, convolutions converted
to NHWC/HWIO first) matches both xrelay's nn level and ONNX Runtime to 1e-5 of the output's largest
magnitude (softmax outputs in log space). SqueezeNet runs in `make test`, the rest under `zoo`."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_models import LIGHT_MODELS, close
from test_frontend_onnx_zoo import IN_MAKE_TEST, assert_log_close, imported, prepared

from xrelay.runtime import run
from xrelay.runtime.iree import backend as iree_backend

pytestmark = pytest.mark.skipif(not iree_backend.available(), reason="IREE is not installed (the 'iree' extra)")


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in IN_MAKE_TEST else (pytest.mark.zoo,))
                                  for n in LIGHT_MODELS])
def test_light_model_through_iree_matches_the_nn_level_and_onnxruntime(name):
    proto, inputs, from_onnxruntime = prepared(name)
    module, params = imported(name)
    through_iree = run(module, inputs, params, backend="iree")
    nn_level = run(module, inputs, params)
    softmax = any(node.op_type == "Softmax" for node in proto.graph.node)
    for reference in (nn_level, from_onnxruntime):
        if softmax:
            assert_log_close(through_iree, reference, rtol=1e-5)
        else:
            assert close(through_iree, reference, rtol=1e-5), \
                f"max error {np.max(np.abs(through_iree - reference)) / np.max(np.abs(reference)):.2e}"
