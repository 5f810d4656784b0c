"""Lowerings of the elementwise ops (dialects/ops/elementwise.py): broadcasting `linalg.generic`s."""

from __future__ import annotations

import math

from xdsl.ir import Operation, SSAValue

from xrelay.dialects import nn
from xrelay.dialects.infer import normalize_axis
from xrelay.dialects.ops.elementwise import integer_clip_bounds
from xrelay.lowering.builders import Emitter, is_float
from xrelay.lowering.to_linalg.base import element_of, lowers, map_elementwise, shape_of
from xrelay.lowering.to_linalg.linear import along_axis


def _binary(kind: str):
    def lower(op: Operation, e: Emitter) -> list[SSAValue]:
        return map_elementwise(e, op, lambda b, args: b.binary(kind, args[0], args[1]))

    lower.__doc__ = f"nn binary op → broadcasting linalg.generic with `{kind}`."
    return lower


for _op, _kind in ((nn.AddOp, "add"), (nn.SubtractOp, "sub"), (nn.MultiplyOp, "mul"), (nn.DivideOp, "div"),
                   (nn.MaximumOp, "max"), (nn.MinimumOp, "min")):
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


def _unary(kind: str):
    def lower(op: Operation, e: Emitter) -> list[SSAValue]:
        return map_elementwise(e, op, lambda b, args: b.unary(kind, args[0]))

    lower.__doc__ = f"nn unary op → linalg.generic with `math.{kind}` (`math.absi` for integer abs)."
    return lower


for _op, _kind in ((nn.TanhOp, "tanh"), (nn.ErfOp, "erf"), (nn.ExpOp, "exp"), (nn.LogOp, "log"), (nn.AbsOp, "abs")):
    lowers(_op)(_unary(_kind))


@lowers(nn.ClipOp)
def lower_clip(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.clip → generic `min(max(x, a_min), a_max)` (integer bounds as the kernel's)."""
    attrs = op.attrs()
    element_type = element_of(op)
    a_min, a_max = attrs["a_min"], attrs["a_max"]
    if not is_float(element_type):
        a_min, a_max = integer_clip_bounds(a_min, a_max, element_type.width.data)

    def body(b, args):
        x = args[0]
        return b.binary("min", b.binary("max", x, b.scalar(a_min, x.type)), b.scalar(a_max, x.type))

    return map_elementwise(e, op, body)


@lowers(nn.LeakyReluOp)
def lower_leaky_relu(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.leaky_relu → generic `x > 0 ? x : alpha * x` (cmpf + select)."""
    alpha = op.attrs()["alpha"]
    return map_elementwise(
        e, op, lambda b, args: b.where_positive(args[0], b.binary("mul", args[0], b.scalar(alpha, args[0].type)))
    )


@lowers(nn.PReluOp)
def lower_prelu(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.prelu → generic `x > 0 ? x : alpha[axis] * x`."""
    axis = normalize_axis(int(op.attrs()["axis"]), len(shape_of(op.operands[0])), "nn.prelu")
    return [along_axis(e, op, [op.operands[1]], axis,
                       lambda b, args: b.where_positive(args[0], b.binary("mul", args[0], args[1])))]


def _signed_pow(b, base: SSAValue, exponent: SSAValue) -> SSAValue:
    """C's pow from `math.powf` of |base|: compilers may expand `math.powf` as exp(y * log(x)) (IREE
    does), which is NaN for every negative base, while `x ** 2` of a negative x is common (variances).
    A negative base (or -0.0) takes the sign for an odd integer exponent and gives NaN for a
    fractional one."""
    magnitude = b.binary("pow", b.unary("abs", base), exponent)
    integral = b.compare("oeq", b.unary("floor", exponent), exponent)
    half = b.binary("mul", exponent, b.scalar(0.5, exponent.type))
    odd = b.compare("one", b.unary("floor", half), half)
    on_negative = b.select(integral, b.select(odd, b.negate(magnitude), magnitude), b.scalar(math.nan, base.type))
    negative = b.compare("olt", b.binary("copysign", b.scalar(1, base.type), base), b.scalar(0, base.type))
    return b.select(negative, on_negative, magnitude)


@lowers(nn.PowerOp)
def lower_power(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.power → broadcasting generic: `math.powf(|x|, y)` with the sign and NaN of a negative base
    made explicit (see `_signed_pow`)."""
    return map_elementwise(e, op, lambda b, args: _signed_pow(b, args[0], args[1]))


def _comparison(kind: str):
    def lower(op: Operation, e: Emitter) -> list[SSAValue]:
        return map_elementwise(
            e, op, lambda b, args: b.as_integer(b.compare_values(kind, args[0], args[1]), element_of(op)))

    lower.__doc__ = f"nn comparison → broadcasting linalg.generic: `cmpf`/`cmpi {kind}`, extended to 0/1."
    return lower


for _op, _kind in ((nn.EqualOp, "eq"), (nn.LessOp, "lt"), (nn.LessEqualOp, "le"), (nn.GreaterOp, "gt"),
                   (nn.GreaterEqualOp, "ge")):
    lowers(_op)(_comparison(_kind))


def _logical(kind: str):
    def lower(op: Operation, e: Emitter) -> list[SSAValue]:
        return map_elementwise(e, op, lambda b, args: b.as_integer(
            b.logical(kind, b.truth(args[0]), b.truth(args[1])), element_of(op)))

    lower.__doc__ = f"nn.logical_{kind} → broadcasting linalg.generic: `{kind}i` of `x != 0`, extended to 0/1."
    return lower


for _op, _kind in ((nn.LogicalAndOp, "and"), (nn.LogicalOrOp, "or"), (nn.LogicalXorOp, "xor")):
    lowers(_op)(_logical(_kind))


@lowers(nn.LogicalNotOp)
def lower_logical_not(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.logical_not → generic `x == 0` extended to 0/1."""
    return map_elementwise(e, op, lambda b, args: b.as_integer(
        b.compare_values("eq", args[0], b.scalar(0, args[0].type)), element_of(op)))


@lowers(nn.WhereOp)
def lower_where(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.where → broadcasting generic `select(condition != 0, x, y)`."""
    return map_elementwise(e, op, lambda b, args: b.select(b.truth(args[0]), args[1], args[2]))
