"""Small ONNX models built with `onnx.helper` for the frontend tests, and ONNX Runtime as the reference."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ONNX_DATA = __import__("pathlib").Path(onnx.__file__).parent / "backend" / "test" / "data"
LIGHT_MODELS = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet",
                "squeezenet", "vgg19", "zfnet512")


def model(nodes: Sequence[onnx.NodeProto], inputs: Mapping[str, Sequence[int]], outputs: Sequence[str],
          initializers: Mapping[str, np.ndarray] | None = None, opset: int = 13,
          input_types: Mapping[str, int] | None = None) -> onnx.ModelProto:
    """A one-graph model; inputs are float32 unless `input_types` says otherwise."""
    input_types = dict(input_types or {})
    graph = helper.make_graph(
        list(nodes), "test",
        [helper.make_tensor_value_info(name, input_types.get(name, TensorProto.FLOAT), list(shape))
         for name, shape in inputs.items()],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
        [numpy_helper.from_array(np.asarray(value), name) for name, value in (initializers or {}).items()],
    )
    ir_version = 7 if opset < 15 else 8
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version)


def run_onnxruntime(proto: onnx.ModelProto, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, dict(inputs))


def close(actual: np.ndarray, expected: np.ndarray, rtol: float = 1e-4) -> bool:
    """Equal to `rtol` relative to the expected output's largest magnitude."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    scale = max(float(np.max(np.abs(expected))), 1e-30) if expected.size else 1.0
    return actual.shape == expected.shape and bool(np.all(np.abs(actual - expected) <= rtol * scale))
