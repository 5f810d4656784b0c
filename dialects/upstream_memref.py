"""xrelay's `memref` dialect: xDSL 0.75's, with the ops whose text upstream MLIR writes differently.

Upstream's bufferization (`iree-opt --one-shot-bufferize`) writes

    memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<[...]> alignment = 64
    %alloc = memref.alloc() alignment = 64 : memref<1x4x8x8xf32>
    memref.copy %arg0, %subview : memref<...> to memref<..., strided<[300, 100, 10, 1], offset: 11>>

and xDSL 0.75 parses none of the three: its `memref.global` has no custom syntax, its `memref.alloc` and
`memref.alloca` take the alignment only inside the attribute dictionary (`{alignment = 64 : i64}`, which
upstream, with properties kept strictly out of the attribute dictionary, now rejects), and its `memref.copy`
and `memref.cast` have no custom syntax either. The ops here are xDSL's (subclasses, so every `isinstance` check, pass and
executor keeps working), parsing and printing upstream's syntax; the old `{alignment = ...}` spelling still
parses. `MEMREF` replaces xDSL's dialect in `make_context`.
"""

from __future__ import annotations

from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Dialect
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError


def _parse_alignment(parser: Parser) -> IntegerAttr | None:
    """Upstream's `alignment = N` (an i64 property written outside the attribute dictionary)."""
    if parser.parse_optional_keyword("alignment") is None:
        return None
    parser.parse_punctuation("=")
    return IntegerAttr(parser.parse_integer(allow_boolean=False, allow_negative=False), 64)


def _print_alignment(printer: Printer, alignment: IntegerAttr | None) -> None:
    if alignment is not None:
        printer.print_string(f" alignment = {alignment.value.data}")


class _UpstreamAllocation:
    """`memref.alloc`/`memref.alloca` as upstream writes them:
    `(%dynamic_sizes)[%symbols] alignment = 64 {attrs} : memref<...>`."""

    @classmethod
    def parse(cls, parser: Parser):
        index = IndexType()
        sizes = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        symbols = parser.parse_optional_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_unresolved_operand)
        alignment = _parse_alignment(parser)
        attrs = parser.parse_optional_attr_dict()
        if alignment is None:  # xDSL's and older MLIR's spelling
            alignment = attrs.pop("alignment", None)
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        op = cls.build(
            operands=[[parser.resolve_operand(s, index) for s in sizes],
                      [parser.resolve_operand(s, index) for s in symbols or ()]],
            result_types=[result_type],
            properties={"alignment": alignment},
        )
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        printer.print_list(self.dynamic_sizes, printer.print_ssa_value)
        printer.print_string(")")
        if self.symbol_operands:
            printer.print_string("[")
            printer.print_list(self.symbol_operands, printer.print_ssa_value)
            printer.print_string("]")
        _print_alignment(printer, self.alignment)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.memref.type)


class AllocOp(_UpstreamAllocation, memref.AllocOp):
    """`memref.alloc` in upstream's syntax (`memref.alloc() alignment = 64 : memref<4xf32>`)."""


class AllocaOp(_UpstreamAllocation, memref.AllocaOp):
    """`memref.alloca` in upstream's syntax (`memref.alloca() alignment = 64 : memref<4xf32>`)."""


class GlobalOp(memref.GlobalOp):
    """`memref.global` in upstream's syntax:
    `memref.global "private" constant @name : memref<4xf32> = dense<[...]> alignment = 64 {attrs}`;
    `= uninitialized` is a global without initial value. A declaration with no `=` at all (an
    external global) does not parse: xDSL's op requires an initial value and nothing could run it."""

    @classmethod
    def parse(cls, parser: Parser) -> GlobalOp:
        visibility = parser.parse_optional_str_literal()
        constant = UnitAttr() if parser.parse_optional_keyword("constant") is not None else None
        name = parser.parse_symbol_name()
        parser.parse_punctuation(":")
        pos = parser.pos
        memref_type = parser.parse_type()
        if not isinstance(memref_type, MemRefType):
            parser.raise_error(f"memref.global needs a memref type, got {memref_type}", pos, parser.pos)
        parser.parse_punctuation("=", " before the initial value of memref.global (xrelay cannot run "
                                  "an external memref.global declaration)")
        if parser.parse_optional_keyword("uninitialized") is not None:
            initial_value = UnitAttr()
        else:
            pos = parser.pos
            parser.parse_keyword("dense", " (memref.global's initial value)")
            try:
                initial_value = parser.parse_dense_int_or_fp_elements_attr(
                    TensorType(memref_type.get_element_type(), memref_type.get_shape()))
            except ParseError as error:  # xDSL reports a mismatch after the literal: point at the literal
                parser.raise_error(error.msg, pos, parser.pos)
        alignment = _parse_alignment(parser)
        attrs = parser.parse_optional_attr_dict()
        op = cls.build(properties={
            "sym_name": name, "type": memref_type, "initial_value": initial_value,
            "sym_visibility": StringAttr(visibility or "public"),  # xDSL requires one; upstream's default
            "constant": constant, "alignment": alignment or attrs.pop("alignment", None),
        })
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        if self.sym_visibility.data != "public":
            printer.print_string(" ")
            printer.print_string_literal(self.sym_visibility.data)
        if self.constant is not None:
            printer.print_string(" constant")
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(" : ")
        printer.print_attribute(self.type)
        printer.print_string(" = ")
        if isinstance(self.initial_value, DenseIntOrFPElementsAttr):
            # A printer that elides large constants (the instruments' dumps) prints it its way.
            print_elements = getattr(printer, "print_elements_without_type", None)
            if print_elements is not None:
                print_elements(self.initial_value)
            else:
                self.initial_value.print_without_type(printer)
        else:
            printer.print_string("uninitialized")
        _print_alignment(printer, self.alignment)
        printer.print_op_attributes(self.attributes)


def _parse_typed_to(parser: Parser, count: int):
    """`%a[, %b] {attrs} : T1 to T2` -> (resolved operands, attrs, [T1, T2])."""
    pos = parser.pos
    operands = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
    if len(operands) != count:
        parser.raise_error(f"expected {count} operand(s), got {len(operands)}", pos, parser.pos)
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    types = [parser.parse_type()]
    parser.parse_keyword("to")
    types.append(parser.parse_type())
    return parser.resolve_operands(operands, types[:count], pos), attrs, types


def _print_typed_to(printer: Printer, operands, attributes, types) -> None:
    printer.print_string(" ")
    printer.print_list(operands, printer.print_ssa_value)
    printer.print_op_attributes(attributes)
    printer.print_string(" : ")
    printer.print_attribute(types[0])
    printer.print_string(" to ")
    printer.print_attribute(types[1])


class CopyOp(memref.CopyOp):
    """`memref.copy %source, %target : memref<...> to memref<...>` (upstream's syntax)."""

    @classmethod
    def parse(cls, parser: Parser) -> CopyOp:
        (source, target), attrs, _ = _parse_typed_to(parser, 2)
        op = cls(source, target)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        _print_typed_to(printer, (self.source, self.destination), self.attributes,
                        (self.source.type, self.destination.type))


class CastOp(memref.CastOp):
    """`memref.cast %source : memref<...> to memref<...>` (upstream's syntax)."""

    @classmethod
    def parse(cls, parser: Parser) -> CastOp:
        (source,), attrs, (_, result_type) = _parse_typed_to(parser, 1)
        op = cls.build(operands=[source], result_types=[result_type])
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        _print_typed_to(printer, (self.source,), self.attributes, (self.source.type, self.dest.type))


REPLACED_OPS = (AllocOp, AllocaOp, GlobalOp, CopyOp, CastOp)

MEMREF = Dialect(
    "memref",
    [op for op in memref.MemRef.operations if op.name not in {r.name for r in REPLACED_OPS}] + list(REPLACED_OPS),
    list(memref.MemRef.attributes),
)
"""xDSL's memref dialect with the ops above in place of its own."""
