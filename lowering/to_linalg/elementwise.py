"""Lowerings of the elementwise ops (dialects/ops/elementwise.py): broadcasting `linalg.generic`s."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from xrelay.dialects import nn
from xrelay.lowering.builders import Emitter
from xrelay.lowering.to_linalg.base import lowers, map_elementwise


def _binary(kind: str):
    def lower(op: Operation, e: Emitter) -> list[SSAValue]:
        return map_elementwise(e, op, lambda b, args: b.binary(kind, args[0], args[1]))

    lower.__doc__ = f"nn binary op → broadcasting linalg.generic with `{kind}`."
    return lower


for _op, _kind in ((nn.AddOp, "add"), (nn.SubtractOp, "sub"), (nn.MultiplyOp, "mul"), (nn.DivideOp, "div")):
    lowers(_op)(_binary(_kind))


@lowers(nn.ReluOp)
def lower_relu(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.relu → generic `max(x, 0)`."""
    return map_elementwise(e, op, lambda b, args: b.binary("max", args[0], b.scalar(0, args[0].type)))


@lowers(nn.SqrtOp)
def lower_sqrt(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.sqrt → generic `math.sqrt`."""
    return map_elementwise(e, op, lambda b, args: b.sqrt(args[0]))


@lowers(nn.NegativeOp)
def lower_negative(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.negative → generic `arith.negf`."""
    return map_elementwise(e, op, lambda b, args: b.negate(args[0]))


@lowers(nn.SigmoidOp)
def lower_sigmoid(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.sigmoid → generic `1 / (1 + exp(-x))`."""

    def body(b, args):
        one = b.scalar(1, args[0].type)
        return b.binary("div", one, b.binary("add", one, b.exp(b.negate(args[0]))))

    return map_elementwise(e, op, body)
