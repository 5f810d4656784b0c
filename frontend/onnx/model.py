"""`from_onnx`: load and check an ONNX model, then import its graph (`graph.py`).

Every check that can fail runs before any conversion: the file is an ONNX model, its opset is one
xrelay knows, every op type has a converter (one message lists every unsupported type with its
count), and every input dimension is static or fixed by `shape`.
"""

from __future__ import annotations

import collections
import os
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from xdsl.dialects.builtin import ModuleOp

from xrelay.frontend.onnx import ops_einsum, ops_elementwise, ops_nn, ops_shape, ops_upsample  # noqa: F401 - fill the registry
from xrelay.frontend.onnx.errors import OnnxImportError
from xrelay.frontend.onnx.graph import import_graph, import_time_nodes
from xrelay.frontend.onnx.registry import supported

MIN_OPSET, MAX_OPSET = 6, 21
_DEFAULT_DOMAINS = ("", "ai.onnx")


def load_model(model: onnx.ModelProto | bytes | str | os.PathLike, name: str | None = None) -> onnx.ModelProto:
    """The ModelProto itself, or the model in these bytes or at this path (OnnxImportError if it
    is not one). `name` names bytes in messages."""
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, bytes):
        data, path = model, name or "<bytes>"
    elif isinstance(model, str | os.PathLike):
        path = os.fspath(model)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as err:
            raise OnnxImportError(f"cannot read '{path}': {err.strerror or err}") from None
    else:
        raise TypeError(f"from_onnx expects an onnx.ModelProto, bytes or a path, got {type(model).__name__}")
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except (DecodeError, RuntimeWarning, ValueError) as err:
        raise OnnxImportError(f"'{path}' is not an ONNX model (truncated or corrupt: {err})") from None
    if not proto.HasField("graph") or proto.ir_version <= 0 or not proto.opset_import:
        raise OnnxImportError(f"'{path}' is not an ONNX model (no graph, IR version or opset)")
    if any(init.data_location == onnx.TensorProto.EXTERNAL for init in proto.graph.initializer):
        try:
            onnx.load_external_data_for_model(proto, os.path.dirname(os.path.abspath(path)))
        except (OSError, ValueError) as err:
            raise OnnxImportError(f"'{path}': cannot load its external weights: {err}") from None
    return proto


def model_opset(model: onnx.ModelProto) -> int:
    versions = [o.version for o in model.opset_import if o.domain in _DEFAULT_DOMAINS]
    if not versions:
        raise OnnxImportError("the model imports no version of the default ONNX operator set")
    return versions[0]


def check_supported(model: onnx.ModelProto, opset: int) -> None:
    """Raise one OnnxImportError listing every unsupported op type with its count."""
    counts: collections.Counter[str] = collections.Counter()
    evaluated = import_time_nodes(model, opset)
    for index, node in enumerate(model.graph.node):
        if index in evaluated and node.domain in _DEFAULT_DOMAINS:
            continue
        op_type = node.op_type if node.domain in _DEFAULT_DOMAINS else f"{node.domain}.{node.op_type}"
        if node.domain not in _DEFAULT_DOMAINS or not supported(node.op_type):
            counts[op_type] += 1
    if counts:
        listed = ", ".join(f"{op} ({n})" for op, n in sorted(counts.items()))
        raise OnnxImportError(
            f"The following operators are not supported for frontend ONNX: {listed} (model opset {opset})"
        )
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise OnnxImportError(f"the model's opset {opset} is outside the supported {MIN_OPSET} to {MAX_OPSET}")


_ONNX_DTYPES = {onnx.TensorProto.FLOAT: "float32", onnx.TensorProto.DOUBLE: "float64",
                onnx.TensorProto.FLOAT16: "float16", onnx.TensorProto.INT64: "int64",
                onnx.TensorProto.INT32: "int32"}


def graph_inputs(model: onnx.ModelProto, shape: Mapping[str, Sequence[int]] | None,
                 dtype: str | Mapping[str, str]) -> tuple[dict[str, tuple[int, ...]], dict[str, np.dtype]]:
    """Each real input's static shape and dtype (initializers listed as inputs are weights)."""
    shape = dict(shape or {})
    initializers = {init.name for init in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in initializers]
    unknown = sorted(set(shape) - {i.name for i in inputs})
    if unknown:
        names = ", ".join(repr(i.name) for i in inputs)
        raise OnnxImportError(f"shape names {', '.join(map(repr, unknown))}, which the model has no input of "
                              f"(its inputs: {names})")
    shapes, dtypes = {}, {}
    for value in inputs:
        tensor_type = value.type.tensor_type
        if not value.type.HasField("tensor_type"):
            raise OnnxImportError(f"input '{value.name}' is not a tensor (sequences and maps are not supported)")
        elem_type = tensor_type.elem_type
        if elem_type == onnx.TensorProto.UNDEFINED and isinstance(dtype, str):
            elem_type = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        if elem_type not in _ONNX_DTYPES:
            kind = onnx.TensorProto.DataType.Name(elem_type)
            raise OnnxImportError(f"input '{value.name}' has element type {kind}, which xrelay does not support")
        # As TVM: the declared element type, unless `dtype` maps this input to another.
        declared = _ONNX_DTYPES[elem_type]
        dtypes[value.name] = np.dtype(dtype.get(value.name, declared) if isinstance(dtype, Mapping) else declared)
        if value.name in shape:
            given = tuple(int(d) for d in shape[value.name])
            declared = tensor_type.shape.dim
            if tensor_type.HasField("shape") and len(declared) != len(given):
                raise OnnxImportError(f"shape for input '{value.name}' has {len(given)} dimensions, "
                                      f"the model declares {len(declared)}")
            shapes[value.name] = given
            continue
        if not tensor_type.HasField("shape"):
            raise OnnxImportError(f"input '{value.name}' has no declared shape; give it with shape={{...}}")
        dims = []
        for index, dim in enumerate(tensor_type.shape.dim):
            if not dim.HasField("dim_value") or dim.dim_value <= 0:
                what = f"'{dim.dim_param}'" if dim.dim_param else "unknown"
                raise OnnxImportError(
                    f"input '{value.name}' has a dynamic dimension {index} ({what}); fix it with from_onnx's "
                    f"shape={{'{value.name}': (...)}} or xrelay-import-onnx --shape {value.name}=D0,D1,..."
                )
            dims.append(dim.dim_value)
        shapes[value.name] = tuple(dims)
    return shapes, dtypes


def from_onnx(model: onnx.ModelProto | bytes | str | os.PathLike, shape: Mapping[str, Sequence[int]] | None = None,
              dtype: str | Mapping[str, str] = "float32", progress: Callable[[str], None] | None = None
              ) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """Import an ONNX model as TVM's `relay.frontend.from_onnx` does: `(module, params)`.

    `model` is an `onnx.ModelProto`, a path or the bytes of a model file; `shape` maps input names to shapes (fixing dynamic
    dimensions). Inputs take their declared element type, as in TVM: `dtype` is the type of inputs
    that declare none, or a mapping of input names to types that override the declared ones. Float initializers become `@main`
    parameters named as in the model (`params` maps those names to their values). Raises
    OnnxImportError with one complete message when the model cannot be imported.
    """
    proto = load_model(model)
    opset = model_opset(proto)
    check_supported(proto, opset)
    shapes, dtypes = graph_inputs(proto, shape, dtype)
    return import_graph(proto, opset, shapes, dtypes, progress)
