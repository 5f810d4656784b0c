"""Lowerings of the reductions (dialects/ops/reduce.py): a reduction `linalg.generic` into the
kept axes (from a filled init: 0 for sum and mean, the lowest value for max), mean's division by
the count in an elementwise generic, and `tensor.expand_shape` back to the keepdims shape."""

from __future__ import annotations

import math

from xdsl.dialects import tensor
from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import Operation, SSAValue

from xrelay.dialects import nn
from xrelay.dialects.ops.reduce import reduced_axes
from xrelay.lowering.builders import PARALLEL, REDUCTION, Emitter, affine_map, dims, is_float, lowest, reassociation
from xrelay.lowering.to_linalg.base import element_of, lowers, shape_of


def _keep_dims(e: Emitter, value: SSAValue, out_shape: tuple[int, ...], kept: list[int]) -> SSAValue:
    """`value` (the `kept` axes of `out_shape`) with the reduced axes back as size-1 axes."""
    element_type = value.type.get_element_type()
    rank = len(out_shape)
    if not kept:
        # xDSL's tensor.expand_shape refuses a rank-0 source: copy the one element instead.
        return e.generic([value], e.empty(out_shape, element_type), [affine_map(rank, []), affine_map(rank, dims(rank))],
                         [PARALLEL] * rank, lambda b, args: args[0])
    # Each kept axis takes the size-1 axes before it; the last one also those after it.
    groups: list[list[int]] = [[] for _ in kept]
    group = 0
    for axis in range(rank):
        groups[group].append(axis)
        if axis == kept[group] and group + 1 < len(kept):
            group += 1
    return e.add(tensor.ExpandShapeOp(value, [], reassociation(groups), list(out_shape),
                                      TensorType(element_type, out_shape)))


def _reduction(combine: str, mean: bool = False):
    def lower(op: Operation, e: Emitter) -> list[SSAValue]:
        (data,) = op.operands
        shape = shape_of(data)
        rank = len(shape)
        element_type = element_of(op)
        axes = reduced_axes(shape, op.attrs())
        if not axes:
            return [data]  # exclude listing every axis: nothing to fold
        kept = [i for i in range(rank) if i not in axes]
        kept_shape = [shape[i] for i in kept]
        loops = dims(rank)
        start = lowest(element_type) if combine == "max" else 0
        iterators = [REDUCTION if i in axes else PARALLEL for i in range(rank)]
        maps = [affine_map(rank, loops), affine_map(rank, [loops[i] for i in kept])]
        value = e.generic([data], e.filled(start, kept_shape, element_type), maps, iterators,
                          lambda b, args: b.binary(combine, args[0], args[1]))
        if mean:
            count = math.prod(shape[i] for i in axes)
            identity = affine_map(len(kept), dims(len(kept)))
            value = e.generic([value], e.empty(kept_shape, element_type), [identity, identity], [PARALLEL] * len(kept),
                              lambda b, args: b.binary("div", args[0], b.scalar(count, args[0].type)))
        out_shape = shape_of(op.results[0])
        return [value if list(out_shape) == kept_shape else _keep_dims(e, value, out_shape, kept)]

    lower.__doc__ = f"nn reduction → reduction linalg.generic with `{combine}`" + (", then / count." if mean else ".")
    return lower


def _arg_reduction(combine: str):
    def lower(op: Operation, e: Emitter) -> list[SSAValue]:
        (data,) = op.operands
        shape = shape_of(data)
        rank = len(shape)
        element_type = data.type.get_element_type()
        attrs = op.attrs()
        (axis,) = reduced_axes(shape, attrs)
        kept = [i for i in range(rank) if i != axis]
        kept_shape = [shape[i] for i in kept]
        loops = dims(rank)
        iterators = [REDUCTION if i == axis else PARALLEL for i in range(rank)]
        to_kept = affine_map(rank, [loops[i] for i in kept])
        start = lowest(element_type) if combine == "max" else -lowest(element_type) if is_float(element_type) \
            else (1 << (element_type.width.data - 1)) - 1
        extreme = e.generic([data], e.filled(start, kept_shape, element_type), [affine_map(rank, loops), to_kept],
                            iterators, lambda b, args: b.binary(combine, args[0], args[1]))
        # The position: the first (last) where the element is the extreme, or is NaN (the extreme is
        # then NaN: numpy's argmax and argmin give the first NaN).
        last = bool(attrs["select_last_index"])
        none = -1 if last else shape[axis]

        def position(b, args):
            x, best, acc = args
            hit = b.compare_values("eq", x, best)
            if is_float(x.type):
                hit = b.logical("or", hit, b.compare("une", x, x))  # x is NaN
            here = b.add_index_cast(b.loop_index(axis), acc.type)
            return b.binary("max" if last else "min", acc, b.select(hit, here, b.scalar(none, acc.type)))

        index = e.generic([data, extreme], e.filled(none, kept_shape, element_of(op)),
                          [affine_map(rank, loops), to_kept, to_kept], iterators, position)
        out_shape = shape_of(op.results[0])
        return [index if list(out_shape) == kept_shape else _keep_dims(e, index, out_shape, kept)]

    lower.__doc__ = (f"nn.arg{combine} → a reduction generic for the {combine}imum, then one for the first (last) "
                     "position holding it (`linalg.index`).")
    return lower


lowers(nn.ArgMaxOp)(_arg_reduction("max"))
lowers(nn.ArgMinOp)(_arg_reduction("min"))
@lowers(nn.CumSumOp)
def lower_cumsum(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.cumsum → one generic over the result's loops and a reduction loop k along the axis:
    element i adds `x[k]` where k <= i (k < i exclusive; k >= i, k > i reversed)."""
    (data,) = op.operands
    shape = shape_of(data)
    rank = len(shape)
    attrs = op.attrs()
    axis = attrs["axis"] % rank
    loops = dims(rank + 1)
    source = affine_map(rank + 1, [loops[rank] if i == axis else loops[i] for i in range(rank)])
    kind = {(False, False): "le", (True, False): "lt", (False, True): "ge", (True, True): "gt"}[
        (bool(attrs["exclusive"]), bool(attrs["reverse"]))]

    def body(b, args):
        x, acc = args
        taken = b.compare_values(kind, b.loop_index(rank), b.loop_index(axis))
        return b.binary("add", acc, b.select(taken, x, b.scalar(0, x.type)))

    out = e.generic([data], e.filled(0, shape, element_of(op)), [source, affine_map(rank + 1, loops[:rank])],
                    [PARALLEL] * rank + [REDUCTION], body)
    return [out]


@lowers(nn.TopKOp)
def lower_topk(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.topk → three generics with a loop j along the axis: each element's rank (how many elements
    come before it: larger, or equal at a smaller position), then for each output position r the
    sum over j of the value (and of j) where rank j is r: exactly one j has each rank."""
    (data,) = op.operands
    shape = shape_of(data)
    rank = len(shape)
    attrs = op.attrs()
    axis, ascend = attrs["axis"] % rank, bool(attrs["is_ascend"])
    loops = dims(rank + 1)
    here = affine_map(rank + 1, loops[:rank])
    along_j = affine_map(rank + 1, [loops[rank] if i == axis else loops[i] for i in range(rank)])
    iterators = [PARALLEL] * rank + [REDUCTION]

    def count_before(b, args):
        x_i, x_j, acc = args
        ahead = b.compare_values("lt" if ascend else "gt", x_j, x_i)
        tie = b.logical("and", b.compare_values("eq", x_j, x_i),
                        b.compare_values("lt", b.loop_index(rank), b.loop_index(axis)))
        one = b.select(b.logical("or", ahead, tie), b.scalar(1, i64), b.scalar(0, i64))
        return b.binary("add", acc, one)

    ranks = e.generic([data, data], e.filled(0, shape, i64), [here, along_j, here], iterators, count_before)
    out_shape = shape_of(op.results[0])

    def picked(take_position: bool):
        def body(b, args):
            rank_j, x_j, acc = args
            hit = b.compare_values("eq", rank_j, b.add_index_cast(b.loop_index(axis), i64))
            value = b.add_index_cast(b.loop_index(rank), i64) if take_position else x_j
            return b.binary("add", acc, b.select(hit, value, b.scalar(0, value.type)))

        return body

    values = e.generic([ranks, data], e.filled(0, out_shape, element_of(op)), [along_j, along_j, here], iterators,
                       picked(False))
    indices = e.generic([ranks, data], e.filled(0, out_shape, i64), [along_j, along_j, here], iterators, picked(True))
    return [values, indices]


lowers(nn.SumOp)(_reduction("add"))
lowers(nn.MeanOp)(_reduction("add", mean=True))
lowers(nn.MaxOp)(_reduction("max"))
