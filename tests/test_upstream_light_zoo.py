"""The ONNX light model zoo (re-randomised weights, as in test_frontend_onnx_zoo.py) the other way in:
upstream's linalg, written by IREE's ONNX import and torch-mlir's pipelines (the README's recipe), runs
in `xrelay-run` equal to ONNX Runtime (1e-4 of the output's largest magnitude). The shipped models are
opset 8-9, whose MaxPool and friends torch-mlir's ONNX conversion does not legalize, so each is first
converted to opset 17 by ONNX's own version converter; ONNX Runtime runs the model as shipped. Marked
`zoo` (`make test-zoo`): an import and a 224x224 run take seconds to a minute per model."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import version_converter
from onnx_models import LIGHT_MODELS, close, light_model, randomised, run_onnxruntime, zoo_inputs
from upstream_models import import_onnx

from xrelay.runtime.iree.backend import available as iree_available
from xrelay.tools import xrelay_run

pytestmark = [pytest.mark.zoo,
              pytest.mark.skipif(not iree_available(), reason="needs IREE's ONNX import (the 'iree' extra)")]


@pytest.mark.parametrize("name", LIGHT_MODELS)
def test_light_model_through_upstream_linalg_runs_in_xrelay_run_and_matches_onnxruntime(name, tmp_path, capsys):
    proto = randomised(light_model(name))
    inputs = zoo_inputs(proto)
    (expected,) = run_onnxruntime(proto, inputs)
    model = tmp_path / "m.mlir"
    model.write_text(import_onnx(version_converter.convert_version(proto, 17), tmp_path))
    (x,) = inputs.values()
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out.npy"
    assert xrelay_run.main([str(model), "--input", str(tmp_path / "x.npy"), "-o", str(out)]) == 0, \
        capsys.readouterr().err
    got = np.load(out)
    assert close(got, expected), f"max error {np.max(np.abs(got - expected)) / np.max(np.abs(expected)):.2e}"
