"""`convert-nn-to-linalg`: every nn op becomes linalg on tensors (plus arith/math/tensor).

Elementwise ops, broadcasts, bias_add, batch_norm, dense, softmax and the reductions are
`linalg.generic`s (broadcast operands index size-1 axes with the constant 0); transpose and
layout_transform are `linalg.transpose`; reshapes are `tensor.collapse_shape` /
`tensor.expand_shape`; constants are `arith.constant dense<...>`; windowed ops are in
`nn_windows`. Every result keeps its type, so `func.func` signatures do not change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, TensorType, i64
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from xrelay.instrument.xdsl_pass import rewrite_module
from xrelay.transform import XRelayPass, register_xrelay_pass
from xrelay.lowering.builders import PARALLEL, REDUCTION, Emitter, affine_map, dims, is_float, lowest
from xrelay.lowering.to_linalg.window import (
    lower_avg_pool2d,
    lower_conv2d,
    lower_global_avg_pool2d,
    lower_max_pool2d,
)
from xrelay.runtime.layout import layout_permutation


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def _element(op: Operation):
    return op.results[0].type.get_element_type()


def _axis(axis: int, rank: int, what: str) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"{what}: axis {axis} out of range for rank {rank}")
    return axis % rank


def broadcast_map(operand_shape: tuple[int, ...], out_shape: tuple[int, ...]):
    """Numpy broadcasting as an indexing map: trailing-aligned, size-1 axes read index 0."""
    rank = len(out_shape)
    loops = dims(rank)
    offset = rank - len(operand_shape)
    results = [0 if size == 1 and out_shape[offset + i] != 1 else loops[offset + i]
               for i, size in enumerate(operand_shape)]
    return affine_map(rank, results)


def _map_elementwise(e: Emitter, op: Operation, body: Callable) -> list[SSAValue]:
    out_shape = _shape(op.results[0])
    rank = len(out_shape)
    maps = [broadcast_map(_shape(v), out_shape) for v in op.operands] + [affine_map(rank, dims(rank))]
    init = e.empty(out_shape, _element(op))
    return [e.generic(list(op.operands), init, maps, [PARALLEL] * rank, body)]


def _binary(kind: str):
    def lower(op: Operation, e: Emitter) -> list[SSAValue]:
        return _map_elementwise(e, op, lambda b, args: b.binary(kind, args[0], args[1]))

    lower.__doc__ = f"nn binary op → broadcasting linalg.generic with `{kind}`."
    return lower


def lower_relu(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.relu → generic `max(x, 0)`."""
    return _map_elementwise(e, op, lambda b, args: b.binary("max", args[0], b.scalar(0, args[0].type)))


def lower_sqrt(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.sqrt → generic `math.sqrt`."""
    return _map_elementwise(e, op, lambda b, args: b.sqrt(args[0]))


def lower_negative(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.negative → generic `arith.negf`."""
    return _map_elementwise(e, op, lambda b, args: b.negate(args[0]))


def _along_axis(e: Emitter, op: Operation, per_channel: list[SSAValue], axis: int, body: Callable) -> SSAValue:
    """A generic over the data's axes with 1-D operands read along `axis`."""
    data = op.operands[0]
    shape = _shape(data)
    rank = len(shape)
    loops = dims(rank)
    maps = [affine_map(rank, loops)] + [affine_map(rank, [loops[axis]]) for _ in per_channel]
    maps.append(affine_map(rank, loops))
    return e.generic([data, *per_channel], e.empty(shape, _element(op)), maps, [PARALLEL] * rank, body)


def lower_bias_add(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.bias_add → generic `x + bias[axis]`."""
    axis = _axis(int(op.attrs()["axis"]), len(_shape(op.operands[0])), "nn.bias_add")
    return [_along_axis(e, op, [op.operands[1]], axis, lambda b, args: b.binary("add", args[0], args[1]))]


def lower_batch_norm(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.batch_norm → one generic `(x - mean) / sqrt(var + eps) * gamma + beta`; results 2, 3 are mean, var."""
    attrs = op.attrs()
    data, gamma, beta, mean, var = op.operands
    element_type = _element(op)
    if not is_float(element_type):
        raise NotImplementedError(f"nn.batch_norm: only float element types lower to linalg, got {element_type}")
    axis = _axis(int(attrs["axis"]), len(_shape(data)), "nn.batch_norm")
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

    return [_along_axis(e, op, per_channel, axis, body), mean, var]


def lower_dense(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.dense → contraction generic `acc + x[.., k] * w[n, k]` from a zero init."""
    data, weight = op.operands
    out_shape = _shape(op.results[0])
    batch = len(out_shape) - 1
    n = batch + 2  # loops: batch..., units, k
    loops = dims(n)
    maps = [affine_map(n, loops[:batch] + [loops[batch + 1]]), affine_map(n, [loops[batch], loops[batch + 1]]),
            affine_map(n, loops[:batch + 1])]
    return [e.generic([data, weight], e.filled(0, out_shape, _element(op)), maps, [PARALLEL] * (batch + 1) + [REDUCTION],
                      lambda b, args: b.binary("add", args[2], b.binary("mul", args[0], args[1])))]


def lower_softmax(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.softmax → max-reduce, `exp(x - max)`, sum-reduce, divide (four generics)."""
    (data,) = op.operands
    shape = _shape(data)
    rank = len(shape)
    element_type = _element(op)
    axis = _axis(int(op.attrs()["axis"]), rank, "nn.softmax")
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


def _transpose(e: Emitter, op: Operation, permutation: tuple[int, ...]) -> list[SSAValue]:
    (data,) = op.operands
    if permutation == tuple(range(len(permutation))):
        return [data]
    out_shape = _shape(op.results[0])
    init = e.empty(out_shape, _element(op))
    return [e.add(linalg.TransposeOp(data, init, DenseArrayBase.from_list(i64, permutation), op.results[0].type))]


def lower_transpose(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.transpose → linalg.transpose (axes None reverses)."""
    rank = len(_shape(op.operands[0]))
    axes = op.attrs()["axes"]
    perm = tuple(reversed(range(rank))) if axes is None else tuple(_axis(int(a), rank, "nn.transpose") for a in axes)
    return _transpose(e, op, perm)


def lower_layout_transform(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.layout_transform → linalg.transpose with the layouts' permutation."""
    attrs = op.attrs()
    return _transpose(e, op, layout_permutation(attrs["src_layout"], attrs["dst_layout"]))


def lower_reshape_like(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.reshape / batch_flatten / expand_dims → tensor.collapse_shape + tensor.expand_shape."""
    return [e.reshape(op.operands[0], _shape(op.results[0]))]


def lower_constant(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.constant → arith.constant with the same dense attribute."""
    value = op.attributes["value"]
    return [e.add(arith.ConstantOp(value, op.results[0].type))]


LOWERINGS: dict[str, Callable[[Operation, Emitter], list[SSAValue]]] = {
    "nn.conv2d": lower_conv2d,
    "nn.batch_norm": lower_batch_norm,
    "nn.relu": lower_relu,
    "nn.max_pool2d": lower_max_pool2d,
    "nn.avg_pool2d": lower_avg_pool2d,
    "nn.global_avg_pool2d": lower_global_avg_pool2d,
    "nn.batch_flatten": lower_reshape_like,
    "nn.dense": lower_dense,
    "nn.bias_add": lower_bias_add,
    "nn.softmax": lower_softmax,
    "nn.add": _binary("add"),
    "nn.subtract": _binary("sub"),
    "nn.multiply": _binary("mul"),
    "nn.divide": _binary("div"),
    "nn.sqrt": lower_sqrt,
    "nn.negative": lower_negative,
    "nn.expand_dims": lower_reshape_like,
    "nn.reshape": lower_reshape_like,
    "nn.transpose": lower_transpose,
    "nn.layout_transform": lower_layout_transform,
    "nn.constant": lower_constant,
}
"""nn op name → function emitting its linalg form and returning the replacement values."""


class LowerNNOp(RewritePattern):
    """Replace one nn op by the ops its entry in LOWERINGS emits."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        lower = LOWERINGS.get(op.name)
        if lower is None:
            if op.name.startswith("nn."):
                raise NotImplementedError(f"convert-nn-to-linalg: no lowering for {op.name}")
            return
        emitter = Emitter()
        try:
            values = lower(op, emitter)
        except ValueError as err:
            raise ValueError(f"convert-nn-to-linalg: cannot lower {op.name}: {err}") from None
        rewriter.replace(op, emitter.ops, values)


@register_xrelay_pass
@dataclass(frozen=True)
class ConvertNNToLinalg(XRelayPass):
    """Lower every nn op to linalg on tensors (see the module docstring)."""

    name = "convert-nn-to-linalg"
    tvm_name = "ConvertNNToLinalg"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_module(LowerNNOp(), op, apply_recursively=False)
