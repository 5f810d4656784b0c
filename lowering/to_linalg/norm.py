"""Lowerings of the normalisation ops (dialects/ops/norm.py)."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from xrelay.dialects import nn
from xrelay.lowering.builders import PARALLEL, REDUCTION, Emitter, affine_map, dims, is_float, lowest
from xrelay.lowering.to_linalg.base import check_axis, element_of, lowers, shape_of
from xrelay.lowering.to_linalg.linear import along_axis


@lowers(nn.BatchNormOp)
def lower_batch_norm(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.batch_norm → one generic `(x - mean) / sqrt(var + eps) * gamma + beta`; results 2, 3 are mean, var."""
    attrs = op.attrs()
    data, gamma, beta, mean, var = op.operands
    element_type = element_of(op)
    if not is_float(element_type):
        raise NotImplementedError(f"nn.batch_norm: only float element types lower to linalg, got {element_type}")
    axis = check_axis(int(attrs["axis"]), len(shape_of(data)), "nn.batch_norm")
    scale, center = bool(attrs["scale"]), bool(attrs["center"])
    per_channel = [mean, var] + ([gamma] if scale else []) + ([beta] if center else [])

    def body(b, args):
        x, m, v = args[0], args[1], args[2]
        y = b.binary("div", b.binary("sub", x, m), b.sqrt(b.binary("add", v, b.scalar(attrs["epsilon"], x.type))))
        rest = list(args[3:-1])
        if scale:
            y = b.binary("mul", y, rest.pop(0))
        if center:
            y = b.binary("add", y, rest.pop(0))
        return y

    return [along_axis(e, op, per_channel, axis, body), mean, var]


@lowers(nn.SoftmaxOp)
def lower_softmax(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.softmax → max-reduce, `exp(x - max)`, sum-reduce, divide (four generics)."""
    (data,) = op.operands
    shape = shape_of(data)
    rank = len(shape)
    element_type = element_of(op)
    axis = check_axis(int(op.attrs()["axis"]), rank, "nn.softmax")
    loops = dims(rank)
    full = affine_map(rank, loops)
    reduced = affine_map(rank, [d for i, d in enumerate(loops) if i != axis])
    reduced_shape = [s for i, s in enumerate(shape) if i != axis]
    reduce_iters = [REDUCTION if i == axis else PARALLEL for i in range(rank)]
    peak = e.generic([data], e.filled(lowest(element_type), reduced_shape, element_type), [full, reduced],
                     reduce_iters, lambda b, args: b.binary("max", args[0], args[1]))
    exps = e.generic([data, peak], e.empty(shape, element_type), [full, reduced, full], [PARALLEL] * rank,
                     lambda b, args: b.exp(b.binary("sub", args[0], args[1])))
    total = e.generic([exps], e.filled(0, reduced_shape, element_type), [full, reduced], reduce_iters,
                      lambda b, args: b.binary("add", args[0], args[1]))
    return [e.generic([exps, total], e.empty(shape, element_type), [full, reduced, full], [PARALLEL] * rank,
                      lambda b, args: b.binary("div", args[0], args[1]))]
