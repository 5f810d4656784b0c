"""What every nn op shares: the `NNOp` base class, attribute kinds, the op registry and the
layout rules ConvertLayout dispatches on.

`NNOp` supplies construction from operands and plain Python attributes with result-type
inference, `attrs()`, `infer_result_types()`, the verifier and the custom assembly format
``nn.op(%a, %b) {attrs} : (types) -> types``. An op class (in `dialects/ops/<family>.py`)
only declares its operands, its attributes with Relay's defaults, its shape rule and its
`LAYOUT` rule, and is registered with `@nn_op`. Attributes equal to their default are left
out of the IR, so equal ops print equally. The checklist for a new op is in CONTRIBUTING.md.
"""

from __future__ import annotations

import enum
import numbers
from collections.abc import Callable, Sequence
from typing import Any, ClassVar


from xdsl.dialects.builtin import (
    AnyFloat,
    IntegerType,
    TensorType,
    f16,
    f32,
    f64,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarOperandDef,
    VarResultDef,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.irdl.operations import OptAttributeDef, _OpDefField
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from xrelay.dialects.assembly import print_call_operands
from xrelay.dialects.attributes import fits, kind, to_attr, to_python
from xrelay.dialects.layout import pad4, pair
from xrelay.dialects.infer import ShapeError, check_size


NN_ELEMENT_TYPES: tuple[Attribute, ...] = (f32, f16, f64, i32, i64)
"""The element types of nn tensors: what every nn op's verifier and `nn.constant` accept, and what
the kernels and every lowering level run alike (`constant.dtype_of` maps them, and the further types
lowered IR uses: i1, i8, i16, signed and unsigned integers, index)."""

NN_ELEMENT_TYPE_NAMES = ", ".join(map(str, NN_ELEMENT_TYPES))


# --- the registry ------------------------------------------------------------------------

REGISTERED_OPS: list[type[Operation]] = []
"""Every op class of the nn dialect, in registration order (`nn.NN` and `nn.OPS` are built from it)."""


def nn_op(cls: type[Operation] | None = None, /, *, shape: Callable | None = None,
          layout: LayoutRule | None = None, float_only: bool | None = None):
    """Define an nn op (`irdl_op_definition`) and register it in the dialect.

    `@nn_op(shape=rule, layout=LayoutRule.X, float_only=True)` gives the op its shape rule
    (`SHAPE_RULE`), its ConvertLayout rule (`LAYOUT`) and `FLOAT_ONLY`; each not given is inherited
    from the op's base class (`DataOp`, a family's `_UnaryOp`, ...). Fields inherited from a base
    come first in the op's declaration order (how attributes print), as in a dataclass.
    """

    def define(cls: type[Operation]) -> type[Operation]:
        _declare_inherited_fields_first(cls)
        op = irdl_op_definition(cls)
        for attribute, value in (("SHAPE_RULE", shape and staticmethod(shape)), ("LAYOUT", layout),
                                 ("FLOAT_ONLY", float_only)):
            if value is not None:
                setattr(op, attribute, value)
        if any(other.name == op.name for other in REGISTERED_OPS):
            raise ValueError(f"nn op {op.name} is defined twice")
        REGISTERED_OPS.append(op)
        return op

    return define if cls is None else define(cls)


def family_op(base: type[NNOp], class_name: str, op_name: str, doc: str | None = None, **options: Any) -> type[Operation]:
    """Define and register (`nn_op`, with `options`) an op that adds nothing to its family's `base`
    class but its name (and docstring): nn.relu is `_UnaryOp` named "nn.relu"."""
    namespace = {"name": op_name, "__module__": base.__module__, "__qualname__": class_name, "__doc__": doc}
    return nn_op(type(class_name, (base,), namespace), **options)


def _declare_inherited_fields_first(cls: type[Operation]) -> None:
    """Re-declare the op's IRDL fields base-first: xDSL reads a class's own fields before its bases',
    which would put an attribute an op adds to a shared base (avg_pool2d's count_include_pad) first."""
    fields: dict[str, _OpDefField] = {}
    for klass in reversed(cls.__mro__):
        for key, value in vars(klass).items():
            if isinstance(value, _OpDefField):
                fields[key] = getattr(cls, key)  # an override keeps the base's position
    for key in fields:
        if key in vars(cls):
            delattr(cls, key)
    for key, value in fields.items():
        setattr(cls, key, value)


class OpTable(dict):
    """A table keyed by nn op class, what each op has one of (`runtime.kernels.KERNELS`,
    `lowering.to_linalg.LOWERINGS`): `@table.register(OpA, OpB)` enters the decorated function for
    each class; a second entry for a class is an error."""

    def __init__(self, what: str):
        super().__init__()
        self.what = what

    def register(self, *op_classes: type[Operation]) -> Callable[[Callable], Callable]:
        """Enter the decorated function for `op_classes`."""

        def register(fn: Callable) -> Callable:
            for op_class in op_classes:
                if op_class in self:
                    raise ValueError(f"{op_class.name} has two {self.what}s")
                self[op_class] = fn
            return fn

        return register


class LayoutRule(enum.Enum):
    """How ConvertLayout (passes/layout_rewriter.py) treats an op; every op declares one as `LAYOUT`."""

    AGNOSTIC = "agnostic"
    """Elementwise on one tensor: the result follows the data operand's layout."""
    BROADCAST = "broadcast"
    """Numpy-broadcasting binary op: the operands are brought into one layout, which the result keeps."""
    CHANNEL_AXIS = "channel_axis"
    """Per-channel op (`axis` attribute): follows the data operand, `axis` renumbered."""
    REDUCE = "reduce"
    """Reduction (`axis`, `keepdims`, `exclude`): follows the data operand, axes renumbered; the
    result keeps the surviving axes in the data's layout (Relay's ReduceInferCorrectLayout)."""
    POOL = "pool"
    """2-D window op with a `layout` attribute: follows the data operand, `layout` renamed."""
    CONV = "conv"
    """Takes the desired layouts given to ConvertLayout (nn.conv2d)."""
    TRANSFORM = "transform"
    """nn.layout_transform itself: composed with the transforms around it."""
    DENSE = "dense"
    """Layout-sensitive, but a 2-D result is named NC so a following bias_add can follow it (as Relay)."""
    CONCATENATE = "concatenate"
    """Operands brought into the layout of the first converted one, which the result keeps; `axis`
    renumbered (Relay's ConcatenateLayout)."""
    SPLIT = "split"
    """The pieces follow the data operand, `axis` renumbered (Relay's SplitInferCorrectLayout)."""
    PAD = "pad"
    """Follows the data operand, the (before, after) pairs of `pad_width` permuted with its axes."""
    STRIDED_SLICE = "strided_slice"
    """Follows the data operand, the sliced `axes` renumbered (Relay's StridedSliceInferCorrectLayout)."""
    RESHAPE = "reshape"
    """Follows a converted data operand when each run of axes it merges or splits is one block of the
    operand's memory (a channel shuffle's split of C in NHWC), else layout-sensitive."""
    TRANSPOSE = "transpose"
    """Follows a converted data operand: the axes it moves are permuted where they sit in the
    operand's current layout (no copy if they already sit in the new order)."""
    SENSITIVE = "sensitive"
    """Layout-sensitive: operands go back to their original layout (a layout_transform is inserted)."""
    NONE = "none"
    """No operands, nothing to convert (nn.constant)."""


# Relay accepts an int for 2-D window attributes and 1/2/4-tuples for padding.
_NORMALISE: dict[str, Callable[[Any], tuple[int, ...]]] = {
    "padding": pad4,
    "strides": pair,
    "dilation": pair,
    "pool_size": pair,
    "kernel_size": pair,
}


def _as_value(operand: SSAValue | Operation) -> SSAValue:
    """An operand given as an SSA value or as an operation with exactly one result."""
    if isinstance(operand, Operation):
        if len(operand.results) != 1:
            raise TypeError(f"operand {operand.name} must have exactly one result")
        return operand.results[0]
    return SSAValue.get(operand)


class NNOp(IRDLOperation):
    """Shared machinery of the nn ops (not an op itself)."""

    traits = traits_def(Pure())

    SHAPE_RULE: ClassVar[Callable[[list[tuple[int, ...]], dict], Any]]
    FLOAT_ONLY: ClassVar[bool] = False
    """Whether the op is defined on float tensors only (as in Relay: softmax, batch_norm, ...)."""
    LAYOUT: ClassVar[LayoutRule]
    """How ConvertLayout treats the op; every op class declares it (the op-coverage test checks)."""
    NO_LOWERING: ClassVar[str | None] = None
    """Why the op deliberately has no linalg lowering, or None when it has one (the coverage test checks)."""
    NORMALISE: ClassVar[dict[str, Callable[[Any], tuple[int, ...]]]] = _NORMALISE
    """Attributes given in Relay's short 2-D forms (strides=2 -> (2, 2)); an op whose attribute of the
    same name is not a 2-D window attribute (strided_slice's strides) sets its own."""
    INTEGER_OPERANDS: ClassVar[tuple[str, ...]] = ()
    """Operands holding integer tensors (indices, i32 or i64), exempt from the shared element type."""

    # An op's operands (or results) are either fixed or one variadic list (`var_operand_def`:
    # nn.concatenate's inputs; `var_result_def`: nn.split's pieces).
    @classmethod
    def variadic_operands(cls) -> bool:
        return any(isinstance(d, VarOperandDef) for _, d in cls.get_irdl_definition().operands)

    @classmethod
    def variadic_results(cls) -> bool:
        return any(isinstance(d, VarResultDef) for _, d in cls.get_irdl_definition().results)

    @classmethod
    def operand_names(cls, count: int) -> list[str]:
        """The names of `count` operands, for messages; a variadic operand's are numbered ("data #1")."""
        names = [name for name, _ in cls.get_irdl_definition().operands]
        return [f"{names[0]} #{i}" for i in range(count)] if cls.variadic_operands() else names

    def __init__(self, *operands: SSAValue | Operation, **attrs: object):
        op_def = self.get_irdl_definition()
        variadic_in, variadic_out = self.variadic_operands(), self.variadic_results()
        if variadic_in and not operands:
            raise TypeError(f"{self.name} takes one or more '{op_def.operands[0][0]}' operands, got none")
        if not variadic_in and len(operands) != len(op_def.operands):
            names = ", ".join(name for name, _ in op_def.operands)
            raise TypeError(f"{self.name} takes {len(op_def.operands)} operands ({names}), got {len(operands)}")
        attributes = self.attributes_from_python(attrs)
        values = [_as_value(o) for o in operands]
        result_types = type(self).infer_types([v.type for v in values], attributes)
        super().__init__(operands=[values] if variadic_in else values,
                         result_types=[result_types] if variadic_out else result_types, attributes=attributes)

    @classmethod
    def attributes_from_python(cls, attrs: dict[str, object]) -> dict[str, Attribute]:
        """IR attributes from Python values; values equal to the default are dropped."""
        op_def = cls.get_irdl_definition()
        attributes: dict[str, Attribute] = {}
        for key, value in attrs.items():
            if key not in op_def.attributes:
                raise TypeError(f"{cls.name} has no attribute '{key}' (has {', '.join(op_def.attributes)})")
            if value is None:
                continue
            if key in cls.NORMALISE:
                try:
                    value = cls.NORMALISE[key](value)
                except ShapeError as e:
                    raise ShapeError(f"{cls.name}: {e}") from None
            attr_def_ = op_def.attributes[key]
            attr = to_attr(value)
            if isinstance(value, numbers.Integral) and not fits(attr_def_.constr, attr):
                attr = to_attr(float(value))  # e.g. epsilon=1
            if not fits(attr_def_.constr, attr):
                raise TypeError(f"{cls.name}: attribute '{key}' must be {kind(attr_def_.constr)}, got {value!r}")
            if attr != attr_def_.default_value:
                attributes[key] = attr
        for key, attr_def_ in op_def.attributes.items():
            if not isinstance(attr_def_, OptAttributeDef) and key not in attributes:
                raise TypeError(f"{cls.name}: required attribute '{key}' is missing")
        # Declaration order, so that equal ops print equally however they were built.
        return {key: attributes[key] for key in op_def.attributes if key in attributes}

    @classmethod
    def python_attrs(cls, attributes: dict[str, Attribute]) -> dict[str, object]:
        """Python values of IR attributes, defaults filled in; padding always has 4 values."""
        op_def = cls.get_irdl_definition()
        result: dict[str, object] = {}
        for key, attr_def_ in op_def.attributes.items():
            attr = attributes.get(key, attr_def_.default_value)
            value = None if attr is None else to_python(attr)
            if value is not None and key in cls.NORMALISE:
                value = cls.NORMALISE[key](value)  # IR written by hand may hold Relay's short forms
            result[key] = value
        return result

    @classmethod
    def infer_types(cls, operand_types: Sequence[Attribute], attributes: dict[str, Attribute]) -> list[TensorType]:
        """Result types for these operand types and IR attributes (raises ShapeError)."""
        op_def = cls.get_irdl_definition()
        names = cls.operand_names(len(operand_types))
        for name, t in zip(names, operand_types):
            if not isinstance(t, TensorType):
                raise ShapeError(f"{cls.name}: operand '{name}' must be a ranked tensor, got {t}")
            if any(dim < 0 for dim in t.get_shape()):  # `?` is a negative sentinel in xDSL
                raise ShapeError(f"{cls.name}: operand '{name}' has a dynamic shape ({t}); nn ops need static shapes")
        element = operand_types[0].get_element_type()
        if element not in NN_ELEMENT_TYPES:  # bf16, f80, i0, i1, ui8, complex, index: no kernel or lowering
            raise ShapeError(f"{cls.name}: operand '{names[0]}' has element type {element}, which nn ops do not "
                             f"support (use {NN_ELEMENT_TYPE_NAMES})")
        for name, t in zip(names, operand_types):
            check_size(tuple(t.get_shape()), f"{cls.name}: operand '{name}'")
        if cls.FLOAT_ONLY and not isinstance(element, AnyFloat):
            raise ShapeError(f"{cls.name}: operand '{names[0]}' must have a float element type, got {element}")
        for name, t in zip(names[1:], operand_types[1:]):
            if name in cls.INTEGER_OPERANDS:
                if not isinstance(t.get_element_type(), IntegerType) or t.get_element_type() not in NN_ELEMENT_TYPES:
                    integers = ", ".join(str(e) for e in NN_ELEMENT_TYPES if isinstance(e, IntegerType))
                    raise ShapeError(f"{cls.name}: operand '{name}' must have an integer element type, "
                                     f"got {t.get_element_type()} (use {integers})")
            elif t.get_element_type() != element:
                raise ShapeError(
                    f"{cls.name}: operand '{name}' element type {t.get_element_type()} differs from "
                    f"'{names[0]}' element type {element}"
                )
        shapes = [tuple(t.get_shape()) for t in operand_types]
        try:
            out = cls.SHAPE_RULE(shapes, cls.python_attrs(attributes))
        except ShapeError as e:
            raise ShapeError(f"{cls.name}: {e}") from None
        out_shapes = out if len(op_def.results) > 1 or cls.variadic_results() else [out]
        for shape in out_shapes:
            check_size(tuple(shape), f"{cls.name}: result")
        return [TensorType(element, shape) for shape in out_shapes]

    def attrs(self) -> dict[str, object]:
        """Every attribute as a plain Python value, defaults filled in, None when absent."""
        return self.python_attrs(self.attributes)

    def infer_result_types(self) -> list[TensorType]:
        """Result types recomputed from the current operands and attributes."""
        return self.infer_types([o.type for o in self.operands], self.attributes)

    # The custom form `nn.op(%a, %b) {attrs} : (types) -> types` is what the declarative
    # `(` operands `)` attr-dict `:` functional-type(operands, results) would give, but
    # written out so that a malformed attribute is a ParseError naming the attribute.
    def print(self, printer: Printer) -> None:
        print_call_operands(printer, self.operands, self.attributes)
        printer.print_function_type(self.operand_types, self.result_types)

    @classmethod
    def parse(cls, parser: Parser) -> NNOp:
        pos = parser.pos
        operands = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        attrs_pos = parser.pos
        attributes = parser.parse_optional_attr_dict()
        op_def = cls.get_irdl_definition()
        for key, attr in attributes.items():
            if key in op_def.attributes and not fits(op_def.attributes[key].constr, attr):
                constr = op_def.attributes[key].constr
                parser.raise_error(f"{cls.name}: attribute '{key}' must be {kind(constr)}, got {attr}", attrs_pos)
        missing = [k for k, d in op_def.attributes.items() if not isinstance(d, OptAttributeDef) and k not in attributes]
        if missing:
            parser.raise_error(f"{cls.name}: required attribute '{missing[0]}' is missing", attrs_pos)
        parser.parse_punctuation(":")
        types_pos = parser.pos
        function_type = parser.parse_function_type()
        results = "one or more" if cls.variadic_results() else len(op_def.results)
        if len(function_type.inputs) != len(operands) or (
            len(function_type.outputs) != len(op_def.results) if results != "one or more" else not function_type.outputs
        ):
            parser.raise_error(
                f"{cls.name}: expected {len(operands)} operand type(s) and {results} "
                f"result type(s), got {function_type}",
                types_pos,
            )
        if cls.variadic_operands() and not operands:
            parser.raise_error(f"{cls.name} takes one or more operands, got none", pos)
        if not cls.variadic_operands() and len(operands) != len(op_def.operands):
            parser.raise_error(f"{cls.name} takes {len(op_def.operands)} operands, got {len(operands)}", pos)
        values = parser.resolve_operands(operands, function_type.inputs.data, pos)
        return cls.create(operands=values, result_types=function_type.outputs.data, attributes=attributes)

    def verify_(self) -> None:
        try:
            expected = self.infer_result_types()
        except ShapeError as e:
            raise VerifyException(str(e)) from None
        actual = [r.type for r in self.results]
        if actual != expected:
            raise VerifyException(
                f"{self.name}: result types ({', '.join(map(str, actual))}) differ from the inferred "
                f"({', '.join(map(str, expected))}) for operand types "
                f"({', '.join(str(o.type) for o in self.operands)})"
            )


class DataOp(NNOp):
    """Base of the ops whose first operand is the tensor `data` and whose one result is `result`;
    an op adds its other operands and attributes after these."""

    data = operand_def(TensorType)
    result = result_def(TensorType)
