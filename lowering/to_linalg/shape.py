"""Lowerings of the shape and data-movement ops (dialects/ops/shape.py), in the forms upstream MLIR's
frontends (TOSA, torch-mlir) write: `linalg.transpose`; `tensor.collapse_shape` / `expand_shape`;
`tensor.insert_slice` / `extract_slice` for concatenate, split and slices; `tensor.pad` for constant
padding; gathers (take, negative-stride slices, reflect/edge padding) as a `linalg.generic` whose body
computes the source index from `linalg.index` and reads it with `tensor.extract`."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DenseArrayBase, DenseIntOrFPElementsAttr, IntegerType, TensorType, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineMap

from xrelay.dialects import nn
from xrelay.dialects.constant import attr_numpy
from xrelay.dialects.infer import normalize_axis
from xrelay.dialects.layout import layout_permutation
from xrelay.dialects.ops.shape import pad_pairs, slice_ranges, split_bounds, squeeze_axes
from xrelay.lowering.builders import PARALLEL, REDUCTION, BodyBuilder, Emitter, affine_map, dims, reassociation
from xrelay.lowering.to_linalg.base import broadcast_map, element_of, lowers, shape_of


def _transpose(e: Emitter, op: Operation, permutation: tuple[int, ...]) -> list[SSAValue]:
    (data,) = op.operands
    if permutation == tuple(range(len(permutation))):
        return [data]
    out_shape = shape_of(op.results[0])
    init = e.empty(out_shape, element_of(op))
    return [e.add(linalg.TransposeOp(data, init, DenseArrayBase.from_list(i64, permutation), op.results[0].type))]


@lowers(nn.TransposeOp)
def lower_transpose(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.transpose → linalg.transpose (axes None reverses)."""
    rank = len(shape_of(op.operands[0]))
    axes = op.attrs()["axes"]
    perm = tuple(reversed(range(rank))) if axes is None else tuple(normalize_axis(int(a), rank, "nn.transpose") for a in axes)
    return _transpose(e, op, perm)


@lowers(nn.LayoutTransformOp)
def lower_layout_transform(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.layout_transform → linalg.transpose with the layouts' permutation."""
    attrs = op.attrs()
    return _transpose(e, op, layout_permutation(attrs["src_layout"], attrs["dst_layout"]))


@lowers(nn.ReshapeOp, nn.BatchFlattenOp, nn.ExpandDimsOp)
def lower_reshape_like(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.reshape / batch_flatten / expand_dims → tensor.collapse_shape + tensor.expand_shape."""
    return [e.reshape(op.operands[0], shape_of(op.results[0]))]


# --- data movement -------------------------------------------------------------------------


def _gather(e: Emitter, source: SSAValue, inputs: Sequence[SSAValue], input_maps: Sequence[AffineMap],
            out_shape: Sequence[int], where: Callable[[BodyBuilder, Sequence[SSAValue], list[SSAValue]], list[SSAValue]]):
    """A generic over the result's loops reading `source` at `where(b, args, loop_indices)` with
    `tensor.extract` (TOSA's gather and reverse lowerings have this form)."""
    rank = len(out_shape)

    def body(b: BodyBuilder, args: Sequence[SSAValue]) -> SSAValue:
        return b.extract(source, where(b, args, [b.loop_index(i) for i in range(rank)]))

    maps = [*input_maps, affine_map(rank, dims(rank))]
    return e.generic(list(inputs), e.empty(out_shape, source.type.get_element_type()), maps, [PARALLEL] * rank, body)


@lowers(nn.ConcatenateOp)
def lower_concatenate(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.concatenate → `tensor.empty` and one `tensor.insert_slice` per operand at its offset on the axis."""
    out_shape = shape_of(op.results[0])
    axis = normalize_axis(op.attrs()["axis"], len(out_shape), "nn.concatenate")
    result = e.empty(out_shape, element_of(op))
    offset = 0
    for value in op.operands:
        shape = shape_of(value)
        offsets = [offset if i == axis else 0 for i in range(len(shape))]
        result = e.add(tensor.InsertSliceOp.from_static_parameters(value, result, offsets, shape))
        offset += shape[axis]
    return [result]


@lowers(nn.SplitOp)
def lower_split(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.split → one `tensor.extract_slice` per piece."""
    (data,) = op.operands
    shape = shape_of(data)
    axis, bounds = split_bounds(shape, op.attrs())
    pieces = []
    for lo, hi in zip(bounds, bounds[1:]):
        offsets = [lo if i == axis else 0 for i in range(len(shape))]
        sizes = [hi - lo if i == axis else n for i, n in enumerate(shape)]
        pieces.append(e.add(tensor.ExtractSliceOp.from_static_parameters(data, offsets, sizes)))
    return pieces


@lowers(nn.StridedSliceOp)
def lower_strided_slice(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.strided_slice → `tensor.extract_slice`; with a negative stride (extract_slice strides are
    positive) a gather reading `start + i * stride` on each axis."""
    (data,) = op.operands
    ranges = slice_ranges(shape_of(data), op.attrs())
    out_shape = shape_of(op.results[0])
    if all(step > 0 for _, _, step in ranges):
        starts, steps = [r[0] for r in ranges], [r[2] for r in ranges]
        return [e.add(tensor.ExtractSliceOp.from_static_parameters(data, starts, list(out_shape), steps))]

    def where(b: BodyBuilder, args, loop: list[SSAValue]) -> list[SSAValue]:
        return [i if (start, step) == (0, 1) else b.binary("add", b.binary("mul", i, b.index(step)), b.index(start))
                for i, (start, _, step) in zip(loop, ranges)]

    return [_gather(e, data, [], [], out_shape, where)]


def _evenly_spaced(indices: SSAValue, n: int, mode: str) -> tuple[int, int, int] | None:
    """(first, count, step) when `indices` is a constant whose values, clamped (clip) or wrapped
    into [0, n), are first, first + step, ... (step >= 1; one index: step 1); else None."""
    owner = indices.owner
    attr = owner.attributes.get("value") if isinstance(owner, nn.ConstantOp) else \
        owner.value if isinstance(owner, arith.ConstantOp) else None
    if not isinstance(attr, DenseIntOrFPElementsAttr) or not isinstance(attr.get_element_type(), IntegerType):
        return None
    flat = attr_numpy(attr).reshape(-1).astype(np.int64)
    flat = np.clip(flat, 0, n - 1) if mode == "clip" else flat % n if mode == "wrap" else flat
    if flat.size == 0 or flat.min() < 0 or flat.max() >= n:
        return None
    step = int(flat[1] - flat[0]) if flat.size > 1 else 1
    if step < 1 or not np.array_equal(flat, flat[0] + step * np.arange(flat.size)):
        return None
    return int(flat[0]), int(flat.size), step


@lowers(nn.TakeOp)
def lower_take(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.take → a gather over the result: the index read from `indices` (through the loops of its
    axes), clamped into [0, n - 1] (clip) or taken modulo n (wrap), then `tensor.extract` from the data.
    Constant indices evenly spaced (one index, a range: a transformer's query, key and value) are a
    `tensor.extract_slice` reshaped to the result instead."""
    attrs = op.attrs()
    data, indices = op.operands
    if attrs["axis"] is None:
        data, axis = e.reshape(data, (math.prod(shape_of(data)),)), 0
    else:
        axis = normalize_axis(attrs["axis"], len(shape_of(data)), "nn.take")
    n = shape_of(data)[axis]
    out_shape = shape_of(op.results[0])
    spaced = _evenly_spaced(indices, n, attrs["mode"])
    if spaced is not None:
        first, count, step = spaced
        shape = list(shape_of(data))
        offsets, strides = [0] * len(shape), [1] * len(shape)
        shape[axis], offsets[axis], strides[axis] = count, first, step
        return [e.reshape(e.add(tensor.ExtractSliceOp.from_static_parameters(data, offsets, shape, strides)), out_shape)]
    index_rank = len(shape_of(indices))
    index_map = affine_map(len(out_shape), dims(len(out_shape))[axis : axis + index_rank])

    def where(b: BodyBuilder, args, loop: list[SSAValue]) -> list[SSAValue]:
        i = b.to_index(args[0])
        if attrs["mode"] == "clip":
            i = b.binary("max", b.binary("min", i, b.index(n - 1)), b.index(0))
        elif attrs["mode"] == "wrap":  # ((i rem n) + n) rem n: the remainder's sign follows i
            i = b.binary("rem", b.binary("add", b.binary("rem", i, b.index(n)), b.index(n)), b.index(n))
        return loop[:axis] + [i] + loop[axis + index_rank :]

    return [_gather(e, data, [indices], [index_map], out_shape, where)]


@lowers(nn.PadOp)
def lower_pad(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.pad → `tensor.pad` yielding the pad value (constant mode); reflect and edge modes are a
    gather whose body maps each result index back into the data."""
    attrs = op.attrs()
    (data,) = op.operands
    shape = shape_of(data)
    pairs = pad_pairs(shape, attrs)
    if attrs["pad_mode"] == "constant":
        return [e.pad(data, [p[0] for p in pairs], [p[1] for p in pairs], attrs["pad_value"])]
    reflect = attrs["pad_mode"] == "reflect"

    def where(b: BodyBuilder, args, loop: list[SSAValue]) -> list[SSAValue]:
        result = []
        for i, n, (before, after) in zip(loop, shape, pairs):
            if before or after:
                i, last, zero = b.binary("sub", i, b.index(before)), b.index(n - 1), b.index(0)
                if reflect:  # i -> |i| -> (n - 1) - |(n - 1) - |i||
                    i = b.binary("max", i, b.binary("sub", zero, i))
                    d = b.binary("sub", last, i)
                    i = b.binary("sub", last, b.binary("max", d, b.binary("sub", zero, d)))
                else:  # edge: clamp into [0, n - 1]
                    i = b.binary("max", b.binary("min", i, last), zero)
            result.append(i)
        return result

    return [_gather(e, data, [], [], shape_of(op.results[0]), where)]


@lowers(nn.BroadcastToOp)
def lower_broadcast_to(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.broadcast_to → a copy generic whose input map reads broadcast axes at index 0 (the map
    the broadcasting binary ops use)."""
    (data,) = op.operands
    out_shape = shape_of(op.results[0])
    if shape_of(data) == out_shape:
        return [data]
    rank = len(out_shape)
    maps = [broadcast_map(shape_of(data), out_shape), affine_map(rank, dims(rank))]
    return [e.generic([data], e.empty(out_shape, element_of(op)), maps, [PARALLEL] * rank, lambda b, args: args[0])]


@lowers(nn.SqueezeOp)
def lower_squeeze(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.squeeze → `tensor.collapse_shape`, each dropped axis grouped with a kept neighbour."""
    (data,) = op.operands
    shape = shape_of(data)
    dropped = set(squeeze_axes(shape, op.attrs()))
    if not dropped:
        return [data]
    kept = [i for i in range(len(shape)) if i not in dropped]
    # Kept axis j takes the dropped axes up to the next kept one (the first also those before it).
    bounds = [0, *kept[1:], len(shape)]
    groups = [list(range(lo, hi)) for lo, hi in zip(bounds, bounds[1:])] if kept else []
    result_type = op.results[0].type
    assert isinstance(result_type, TensorType)
    return [e.add(tensor.CollapseShapeOp.build(operands=[data], result_types=[result_type],
                                               properties={"reassociation": reassociation(groups)}))]


@lowers(nn.ScatterNDOp)
def lower_scatter_nd(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.scatter_nd → a reduction generic over the result's loops and the updates' positions j
    (the last j whose coordinates `indices[:, j]` are this element, for update; the sum of those
    updates, for add), then an elementwise generic reading that update (`tensor.extract`) or the data."""
    data, indices, updates = op.operands
    shape = shape_of(data)
    rank, m = len(shape), shape_of(indices)[0]
    count = math.prod(shape_of(indices)[1:])
    indices = e.reshape(indices, (m, count))
    updates = e.reshape(updates, (count,) + shape[m:])
    add = op.attrs()["mode"] == "add"
    loops = dims(rank + 1)

    def here(b: BodyBuilder) -> SSAValue:
        """Whether update j's coordinates are this element's (negative ones counted from the end)."""
        hit = None
        for k in range(m):
            raw = b.extract(indices, [b.index(k), b.loop_index(rank)])
            wrapped = b.select(b.compare_values("lt", raw, b.scalar(0, raw.type)),
                               b.binary("add", raw, b.scalar(shape[k], raw.type)), raw)
            same = b.compare_values("eq", b.to_index(wrapped), b.loop_index(k))
            hit = same if hit is None else b.logical("and", hit, same)
        return hit

    out_map = affine_map(rank + 1, loops[:rank])
    update_map = affine_map(rank + 1, [loops[rank]] + loops[m:rank])  # also what spans the loop over j
    iterators = [PARALLEL] * rank + [REDUCTION]
    if add:
        added = e.generic([updates], e.filled(0, shape, element_of(op)), [update_map, out_map], iterators,
                          lambda b, args: b.binary("add", args[1], b.select(here(b), args[0], b.scalar(0, args[0].type))))
        identity = affine_map(rank, dims(rank))
        return [e.generic([data, added], e.empty(shape, element_of(op)), [identity] * 3, [PARALLEL] * rank,
                          lambda b, args: b.binary("add", args[0], args[1]))]
    position = e.generic([updates], e.filled(-1, shape, i64), [update_map, out_map], iterators, lambda b, args: b.binary(
        "max", args[1], b.select(here(b), b.add_index_cast(b.loop_index(rank), i64), b.scalar(-1, i64))))

    def written(b: BodyBuilder, args) -> SSAValue:
        x, j = args[:2]
        found = b.compare_values("ge", j, b.scalar(0, i64))
        safe = b.to_index(b.binary("max", j, b.scalar(0, i64)))
        value = b.extract(updates, [safe] + [b.loop_index(i) for i in range(m, rank)])
        return b.select(found, value, x)

    identity = affine_map(rank, dims(rank))
    return [e.generic([data, position], e.empty(shape, element_of(op)), [identity] * 3, [PARALLEL] * rank, written)]
