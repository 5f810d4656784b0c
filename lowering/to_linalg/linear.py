"""Lowerings of the linear-algebra ops (dialects/ops/linear.py)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr
from xdsl.ir import Operation, SSAValue

from xrelay.dialects import nn
from xrelay.dialects.infer import normalize_axis
from xrelay.dialects.upstream_contractions import BatchMatmulOp, MatmulOp
from xrelay.lowering.builders import PARALLEL, REDUCTION, Emitter, affine_map, dims
from xrelay.lowering.to_linalg.base import element_of, lowers, shape_of


def along_axis(e: Emitter, op: Operation, per_channel: list[SSAValue], axis: int, body: Callable) -> SSAValue:
    """A generic over the data's axes with 1-D operands read along `axis`."""
    data = op.operands[0]
    shape = shape_of(data)
    rank = len(shape)
    loops = dims(rank)
    maps = [affine_map(rank, loops)] + [affine_map(rank, [loops[axis]]) for _ in per_channel]
    maps.append(affine_map(rank, loops))
    return e.generic([data, *per_channel], e.empty(shape, element_of(op)), maps, [PARALLEL] * rank, body)


@lowers(nn.BiasAddOp)
def lower_bias_add(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.bias_add → generic `x + bias[axis]`."""
    axis = normalize_axis(int(op.attrs()["axis"]), len(shape_of(op.operands[0])), "nn.bias_add")
    return [along_axis(e, op, [op.operands[1]], axis, lambda b, args: b.binary("add", args[0], args[1]))]


def contraction_maps(*operands: str) -> ArrayAttr[AffineMapAttr]:
    """Upstream's `indexing_maps` of a contraction whose operands index its loops by letter (the
    output's letters, then "k")."""
    loops = operands[-1] + "k"
    return ArrayAttr([AffineMapAttr(affine_map(len(loops), [dims(len(loops))[loops.index(c)] for c in letters]))
                      for letters in operands])


@lowers(nn.DenseOp)
def lower_dense(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.dense → `linalg.matmul` of x and w transposed (`indexing_maps`) for a 2-D x, else a
    contraction generic `acc + x[.., k] * w[n, k]`; both from a zero init."""
    data, weight = op.operands
    out_shape = shape_of(op.results[0])
    if len(out_shape) == 2:
        init = e.filled(0, out_shape, element_of(op))
        return [e.add(MatmulOp([data, weight], [init], [op.results[0].type],
                               indexing_maps=contraction_maps("mk", "nk", "mn")))]
    batch = len(out_shape) - 1
    n = batch + 2  # loops: batch..., units, k
    loops = dims(n)
    maps = [affine_map(n, loops[:batch] + [loops[batch + 1]]), affine_map(n, [loops[batch], loops[batch + 1]]),
            affine_map(n, loops[:batch + 1])]
    return [e.generic([data, weight], e.filled(0, out_shape, element_of(op)), maps, [PARALLEL] * (batch + 1) + [REDUCTION],
                      lambda b, args: b.binary("add", args[2], b.binary("mul", args[0], args[1])))]


@lowers(nn.BatchMatmulOp)
def lower_batch_matmul(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.batch_matmul → `linalg.batch_matmul` (transposed operands through `indexing_maps`) from a
    zero init; when an operand's batch of 1 broadcasts, a contraction generic over (b, m, n, k)
    reading it at batch index 0."""
    x, y = op.operands
    attrs = op.attrs()
    out_shape = shape_of(op.results[0])
    if shape_of(x)[0] == shape_of(y)[0] == out_shape[0]:
        maps = contraction_maps("bkm" if attrs["transpose_a"] else "bmk", "bnk" if attrs["transpose_b"] else "bkn", "bmn")
        init = e.filled(0, out_shape, element_of(op))
        return [e.add(BatchMatmulOp([x, y], [init], [op.results[0].type], indexing_maps=maps))]
    b, m, n, k = dims(4)
    bx = 0 if shape_of(x)[0] != out_shape[0] else b
    by = 0 if shape_of(y)[0] != out_shape[0] else b
    maps = [affine_map(4, [bx, k, m] if attrs["transpose_a"] else [bx, m, k]),
            affine_map(4, [by, n, k] if attrs["transpose_b"] else [by, k, n]), affine_map(4, [b, m, n])]
    return [e.generic([x, y], e.filled(0, out_shape, element_of(op)), maps, [PARALLEL] * 3 + [REDUCTION],
                      lambda body, args: body.binary("add", args[2], body.binary("mul", args[0], args[1])))]
