"""Walks an ONNX graph in node order and builds `func.func @main` over nn ops.

Every ONNX value is either an SSA value of the function or a numpy array known at import time:
constants, shapes (every shape is static), integer and boolean initializers and whatever is computed
from them only. A node whose inputs are all known is evaluated at import (`fold.py`: ONNX's reference
evaluator), so shape subgraphs never reach the module. Float
initializers become `@main` parameters on first use as a tensor (their values go to `params`); their
values stay readable where an op needs them at import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, BlockArgument, Region, SSAValue

from xrelay.dialects import nn
from xrelay.dialects.arguments import set_argument_names
from xrelay.dialects.constant import dtype_of, element_type_of
from xrelay.frontend.onnx.errors import OnnxImportError
from xrelay.frontend.onnx.fold import evaluate, foldable
from xrelay.frontend.onnx.registry import CONVERTERS

Value = SSAValue | np.ndarray | list
"""An ONNX value: computed at run time, or known at import (a tensor, or a sequence of tensors)."""


class Node:
    """One ONNX node as its converter sees it: attributes, inputs (as SSA values or import-time
    arrays), shapes, and `emit` to append nn ops."""

    def __init__(self, importer: GraphImporter, proto: onnx.NodeProto):
        self.importer = importer
        self.proto = proto
        self.op_type = proto.op_type
        self.opset = importer.opset
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self.attrs = {a.name: onnx.helper.get_attribute_value(a) for a in proto.attribute}

    def __str__(self) -> str:
        return f"node '{self.proto.name or self.outputs[0]}' ({self.op_type})"

    def attr(self, name: str, default: object = None) -> object:
        value = self.attrs.get(name, default)
        return value.decode() if isinstance(value, bytes) else value

    def has(self, i: int) -> bool:
        """Whether optional input `i` is given."""
        return i < len(self.inputs) and self.inputs[i] != ""

    def value(self, i: int) -> SSAValue:
        """Input `i` as an SSA value (a constant or a parameter when it is known at import)."""
        return self.importer.tensor(self.inputs[i])

    def values_alike(self, *indices: int) -> list[SSAValue]:
        """Inputs as SSA values, import-time ones cast to the element type of a run-time one
        (ONNX exporters write float64 or int scalars next to float32 tensors)."""
        runtime = [i for i in indices if self.static(i) is None or self.importer.is_parameter(self.inputs[i])]
        if not runtime:
            return [self.value(i) for i in indices]
        dtype = self.dtype(runtime[0])
        return [self.value(i) if i in runtime or self.dtype(i) == dtype else self.constant(self.static(i).astype(dtype))
                for i in indices]

    def static(self, i: int) -> np.ndarray | None:
        """Input `i`'s value when it is known at import (initializers included), else None."""
        return self.importer.known(self.inputs[i]) if self.has(i) else None

    def required_static(self, i: int, what: str) -> np.ndarray:
        array = self.static(i)
        if array is None:
            raise self.error(f"{what} (input '{self.inputs[i]}') must be known at import time")
        return array

    def shape(self, i: int) -> tuple[int, ...]:
        return self.importer.shape(self.inputs[i])

    def dtype(self, i: int) -> np.dtype:
        return self.importer.dtype(self.inputs[i])

    def emit(self, op_name: str, *operands: SSAValue, **attrs: object) -> SSAValue:
        """Append the nn op `op_name` and return its (first) result."""
        return self.emit_op(op_name, *operands, **attrs).results[0]

    def emit_op(self, op_name: str, *operands: SSAValue, **attrs: object):
        try:
            op = nn.make(op_name, operands, **attrs)
        except (nn.ShapeError, TypeError, ValueError) as err:
            raise self.error(str(err)) from None
        self.importer.block.add_op(op)
        return op

    def constant(self, array: np.ndarray) -> SSAValue:
        return self.importer.constant(np.asarray(array))

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        """A 0-d constant of `like`'s element type."""
        return self.constant(np.asarray(value, dtype=dtype_of(like.type.get_element_type())))

    def error(self, message: str) -> OnnxImportError:
        return OnnxImportError(f"{self}: {message}")


class GraphImporter:
    """Builds one `@main` from a checked ONNX graph (see `model.py` for the checks)."""

    def __init__(self, model: onnx.ModelProto, opset: int, input_shapes: Mapping[str, tuple[int, ...]],
                 input_dtypes: Mapping[str, np.dtype]):
        self.model = model
        self.graph = model.graph
        self.opset = opset
        self.block = Block()
        self.names: list[str] = []
        self.values: dict[str, Value] = {}
        self.initializers = {init.name: init for init in self.graph.initializer}
        self.initializer_values: dict[str, np.ndarray] = {}
        self.params: dict[str, np.ndarray] = {}
        self.materialised: dict[str, SSAValue] = {}
        for name, shape in input_shapes.items():
            self.values[name] = self._argument(name, shape, input_dtypes[name])

    # values -----------------------------------------------------------------------------------

    def _argument(self, name: str, shape: Sequence[int], dtype: np.dtype) -> BlockArgument:
        arg = self.block.insert_arg(TensorType(element_type_of(dtype), list(shape)), len(self.block.args))
        self.names.append(name)
        return arg

    def _initializer(self, name: str) -> np.ndarray:
        if name not in self.initializer_values:
            self.initializer_values[name] = numpy_helper.to_array(self.initializers[name])
        return self.initializer_values[name]

    def is_parameter(self, name: str) -> bool:
        """Float initializers are parameters (integer ones are shape data, known at import)."""
        return name in self.initializers and self._initializer(name).dtype.kind == "f"

    def known(self, name: str) -> np.ndarray | list | None:
        """The value of `name` if known at import time (a parameter's too), else None."""
        if name in self.initializers:
            return self._initializer(name)
        value = self.values.get(name)
        return value if isinstance(value, np.ndarray | list) else None

    def lookup(self, name: str) -> Value:
        if name not in self.values and name in self.initializers:
            array = self._initializer(name)
            if self.is_parameter(name):
                self.values[name] = self._argument(name, array.shape, array.dtype)
                self.params[name] = array
            else:
                self.values[name] = array
        try:
            value = self.values[name]
        except KeyError:
            raise OnnxImportError(f"value '{name}' is used before any node computes it") from None
        if value is None:
            raise OnnxImportError(f"value '{name}' (an output only training computes) is used")
        return value

    def tensor(self, name: str) -> SSAValue:
        value = self.lookup(name)
        if isinstance(value, list):
            raise OnnxImportError(f"value '{name}' is a sequence of tensors, which only import-time "
                                  "evaluation takes (xrelay's run-time values are tensors)")
        if not isinstance(value, np.ndarray):
            return value
        if name not in self.materialised:  # one nn.constant per known value used as a tensor
            self.materialised[name] = self.constant(value)
        return self.materialised[name]

    def constant(self, array: np.ndarray) -> SSAValue:
        """A new nn.constant holding `array` (booleans and small integers widen to i64)."""
        if array.dtype.kind in "bu" or array.dtype in (np.int8, np.int16):
            array = array.astype(np.int64)
        try:
            op = nn.ConstantOp(array)
        except TypeError as err:
            raise OnnxImportError(f"a constant of {array.dtype}: {err}") from None
        self.block.add_op(op)
        return op.results[0]

    def shape(self, name: str) -> tuple[int, ...]:
        value = self.lookup(name)
        if isinstance(value, np.ndarray):
            return tuple(value.shape)
        return tuple(value.type.get_shape())

    def dtype(self, name: str) -> np.dtype:
        value = self.lookup(name)
        if isinstance(value, np.ndarray):
            return value.dtype
        return dtype_of(value.type.get_element_type())

    # nodes ------------------------------------------------------------------------------------

    def convert(self, proto: onnx.NodeProto) -> None:
        node = Node(self, proto)
        present = [name for name in node.inputs if name]
        arrays = [self.known(name) if name else None for name in node.inputs]
        all_known = all(a is not None for a, name in zip(arrays, node.inputs) if name)
        # A node of known inputs is evaluated, except initializers feeding real ops stay parameters.
        if all_known and foldable(proto, self.opset) and not any(self.is_parameter(n) for n in present):
            try:
                outputs = evaluate(proto, self.opset, arrays)
            except OnnxImportError:
                raise
            except Exception as err:  # noqa: BLE001 - the evaluator rejecting the node's values
                raise node.error(f"cannot evaluate at import time: {err}") from None
        elif node.op_type in CONVERTERS:
            outputs = CONVERTERS[node.op_type].convert(node)
        else:
            raise node.error("only computes shapes here, but an input is only known at run time")
        if not isinstance(outputs, list | tuple):
            outputs = [outputs]
        for name, value in zip(node.outputs, outputs):
            if name:
                self.values[name] = np.asarray(value) if isinstance(value, np.ndarray | np.generic) else value
        for name in node.outputs[len(outputs):]:
            if name:
                self.values[name] = None

    def finish(self, output_names: Sequence[str]) -> tuple[ModuleOp, dict[str, np.ndarray]]:
        results = [self.tensor(name) for name in output_names]
        self.block.add_op(ReturnOp(*results))
        func = FuncOp("main", (self.block.arg_types, [r.type for r in results]), Region(self.block))
        set_argument_names(func, self.names)
        return ModuleOp([func]), self.params


ALWAYS_KNOWN = frozenset({"Shape", "Size"})
"""Op types whose outputs are known at import whatever their inputs (shapes are static)."""


def import_time_nodes(model: onnx.ModelProto, opset: int) -> set[int]:
    """Indices of the nodes `GraphImporter.convert` evaluates at import: the same rule, applied to
    which values are known rather than to the values themselves."""
    graph = model.graph
    known = {init.name for init in graph.initializer if init.data_type not in _FLOAT_TYPES}
    static_nodes = set()
    for index, node in enumerate(graph.node):
        present = [name for name in node.input if name]
        if node.op_type in ALWAYS_KNOWN or (all(n in known for n in present) and foldable(node, opset)):
            static_nodes.add(index)
            known.update(node.output)
    return static_nodes


_FLOAT_TYPES = frozenset({onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16,
                          onnx.TensorProto.BFLOAT16})


def import_graph(model: onnx.ModelProto, opset: int, input_shapes: Mapping[str, tuple[int, ...]],
                 input_dtypes: Mapping[str, np.dtype],
                 progress: Callable[[str], None] | None = None) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    importer = GraphImporter(model, opset, input_shapes, input_dtypes)
    nodes = model.graph.node
    step = max(1, len(nodes) // 20)
    for index, proto in enumerate(nodes):
        if progress is not None and index % step == 0:
            progress(f"importing node {index + 1}/{len(nodes)}")
        importer.convert(proto)
    return importer.finish([out.name for out in model.graph.output])
