"""Lowerings of the normalisation ops (dialects/ops/norm.py)."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from xrelay.dialects import nn
from xrelay.dialects.infer import normalize_axis
from xrelay.dialects.ops.norm import lrn_window
from xrelay.lowering.builders import PARALLEL, REDUCTION, Emitter, affine_map, dims, is_float, lowest
from xrelay.lowering.to_linalg.base import element_of, lowers, shape_of
from xrelay.lowering.to_linalg.linear import along_axis


def _gamma_beta(attrs: dict, gamma: SSAValue, beta: SSAValue) -> list[SSAValue]:
    """The per-channel operands a normalisation reads after its statistics: gamma if `scale`, beta if `center`."""
    return ([gamma] if attrs["scale"] else []) + ([beta] if attrs["center"] else [])


def _normalised(b, centred, variance, attrs: dict, gamma_beta) -> SSAValue:
    """`centred / sqrt(variance + epsilon)`, times gamma and plus beta when the op has them
    (`gamma_beta`: their block arguments, in `_gamma_beta`'s order)."""
    epsilon = b.scalar(attrs["epsilon"], centred.type)
    y = b.binary("div", centred, b.sqrt(b.binary("add", variance, epsilon)))
    rest = list(gamma_beta)
    if attrs["scale"]:
        y = b.binary("mul", y, rest.pop(0))
    if attrs["center"]:
        y = b.binary("add", y, rest.pop(0))
    return y


@lowers(nn.BatchNormOp)
def lower_batch_norm(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.batch_norm → one generic `(x - mean) / sqrt(var + eps) * gamma + beta`; results 2, 3 are mean, var."""
    attrs = op.attrs()
    data, gamma, beta, mean, var = op.operands
    element_type = element_of(op)
    if not is_float(element_type):
        raise NotImplementedError(f"nn.batch_norm: only float element types lower to linalg, got {element_type}")
    axis = normalize_axis(int(attrs["axis"]), len(shape_of(data)), "nn.batch_norm")
    per_channel = [mean, var, *_gamma_beta(attrs, gamma, beta)]

    def body(b, args):
        return _normalised(b, b.binary("sub", args[0], args[1]), args[2], attrs, args[3:-1])

    return [along_axis(e, op, per_channel, axis, body), mean, var]


@lowers(nn.SoftmaxOp)
def lower_softmax(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.softmax → max-reduce, `exp(x - max)`, sum-reduce, divide (four generics)."""
    (data,) = op.operands
    shape = shape_of(data)
    rank = len(shape)
    element_type = element_of(op)
    axis = normalize_axis(int(op.attrs()["axis"]), rank, "nn.softmax")
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


def _along(shape: tuple[int, ...], axis: int):
    """Maps and iterators for statistics along `axis`: the full map, the map dropping `axis`,
    the shape without it and the iterators reducing it."""
    rank = len(shape)
    loops = dims(rank)
    full = affine_map(rank, loops)
    reduced = affine_map(rank, [d for i, d in enumerate(loops) if i != axis])
    reduced_shape = [s for i, s in enumerate(shape) if i != axis]
    iterators = [REDUCTION if i == axis else PARALLEL for i in range(rank)]
    return full, reduced, reduced_shape, iterators


@lowers(nn.LogSoftmaxOp)
def lower_log_softmax(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.log_softmax → max-reduce, sum-reduce of `exp(x - max)`, `x - max - log(sum)` (three generics)."""
    (data,) = op.operands
    shape = shape_of(data)
    element_type = element_of(op)
    axis = normalize_axis(int(op.attrs()["axis"]), len(shape), "nn.log_softmax")
    full, reduced, reduced_shape, iterators = _along(shape, axis)
    peak = e.generic([data], e.filled(lowest(element_type), reduced_shape, element_type), [full, reduced], iterators,
                     lambda b, args: b.binary("max", args[0], args[1]))
    total = e.generic([data, peak], e.filled(0, reduced_shape, element_type), [full, reduced, reduced], iterators,
                      lambda b, args: b.binary("add", args[2], b.exp(b.binary("sub", args[0], args[1]))))
    return [e.generic([data, peak, total], e.empty(shape, element_type), [full, reduced, reduced, full],
                      [PARALLEL] * len(shape),
                      lambda b, args: b.binary("sub", b.binary("sub", args[0], args[1]), b.unary("log", args[2])))]


@lowers(nn.LayerNormOp)
def lower_layer_norm(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.layer_norm → sum-reduce; `mean = sum/n`; sum-reduce of squared deviations `(x - mean)^2`;
    `sqrt(sq/n + eps)`; then `(x - mean) / that * gamma + beta` with gamma/beta read along `axis`. The
    statistics are generics of their own over the reduced shape, so the last generic is a chain of one
    op per step over its operands (a kernel's elementwise chain), each statistic computed once per row."""
    attrs = op.attrs()
    data, gamma, beta = op.operands
    shape = shape_of(data)
    element_type = element_of(op)
    axis = normalize_axis(int(attrs["axis"]), len(shape), "nn.layer_norm")
    full, reduced, reduced_shape, iterators = _along(shape, axis)
    count = shape[axis]
    over_rows = affine_map(len(reduced_shape), dims(len(reduced_shape)))

    def per_row(value: SSAValue, body) -> SSAValue:
        return e.generic([value], e.empty(reduced_shape, element_type), [over_rows, over_rows],
                         [PARALLEL] * len(reduced_shape), body)

    def add_square(b, args):
        deviation = b.binary("sub", args[0], args[1])
        return b.binary("add", args[2], b.binary("mul", deviation, deviation))

    total = e.generic([data], e.filled(0, reduced_shape, element_type), [full, reduced], iterators,
                      lambda b, args: b.binary("add", args[0], args[1]))
    mean = per_row(total, lambda b, args: b.binary("div", args[0], b.scalar(count, args[0].type)))
    squares = e.generic([data, mean], e.filled(0, reduced_shape, element_type), [full, reduced, reduced], iterators,
                        add_square)
    epsilon = attrs["epsilon"]
    deviation = per_row(squares, lambda b, args: b.sqrt(b.binary("add", b.binary("div", args[0], b.scalar(
        count, args[0].type)), b.scalar(epsilon, args[0].type))))
    per_channel = _gamma_beta(attrs, gamma, beta)

    def normalise(b, args):
        y = b.binary("div", b.binary("sub", args[0], args[1]), args[2])
        rest = list(args[3:-1])
        if attrs["scale"]:
            y = b.binary("mul", y, rest.pop(0))
        if attrs["center"]:
            y = b.binary("add", y, rest.pop(0))
        return y

    channel = affine_map(len(shape), [dims(len(shape))[axis]])
    return [e.generic([data, mean, deviation, *per_channel], e.empty(shape, element_type),
                      [full, reduced, reduced] + [channel] * len(per_channel) + [full], [PARALLEL] * len(shape),
                      normalise)]


@lowers(nn.LRNOp)
def lower_lrn(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.lrn → `tensor.pad` with zeros along `axis`, a window-sum generic of `x * x` (loops: data axes + window),
    then `x / powf(bias + alpha / size * sum, beta)`."""
    attrs = op.attrs()
    (data,) = op.operands
    shape = shape_of(data)
    rank = len(shape)
    element_type = element_of(op)
    axis = normalize_axis(int(attrs["axis"]), rank, "nn.lrn")
    size = int(attrs["size"])
    low, high = [0] * rank, [0] * rank
    low[axis], high[axis] = lrn_window(size)
    padded = e.pad(data, low, high, 0)
    loops = dims(rank + 1)
    window = loops[rank]
    read = affine_map(rank + 1, [d + window if i == axis else d for i, d in enumerate(loops[:rank])])
    sums = e.generic([padded, e.empty([size], element_type)], e.filled(0, shape, element_type),
                     [read, affine_map(rank + 1, [window]), affine_map(rank + 1, loops[:rank])],
                     [PARALLEL] * rank + [REDUCTION],
                     lambda b, args: b.binary("add", args[2], b.binary("mul", args[0], args[0])))

    def normalise(b, args):
        x, total = args[0], args[1]
        scaled = b.binary("add", b.scalar(attrs["bias"], x.type),
                          b.binary("mul", b.scalar(attrs["alpha"] / size, x.type), total))
        return b.binary("div", x, b.binary("pow", scaled, b.scalar(attrs["beta"], x.type)))

    full = affine_map(rank, dims(rank))
    return [e.generic([data, sums], e.empty(shape, element_type), [full, full, full], [PARALLEL] * rank, normalise)]
