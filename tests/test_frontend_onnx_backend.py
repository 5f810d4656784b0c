"""ONNX's own conformance runner, `onnx.backend.test.BackendTest`, over xrelay's ONNX backend, on the
model tests shipped inside the `onnx` wheel: `pytorch-converted`, `pytorch-operator`, `simple` and the
`light` model zoo (the "Real" category). The references are the shipped expected outputs.

Every model test runs except the EXCLUDED ones (each with its reason) and, while other work is still
adding them, models needing an nn op the dialect lacks (skipped, naming the op types).
"""

from __future__ import annotations

import os
import re
import tempfile
import unittest
from collections import defaultdict

import onnx
import onnx.backend.test
import pytest
from onnx.backend.test.loader import load_model_tests

from xrelay.frontend.onnx.graph import import_time_nodes
from xrelay.frontend.onnx.model import model_opset
from xrelay.frontend.onnx.registry import supported
from xrelay.frontend.onnx_backend import XrelayBackend

# The light models' runner writes its inputs and outputs under $ONNX_MODELS (default ~/.onnx).
os.environ["ONNX_MODELS"] = tempfile.mkdtemp(prefix="xrelay-onnx-models-")

EXCLUDED = {
    r"^test_(AvgPool3d|MaxPool3d|Conv3d)": "3-D windows: xrelay's convolution and pooling are 1-D and 2-D only",
    r"^test_sequence_model": "sequence-typed values (SequenceConstruct, SplitToSequence, ...): tensors only",
    r"^test_strnorm_model": "StringNormalizer: string tensors",
    r"^test_gradient_of_add": "ai.onnx.preview.training.Gradient: a training-only op",
    r"^test_expand_shape_model": "Expand's target shape is a run-time input: the output shape depends on "
                                 "input values, and xrelay's shapes are static",
    r"^test_shrink": "Shrink: not converted (no nn op; not used by the image models the issue targets)",
    r"^test_sign_model": "Sign: not converted (no nn op; not used by the image models the issue targets)",
}

CATEGORIES = {"real": "Real", "simple": "Simple", "pytorch-converted": "PyTorchConverted",
              "pytorch-operator": "PyTorchOperator"}


class ModelBackendTest(onnx.backend.test.BackendTest):
    """BackendTest over the model tests only: the stock constructor also loads ONNX's ~1900
    single-node tests (15 s here), which this suite does not run."""

    def __init__(self, backend, parent_module):
        self.backend = backend
        self._parent_module = parent_module
        self._include_patterns = set()
        self._exclude_patterns = set()
        self._xfail_patterns = set()
        # The zoo models run at the linalg level, the quicker one for them (BLAS convolutions).
        self._test_kwargs = {test.name: {"level": "linalg"} for test in load_model_tests(kind="real")}
        self._test_items = defaultdict(dict)
        for kind, category in CATEGORIES.items():
            for test in load_model_tests(kind=kind):
                self._add_model_test(test, category)


def missing_ops(model: onnx.ModelProto) -> list[str]:
    """Op types of run-time nodes whose nn ops the dialect does not have yet."""
    evaluated = import_time_nodes(model, model_opset(model))
    return sorted({n.op_type for i, n in enumerate(model.graph.node)
                   if i not in evaluated and n.domain in ("", "ai.onnx") and not supported(n.op_type)})


class PendingOpsBackend(XrelayBackend):
    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        lacking = missing_ops(model)
        if lacking:
            raise unittest.SkipTest(f"needs nn ops other work is adding for: {', '.join(lacking)}")
        return super().prepare(model, device, **kwargs)


backend_test = ModelBackendTest(PendingOpsBackend, __name__)
for pattern in EXCLUDED:
    backend_test.exclude(pattern)
globals().update(backend_test.test_cases)

# The light zoo takes seconds per model: SqueezeNet runs in `make test`, the others in `make test-zoo`.
_zoo = backend_test.test_cases["OnnxBackendRealModelTest"]
for _name in dir(_zoo):
    if _name.startswith("test_") and not _name.startswith("test_squeezenet"):
        setattr(_zoo, _name, pytest.mark.zoo(getattr(_zoo, _name)))
del _zoo, _name  # a module-level TestCase name would be collected a second time


def test_exclusions_match_tests():
    """Every exclusion names at least one shipped model test (no stale entries)."""
    names = [t.name for kind in CATEGORIES for t in load_model_tests(kind=kind)]
    for pattern in EXCLUDED:
        assert any(re.search(pattern, name) for name in names), pattern


def test_the_light_zoo_and_pytorch_cases_are_all_collected():
    cases = backend_test.test_cases
    light = [n for n in dir(cases["OnnxBackendRealModelTest"]) if n.endswith("_cpu")]
    assert len(light) == 9
    pytorch = [n for c in ("OnnxBackendPyTorchConvertedModelTest", "OnnxBackendPyTorchOperatorModelTest")
               for n in dir(cases[c]) if n.endswith("_cpu")]
    assert len(pytorch) == 82 + 35  # the shipped pytorch-converted and pytorch-operator directories


if __name__ == "__main__":
    pytest.main([__file__])
