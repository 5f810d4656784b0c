"""Upstream MLIR's linalg named ops, built from the OpDSL data in `upstream_named_defs` (generated).

Each op of `NAMED_OPS` becomes an IRDL op class (`NAMED_OP_CLASSES[name]`) with upstream's syntax,
`linalg.<name> {strides = ..., dilations = ..., cast = #linalg.type_fn<...>} ins(...) outs(...) -> T`:
its index attributes (strides, dilations) are optional properties whose absence means the
definition's defaults, its indexing maps are the definition's with those values in place of the
symbols, and its body is emitted from the scalar expression as upstream's region builder does
(`cast_signed`/`cast_unsigned` to the accumulator's type, no op when the types already agree).
Rank-polymorphic ops (`copy`) take identity maps of the output's rank. Every executor and pass
reads them as any structured op: through `get_indexing_maps`, `get_iterator_types` and the body.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from enum import auto
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DenseIntElementsAttr,
    IndexType,
    IntegerType,
    ShapedType,
    TensorType,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import NamedOperation
from xdsl.dialects.linalg.attrs import IteratorType, IteratorTypeAttr
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.irdl import irdl_attr_definition, irdl_op_definition, opt_prop_def
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from xrelay.dialects.upstream_named_defs import NAMED_OPS


class TypeFn(StrEnum):
    """Upstream's `TypeFn`: how a named op's body converts a value to another element type."""

    CAST_SIGNED = auto()
    CAST_UNSIGNED = auto()


@irdl_attr_definition
class TypeFnAttr(EnumAttribute[TypeFn]):
    """`#linalg.type_fn<cast_signed>`: the cast a named op's `cast` attribute selects (e.g. `linalg.copy`'s)."""

    name = "linalg.type_fn"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> TypeFn:
        with parser.in_angle_brackets():
            return super().parse_parameter(parser)

    def print_parameter(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            super().print_parameter(printer)


_FIXED_TYPES: dict[str, Attribute] = {"I1": i1, "I8": i8, "I16": i16, "I32": i32, "I64": i64,
                                      "F16": f16, "F32": f32, "F64": f64}
_SYMBOL = re.compile(r"\bs(\d+)\b")


class BodyError(VerifyException):
    """The body a named op's definition gives cannot be built for these operand types."""


def _cast(value: SSAValue, to: Attribute, unsigned: bool) -> SSAValue:
    """Upstream's `cast_signed` / `cast_unsigned` of a scalar (no op when the types agree)."""
    source = value.type
    if source == to:
        return value
    if isinstance(source, IndexType) and isinstance(to, IntegerType):
        op = arith.IndexCastOp(value, to)
    elif isinstance(source, IntegerType) and isinstance(to, IntegerType):
        wider = to.width.data > source.width.data
        op = (arith.ExtUIOp if unsigned else arith.ExtSIOp)(value, to) if wider else arith.TruncIOp(value, to)
    elif isinstance(source, IntegerType) and isinstance(to, AnyFloat):
        op = (arith.UIToFPOp if unsigned else arith.SIToFPOp)(value, to)
    elif isinstance(source, AnyFloat) and isinstance(to, IntegerType):
        op = (arith.FPToUIOp if unsigned else arith.FPToSIOp)(value, to)
    elif isinstance(source, AnyFloat) and isinstance(to, AnyFloat):
        op = (arith.ExtFOp if to.bitwidth > source.bitwidth else arith.TruncFOp)(value, to)
    else:
        raise BodyError(f"cannot cast {source} to {to}")
    return op.result


def _binary(fn: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """Upstream's `BinaryFn` on two scalars of one type (`add`/`mul` on i1 are `or`/`and`)."""
    floating = isinstance(lhs.type, AnyFloat)
    if lhs.type == i1 and fn in ("add", "mul"):
        return (arith.OrIOp if fn == "add" else arith.AndIOp)(lhs, rhs).result
    ops = {
        "add": (arith.AddfOp, arith.AddiOp), "sub": (arith.SubfOp, arith.SubiOp),
        "mul": (arith.MulfOp, arith.MuliOp), "div": (arith.DivfOp, arith.DivSIOp),
        "div_unsigned": (arith.DivfOp, arith.DivUIOp),
        "max_signed": (arith.MaximumfOp, arith.MaxSIOp), "min_signed": (arith.MinimumfOp, arith.MinSIOp),
        "max_unsigned": (arith.MaximumfOp, arith.MaxUIOp), "min_unsigned": (arith.MinimumfOp, arith.MinUIOp),
        "powf": (math.PowFOp, None),
    }
    if fn not in ops or ops[fn][not floating] is None:
        raise BodyError(f"binary function {fn} on {lhs.type} is not supported")
    return ops[fn][not floating](lhs, rhs).result


_UNARY = {"exp": math.ExpOp, "log": math.LogOp, "abs": math.AbsFOp, "ceil": math.CeilOp, "floor": math.FloorOp,
          "negf": arith.NegfOp, "sqrt": math.SqrtOp, "rsqrt": math.RsqrtOp, "tanh": math.TanhOp, "erf": math.ErfOp}


class _BodyBuilder:
    """Emits a definition's scalar expressions into a block, binding its type variables to the
    operands' element types."""

    def __init__(self, definition: dict, block: Block, type_fns: dict[str, str]):
        self.block = block
        self.type_fns = type_fns
        self.args = {name: arg for (name, *_), arg in zip(definition["operands"], block.args)}
        self.types = dict(_FIXED_TYPES)
        for (name, _kind, type_var, _rank), arg in zip(definition["operands"], block.args):
            self.types[type_var] = arg.type

    def add(self, op):
        self.block.add_op(op)
        return op.results[0]

    def emit(self, expr: tuple) -> SSAValue:
        kind = expr[0]
        if kind == "arg":
            return self.args[expr[1]]
        if kind == "const":
            attr = Parser(Context(), expr[1]).parse_attribute()
            return self.add(arith.ConstantOp(attr))
        if kind == "index":
            from xrelay.dialects.upstream_linalg import IndexOp  # the registered `linalg.index`

            return self.add(IndexOp(expr[1]))
        _, fn, attr_name, type_var, *operands = expr
        if attr_name is not None:
            fn = self.type_fns[attr_name]
        if kind == "type":
            if type_var not in self.types:
                raise BodyError(f"type variable {type_var} is not bound by any operand")
            value = self.emit(operands[0])
            cast = _cast(value, self.types[type_var], fn == "cast_unsigned")
            if cast is not value:
                self.block.add_op(cast.owner)
            return cast
        values = [self.emit(o) for o in operands]
        if kind == "unary":
            if fn not in _UNARY:
                raise BodyError(f"unary function {fn} is not supported")
            return self.add(_UNARY[fn](values[0]))
        if kind == "binary":
            result = _binary(fn, *values)
            self.block.add_op(result.owner)
            return result
        if kind == "ternary" and fn == "select":
            return self.add(arith.SelectOp(*values))
        raise BodyError(f"{kind} function {fn} is not supported")


class UpstreamNamedOp(NamedOperation):
    """A linalg named op as upstream's OpDSL defines it (`DEFINITION`, one entry of `NAMED_OPS`)."""

    PRINT_ATTRS_IN_FRONT: ClassVar[bool] = True
    DEFINITION: ClassVar[dict]

    @classmethod
    def build_body(cls, arg_types: Sequence[Attribute], type_fns: dict[str, str] | None = None) -> Region:
        """The body for operands of these element (or scalar) types, `type_fns` naming the cast of
        each type-function attribute (default: the definition's)."""
        block = Block(arg_types=arg_types)
        builder = _BodyBuilder(cls.DEFINITION, block, dict(cls.DEFINITION["type_fn_attrs"]) | (type_fns or {}))
        outputs = [name for name, kind, *_ in cls.DEFINITION["operands"] if kind == "output"]
        values = dict((out, builder.emit(expr)) for out, expr in cls.DEFINITION["body"])
        block.add_op(linalg.YieldOp(*(values[name] for name in outputs)))
        return Region(block)

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        types = [v.type.get_element_type() if isinstance(v.type, ShapedType) else v.type for v in (*inputs, *outputs)]
        try:
            return cls.build_body(types)
        except BodyError:  # verify_ reports it with the op's types
            return Region(Block(arg_types=types))

    def __init__(self, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue] = (),
                 res: Sequence[Attribute] | None = None, attributes: dict[str, Attribute] | None = None,
                 **properties: Attribute):
        result_types = res if res is not None else [o.type for o in outputs if isinstance(o.type, TensorType)]
        super().__init__(inputs, outputs, result_types, properties, attributes,
                         self.get_hidden_region(inputs, outputs))
        self._rebuild_body()

    @classmethod
    def parse(cls, parser: Parser):
        op = super().parse(parser)
        try:
            op._rebuild_body()
        except BodyError as error:
            parser.raise_error(f"{op.name}: {error}")
        return op

    def _type_fns(self) -> dict[str, str]:
        return {name: self.properties[name].data.value for name, _ in self.DEFINITION["type_fn_attrs"]
                if name in self.properties}

    def _rebuild_body(self) -> None:
        """Replaces the default body when a type-function attribute selects another cast."""
        if self._type_fns():
            old = self.body.block
            new = self.build_body([a.type for a in old.args], self._type_fns()).detach_block(0)
            self.body.detach_block(old).erase()
            self.body.add_block(new)

    def index_attr_values(self) -> dict[str, tuple[int, ...]]:
        """Each index attribute's values (its default when absent)."""
        values = {}
        for name, _positions, default in self.DEFINITION["index_attrs"]:
            attr = self.properties.get(name)
            values[name] = tuple(attr.get_values()) if attr is not None else tuple(default)
        return values

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        rank = None
        if not self.DEFINITION["iterators"]:  # rank-polymorphic: the output's rank
            rank = len(self.outputs[0].type.get_shape()) if isinstance(self.outputs[0].type, ShapedType) else 0
        return _indexing_maps(self.name, tuple(self.index_attr_values().items()), rank,
                              tuple(isinstance(v.type, ShapedType) for v in self.operands))

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        iterators = self.DEFINITION["iterators"] or ("parallel",) * self.get_num_loops()
        return ArrayAttr(IteratorTypeAttr(IteratorType(it)) for it in iterators)

    def get_num_loops(self) -> int:
        return self.get_default_indexing_maps()[0].num_dims

    def verify_(self) -> None:
        expected = [kind != "output" for _, kind, *_ in self.DEFINITION["operands"]]
        if len(self.inputs) != sum(expected) or len(self.outputs) != len(expected) - sum(expected):
            raise VerifyException(f"{self.name} takes {sum(expected)} ins and {len(expected) - sum(expected)} outs, "
                                  f"got {len(self.inputs)} and {len(self.outputs)}")
        for name, positions, _default in self.DEFINITION["index_attrs"]:
            attr = self.properties.get(name)
            if attr is not None and len(attr.get_values()) != len(positions):
                raise VerifyException(f"{self.name}: {name} needs {len(positions)} values, got {len(attr.get_values())}")
        try:
            self.build_body([a.type for a in self.body.block.args], self._type_fns())
        except BodyError as error:
            raise VerifyException(f"{self.name}: {error}") from None
        super().verify_()


@functools.lru_cache(maxsize=1024)
def _indexing_maps(name: str, attr_values: tuple[tuple[str, tuple[int, ...]], ...], rank: int | None,
                   shaped: tuple[bool, ...]) -> tuple[AffineMap, ...]:
    """The maps of op `name` with its index attributes' values in place of their symbols."""
    definition = NAMED_OPS[name.removeprefix("linalg.")]
    if rank is not None:
        return tuple(AffineMap.identity(rank) if s else AffineMap(rank, 0, ()) for s in shaped)
    symbols = {}
    values = dict(attr_values)
    for attr, positions, _default in definition["index_attrs"]:
        symbols.update({p: v for p, v in zip(positions, values[attr])})
    maps = []
    for text in definition["maps"]:
        dims, results = text.split(" -> ")
        dims = dims.split("[")[0]
        results = _SYMBOL.sub(lambda m: str(symbols[int(m.group(1))]), results)
        maps.append(Parser(Context(), f"{dims} -> {results}").parse_affine_map())
    return tuple(maps)


def _named_op_class(name: str, definition: dict) -> type[UpstreamNamedOp]:
    namespace = {
        "name": f"linalg.{name}", "DEFINITION": definition, "__module__": __name__,
        "__annotations__": {"DEFINITION": ClassVar[dict]},
        "__doc__": f"`linalg.{name}`: {definition['doc']} (upstream's OpDSL definition)",
    }
    namespace |= {attr: opt_prop_def(DenseIntElementsAttr) for attr, *_ in definition["index_attrs"]}
    namespace |= {attr: opt_prop_def(TypeFnAttr) for attr, _ in definition["type_fn_attrs"]}
    return irdl_op_definition(type(definition["class_name"], (UpstreamNamedOp,), namespace))


NAMED_OP_CLASSES: dict[str, type[UpstreamNamedOp]] = {
    name: _named_op_class(name, definition) for name, definition in NAMED_OPS.items()}
"""Every named op of upstream's definition, by name without the `linalg.` prefix."""
