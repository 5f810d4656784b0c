"""Pieces of custom assembly formats that several dialects' ops share."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Attribute, SSAValue
from xdsl.printer import Printer


def print_call_operands(printer: Printer, operands: Sequence[SSAValue], attributes: dict[str, Attribute]) -> None:
    """`(%a, %b) {attrs} : `: the operands in parentheses, the attribute dictionary (if any) and the
    colon before the types (nn ops, upstream's `tensor.empty`)."""
    printer.print_string("(")
    printer.print_list(operands, printer.print_ssa_value)
    printer.print_string(")")
    printer.print_op_attributes(attributes)
    printer.print_string(" : ")
