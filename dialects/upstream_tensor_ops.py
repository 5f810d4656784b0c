"""xrelay's `tensor` dialect: xDSL 0.75's, with `tensor.empty` keeping its attribute dictionary and
`tensor.pad` verified as upstream verifies it.

Upstream MLIR writes `%0 = tensor.empty() {kernel.offset = 1024 : i64} : tensor<1x8x8x16xf32>`
(`(`$dynamicSizes`)` attr-dict `:` type($result)); xDSL 0.75's `tensor.empty` neither prints nor parses
the dictionary, so the memory placement `plan-memory` writes on it (dialects/kernel.py) would vanish
from the printed IR. `EmptyOp` is xDSL's (a subclass: every `isinstance` check keeps matching) with
upstream's syntax. xDSL's `tensor.pad` accepts a result type its padding does not give (`low[99999]`
on a 4-row source into 6 rows), which the executors would then write past; upstream's verifier, and
`PadOp` here, reject it. `TENSOR` replaces xDSL's dialect in `make_context`.
"""

from __future__ import annotations

from xdsl.dialects import tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, TensorType
from xdsl.ir import Dialect
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from xrelay.dialects.assembly import print_call_operands
from xrelay.dialects.redefine import redefined


class EmptyOp(tensor.EmptyOp):
    """`tensor.empty` printed and parsed with its attribute dictionary, as upstream MLIR does."""

    def print(self, printer: Printer) -> None:
        print_call_operands(printer, self.dynamic_sizes, self.attributes)
        printer.print_attribute(self.tensor.type)

    @classmethod
    def parse(cls, parser: Parser) -> EmptyOp:
        pos = parser.pos
        sizes = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        dynamic_sizes = parser.resolve_operands(sizes, [IndexType()] * len(sizes), pos)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls(dynamic_sizes, parser.parse_attribute())
        op.attributes.update(attributes)
        return op


def _verify_pad(op: tensor.PadOp) -> None:
    """Each static result dimension is the source's plus its static low and high padding (upstream's
    "does not match the inferred type"), after xDSL's own checks of the op."""
    tensor.PadOp.verify_(op)
    source, result = op.source.type, op.result.type
    if not isinstance(source, TensorType) or not isinstance(result, TensorType):
        return
    low, high = op.static_low.get_values(), op.static_high.get_values()
    if not len(low) == len(high) == source.get_num_dims() == result.get_num_dims():
        raise VerifyException("low and high padding need one entry per dimension of the source "
                              "and the result")
    for axis, (n, lo, hi, got) in enumerate(zip(source.get_shape(), low, high, result.get_shape())):
        if DYNAMIC_INDEX not in (lo, hi) and n >= 0 and got >= 0 and n + lo + hi != got:
            raise VerifyException(f"result dimension {axis} is {got}, but the source's {n} padded by "
                                  f"{lo} and {hi} is {n + lo + hi}")


PadOp = redefined(tensor.PadOp, "`tensor.pad`, verified as upstream MLIR does (see the module docstring).",
                  verify=_verify_pad)

REPLACED = {tensor.EmptyOp: EmptyOp, tensor.PadOp: PadOp}
TENSOR = Dialect("tensor", [REPLACED.get(op, op) for op in tensor.Tensor.operations], list(tensor.Tensor.attributes))
