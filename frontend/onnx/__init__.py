"""The ONNX frontend: `from_onnx(model, shape=None, dtype="float32") -> (mod, params)`.

Converters live by op family in `ops_nn` (convolution, pooling, normalisation, dense layers),
`ops_elementwise` (unary, binary, activations, reductions), `ops_shape` (shape and data
movement) and `ops_upsample` (ConvTranspose, Resize, Upsample); `fold` evaluates nodes whose inputs are all known at import (ONNX's reference evaluator).
"""

from xrelay.frontend.onnx.errors import OnnxImportError
from xrelay.frontend.onnx.model import from_onnx, load_model

__all__ = ["OnnxImportError", "from_onnx", "load_model"]
