"""Import-time evaluation of ONNX nodes whose inputs are all known, with ONNX's own reference
evaluator (`onnx.reference`), for any standard op type it implements.

Two op types keep a hand-written numpy twin (`HAND_WRITTEN`), measured faster on real models (the
evaluator costs 80-200 us a node): ConstantOfShape, which fills the light zoo's weights (ResNet-50:
239 nodes, import 0.127 -> 0.166 s CPU through the evaluator), and the Unsqueeze of DenseNet-121's
and Inception v2's batch-norm vectors (DenseNet: 238 nodes, 47 of its 422 ms through the evaluator).
"""

from __future__ import annotations

import functools

import numpy as np
import onnx
from onnx import helper, numpy_helper

NOT_FOLDED = {
    "Bernoulli": "draws random numbers: each run differs",
    "Multinomial": "draws random numbers: each run differs",
    "RandomNormal": "draws random numbers: each run differs",
    "RandomNormalLike": "draws random numbers: each run differs",
    "RandomUniform": "draws random numbers: each run differs",
    "RandomUniformLike": "draws random numbers: each run differs",
}
"""Op types never evaluated at import, with the reason (they have no run-time converter either)."""

_DEFAULT_DOMAINS = ("", "ai.onnx")


def _constant_of_shape(node: onnx.NodeProto, shape: np.ndarray) -> list[np.ndarray]:
    value = next((a.t for a in node.attribute if a.name == "value"), None)
    fill = numpy_helper.to_array(value).reshape(-1)[:1] if value is not None else np.zeros(1, np.float32)
    # A read-only broadcast view: the weights made this way are copied once, into the IR.
    return [np.broadcast_to(fill.reshape(()), [int(d) for d in shape])]


def _unsqueeze(node: onnx.NodeProto, data: np.ndarray, axes: np.ndarray | None = None) -> list[np.ndarray]:
    if axes is None:
        axes = next(a.ints for a in node.attribute if a.name == "axes")
    rank = data.ndim + len(axes)
    return [np.expand_dims(data, tuple(int(a) + rank if a < 0 else int(a) for a in np.asarray(axes).reshape(-1)))]


HAND_WRITTEN = {"ConstantOfShape": _constant_of_shape, "Unsqueeze": _unsqueeze}
"""Op types evaluated by numpy written here rather than by the reference evaluator: `fn(node, *arrays)`."""


@functools.cache
def implemented(op_type: str, opset: int) -> bool:
    """Whether the reference evaluator implements the standard op `op_type` at `opset` (directly,
    or through the op's function body)."""
    from onnx.reference import ReferenceEvaluator
    from onnx.reference.op_run import RuntimeContextError
    from onnx.reference.ops import load_op

    if not onnx.defs.has(op_type, opset, ""):  # not (yet, or any more) a standard op at this opset
        return False
    try:
        load_op("", op_type, opset, evaluator_cls=ReferenceEvaluator)
    except RuntimeContextError:  # a function body that depends on the input types: expanded at run
        return True
    except Exception:  # noqa: BLE001 - unknown op types or versions, whatever onnx raises
        return False
    return True


def foldable(node: onnx.NodeProto, opset: int) -> bool:
    """Whether a node of known inputs is evaluated at import: a standard op the reference evaluator
    implements at `opset`, that draws no random numbers and has no subgraph (which could read
    values of the enclosing graph)."""
    if node.domain not in _DEFAULT_DOMAINS or node.op_type in NOT_FOLDED:
        return False
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
        return False
    return implemented(node.op_type, opset)


def evaluate(node: onnx.NodeProto, opset: int, arrays: list[np.ndarray | list | None]) -> list[object]:
    """The outputs of `node` on these input values (None for absent optional inputs), computed by
    `onnx.reference.ReferenceEvaluator` at the model's opset."""
    from onnx.reference import ReferenceEvaluator

    if node.op_type in HAND_WRITTEN:
        return HAND_WRITTEN[node.op_type](node, *arrays)
    proto = onnx.NodeProto()
    proto.CopyFrom(node)
    proto.domain = ""
    inputs = [f"i{i}" if name else "" for i, name in enumerate(node.input)]
    outputs = [f"o{i}" if name else "" for i, name in enumerate(node.output)]
    proto.ClearField("input")
    proto.ClearField("output")
    proto.input.extend(inputs)
    proto.output.extend(outputs)
    feeds = {name: value for name, value in zip(inputs, arrays) if name}
    function = helper.make_function("xrelay", "fold", list(feeds), [n for n in outputs if n], [proto],
                                    [helper.make_opsetid("", opset)])
    # Input types let the evaluator expand ops whose function body depends on them (Gelu, ...).
    function.value_info.extend(_value_info(name, value) for name, value in feeds.items())
    results = iter(ReferenceEvaluator(function).run(None, feeds, attributes={}))
    return [next(results) if name else None for name in outputs]


def _value_info(name: str, value: np.ndarray | list) -> onnx.ValueInfoProto:
    if isinstance(value, list):
        element = value[0].dtype if value else np.dtype(np.float32)
        return helper.make_tensor_sequence_value_info(name, helper.np_dtype_to_tensor_dtype(element), None)
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype), value.shape)
