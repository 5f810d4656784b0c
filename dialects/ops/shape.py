"""Shape and data-movement ops: reshapes, transposes, layout transforms, concatenate/split, slices,
take (gather), scatter_nd, pad, broadcast_to and squeeze (values move, none change).

Kernels: runtime/reference/nn_kernels/shape.py; lowerings: lowering/to_linalg/shape.py.
"""

from __future__ import annotations

import math
from typing import ClassVar

from xdsl.dialects.builtin import StringAttr
from xdsl.dialects.builtin import TensorType as T
from xdsl.irdl import attr_def, operand_def, result_def, var_operand_def, var_result_def

from xrelay.dialects.infer import MAX_RANK, Shape, ShapeError, check_axis, fmt_shape
from xrelay.dialects.layout import check_layout
from xrelay.dialects.attributes import INT, INTS, float_, int_, ints, str_
from xrelay.dialects.op_base import DataOp, LayoutRule, NNOp, nn_op

__all__ = [
    "BatchFlattenOp", "BroadcastToOp", "ConcatenateOp", "ExpandDimsOp", "LayoutTransformOp", "PadOp", "ReshapeOp",
    "ScatterNDOp", "SplitOp", "SqueezeOp", "StridedSliceOp", "TakeOp", "TransposeOp",
]


def batch_flatten(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    if len(data) < 1:
        raise ShapeError(f"operand 'data' must have rank >= 1, got shape {fmt_shape(data)}")
    return (data[0], math.prod(data[1:]))


def expand_dims(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    rank, axis, count = len(data), a["axis"], a["num_newaxis"]
    if not -rank - 1 <= axis <= rank:
        raise ShapeError(f"axis {axis} out of range [{-rank - 1}, {rank}] for 'data' {fmt_shape(data)}")
    if count < 0:
        raise ShapeError(f"num_newaxis must be >= 0, got {count}")
    if rank + count > MAX_RANK:
        raise ShapeError(f"num_newaxis {count} would make rank {rank + count}; at most {MAX_RANK} dimensions")
    if axis < 0:
        axis += rank + 1
    return data[:axis] + (1,) * count + data[axis:]


def reshape_target(data: Shape, newshape: Shape) -> Shape:
    """The shape Relay's reshape codes give `data`: a positive value is taken as it is, 0 copies
    the next input dim, -1 is inferred, -2 copies all remaining dims, -3 merges the next two, and
    -4 splits the next dim into the two values after it (one of them may be -1)."""
    codes = [int(c) for c in newshape]
    newshape = tuple(codes)
    out: list[int] = []
    src = 0
    infer_at = None

    def need(count: int, at: int, code: int) -> None:
        if src + count > len(data):
            raise ShapeError(f"newshape {newshape}: code {code} at {at} refers past the dims of 'data' {fmt_shape(data)}")

    i = 0
    while i < len(codes):
        code = codes[i]
        if code > 0:
            out.append(code)
            src += 1
        elif code == 0:
            need(1, i, code)
            out.append(data[src])
            src += 1
        elif code == -1:
            if infer_at is not None:
                raise ShapeError(f"newshape {newshape} has more than one -1")
            infer_at = len(out)
            out.append(1)
            src += 1
        elif code == -2:
            out.extend(data[src:])
            src = len(data)
        elif code == -3:
            need(2, i, code)
            out.append(data[src] * data[src + 1])
            src += 2
        elif code == -4:
            need(1, i, code)
            if i + 2 >= len(codes):
                raise ShapeError(f"newshape {newshape}: code -4 at {i} must be followed by two values")
            first, second = codes[i + 1], codes[i + 2]
            if first == -1 and second > 0:
                first = data[src] // second
            elif second == -1 and first > 0:
                second = data[src] // first
            if first < 1 or second < 1 or first * second != data[src]:
                raise ShapeError(f"newshape {newshape}: code -4 at {i} cannot split dim {data[src]} into {codes[i + 1]} x {codes[i + 2]}")
            out.extend((first, second))
            src += 1
            i += 2
        else:
            raise ShapeError(f"newshape {newshape}: unknown code {code}")
        i += 1
    total, known = math.prod(data), math.prod(out)
    if infer_at is not None:
        if known == 0 or total % known:
            raise ShapeError(f"cannot reshape 'data' {fmt_shape(data)} to newshape {newshape}")
        out[infer_at] = total // known
    if math.prod(out) != total:
        raise ShapeError(f"cannot reshape 'data' {fmt_shape(data)} ({total} elements) to {fmt_shape(out)}")
    return tuple(out)


def reshape(shapes: list[Shape], a: dict) -> Shape:
    """Relay's reshape codes (`reshape_target`)."""
    (data,) = shapes
    return reshape_target(data, tuple(a["newshape"]))


def transpose(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    rank = len(data)
    axes = a["axes"]
    if axes is None:
        axes = tuple(reversed(range(rank)))
    if len(axes) != rank or not all(-rank <= x < rank for x in axes):
        raise ShapeError(f"axes {tuple(axes)} is not a permutation for 'data' {fmt_shape(data)}")
    axes = [x % rank for x in axes]
    if sorted(axes) != list(range(rank)):
        raise ShapeError(f"axes {tuple(a['axes'])} is not a permutation for 'data' {fmt_shape(data)}")
    return tuple(data[x] for x in axes)


def layout_transform(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    src, dst = a["src_layout"], a["dst_layout"]
    if len(set(src)) != len(src) or not src.isalpha() or not src.isupper():
        raise ShapeError(f"src_layout '{src}' must be distinct upper-case letters")
    check_layout(dst, src, "dst_layout")
    if len(src) != len(data):
        raise ShapeError(f"src_layout '{src}' does not match the rank of 'data' {fmt_shape(data)}")
    return tuple(data[src.index(c)] for c in dst)


@nn_op(shape=batch_flatten, layout=LayoutRule.SENSITIVE)
class BatchFlattenOp(DataOp):
    name = "nn.batch_flatten"


@nn_op(shape=expand_dims, layout=LayoutRule.SENSITIVE)
class ExpandDimsOp(DataOp):
    name = "nn.expand_dims"
    axis = attr_def(INT)
    num_newaxis = int_(1)


@nn_op(shape=reshape, layout=LayoutRule.RESHAPE)
class ReshapeOp(DataOp):
    name = "nn.reshape"
    newshape = attr_def(INTS)


@nn_op(shape=transpose, layout=LayoutRule.TRANSPOSE)
class TransposeOp(DataOp):
    name = "nn.transpose"
    axes = ints()


@nn_op(shape=layout_transform, layout=LayoutRule.TRANSFORM)
class LayoutTransformOp(DataOp):
    name = "nn.layout_transform"
    src_layout = attr_def(StringAttr)
    dst_layout = attr_def(StringAttr)


# --- data movement: shape rules (Relay's type relations) -----------------------------------


def concatenate(shapes: list[Shape], a: dict) -> Shape:
    first = shapes[0]
    if not first:
        raise ShapeError("cannot concatenate rank-0 operands")
    axis = check_axis(a["axis"], len(first), "data #0", first)
    for i, shape in enumerate(shapes[1:], 1):
        if len(shape) != len(first) or any(x != y for j, (x, y) in enumerate(zip(shape, first)) if j != axis):
            raise ShapeError(
                f"operand 'data #{i}' {fmt_shape(shape)} does not match 'data #0' {fmt_shape(first)} "
                f"outside axis {a['axis']}"
            )
    return first[:axis] + (sum(s[axis] for s in shapes),) + first[axis + 1 :]


def split_bounds(data: Shape, a: dict) -> tuple[int, list[int]]:
    """(axis, [0, i0, i1, ..., n]): piece k is [bounds[k], bounds[k + 1]) along the axis."""
    axis = check_axis(a["axis"], len(data), "data", data)
    bounds = [0, *a["indices_or_sections"], data[axis]]
    if any(hi <= lo for lo, hi in zip(bounds, bounds[1:])):
        raise ShapeError(
            f"indices_or_sections {tuple(a['indices_or_sections'])} must increase strictly inside "
            f"(0, {data[axis]}) (axis {a['axis']} of 'data' {fmt_shape(data)})"
        )
    return axis, bounds


def split(shapes: list[Shape], a: dict) -> list[Shape]:
    (data,) = shapes
    axis, bounds = split_bounds(data, a)
    return [data[:axis] + (hi - lo,) + data[axis + 1 :] for lo, hi in zip(bounds, bounds[1:])]


def slice_ranges(data: Shape, a: dict) -> list[tuple[int, int, int]]:
    """(start, stop, step) per axis of 'data', as Python's `slice(begin, end, stride).indices(n)`
    (negative begin/end count from the end, out-of-range ones clamp), which is Relay's rule."""
    rank = len(data)
    begin, end = list(a["begin"]), list(a["end"])
    axes = list(range(len(begin))) if a["axes"] is None else [check_axis(x, rank, "data", data) for x in a["axes"]]
    if len(set(axes)) != len(axes) or len(axes) > rank:
        raise ShapeError(f"sliced axes {tuple(axes)} must be distinct axes of 'data' {fmt_shape(data)}")
    if len(begin) != len(axes) or len(end) != len(axes):
        raise ShapeError(f"begin {tuple(begin)} and end {tuple(end)} need one value per sliced axis ({len(axes)})")
    strides = list(a["strides"] or (1,))
    if len(strides) == 1:
        strides *= len(axes)
    if len(strides) != len(axes):
        raise ShapeError(f"strides {tuple(strides)} need 1 value or one per sliced axis ({len(axes)})")
    if a["slice_mode"] not in ("end", "size"):
        raise ShapeError(f"slice_mode must be 'end' or 'size', got '{a['slice_mode']}'")
    ranges = [(0, n, 1) for n in data]
    for axis, b, e, s in zip(axes, begin, end, strides):
        n = data[axis]
        if a["slice_mode"] == "size":  # end is a size (negative: to the end); strides are ignored, as in Relay
            b = b + n if b < 0 else b
            e, s = (n if e < 0 else b + e), 1
        if s == 0:
            raise ShapeError(f"stride 0 on axis {axis}")
        start, stop, step = slice(b, e, s).indices(n)
        if not range(start, stop, step):
            raise ShapeError(f"empty slice {b}:{e}:{s} of axis {axis} of 'data' {fmt_shape(data)}")
        ranges[axis] = (start, stop, step)
    return ranges


def strided_slice(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    return tuple(len(range(*r)) for r in slice_ranges(data, a))


TAKE_MODES = ("clip", "wrap", "fast")


def take(shapes: list[Shape], a: dict) -> Shape:
    data, indices = shapes
    if a["mode"] not in TAKE_MODES:
        raise ShapeError(f"mode must be one of {', '.join(TAKE_MODES)}, got '{a['mode']}'")
    if 0 in data:
        raise ShapeError(f"cannot take from the empty 'data' {fmt_shape(data)}")
    if a["axis"] is None:
        return indices
    axis = check_axis(a["axis"], len(data), "data", data)
    return data[:axis] + indices + data[axis + 1 :]


PAD_MODES = ("constant", "reflect", "edge")


def pad_pairs(data: Shape, a: dict) -> list[tuple[int, int]]:
    """The (before, after) widths per axis of 'data'."""
    widths = tuple(a["pad_width"])
    if len(widths) != 2 * len(data):
        raise ShapeError(
            f"pad_width has {len(widths)} values; 'data' {fmt_shape(data)} needs 2 per axis (before, after)"
        )
    if min(widths, default=0) < 0:
        raise ShapeError(f"pad_width {widths} must not be negative")
    if a["pad_mode"] not in PAD_MODES:
        raise ShapeError(f"pad_mode must be one of {', '.join(PAD_MODES)}, got '{a['pad_mode']}'")
    pairs = list(zip(widths[::2], widths[1::2]))
    if a["pad_mode"] == "reflect":
        for axis, (n, (before, after)) in enumerate(zip(data, pairs)):
            if max(before, after) >= n:
                raise ShapeError(
                    f"reflect padding ({before}, {after}) of axis {axis} must be smaller than its size in "
                    f"'data' {fmt_shape(data)}"
                )
    return pairs


def pad(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    return tuple(n + before + after for n, (before, after) in zip(data, pad_pairs(data, a)))


def broadcast_to(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    shape = tuple(a["shape"])
    if min(shape, default=1) < 1 or len(shape) < len(data) or any(
        d != 1 and d != s for d, s in zip(reversed(data), reversed(shape))
    ):
        raise ShapeError(f"'data' {fmt_shape(data)} does not broadcast to shape {fmt_shape(shape)}")
    return shape


def squeeze_axes(data: Shape, a: dict) -> list[int]:
    """The axes squeeze removes: the listed ones (each must be 1), or every size-1 axis."""
    if a["axis"] is None:
        return [i for i, n in enumerate(data) if n == 1]
    axes = sorted({check_axis(x, len(data), "data", data) for x in a["axis"]})
    for axis in axes:
        if data[axis] != 1:
            raise ShapeError(f"axis {axis} of 'data' {fmt_shape(data)} has size {data[axis]}, not 1")
    return axes


def squeeze(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    axes = squeeze_axes(data, a)
    return tuple(n for i, n in enumerate(data) if i not in axes)


# --- data movement: the ops ----------------------------------------------------------------


@nn_op(shape=concatenate, layout=LayoutRule.CONCATENATE)
class ConcatenateOp(NNOp):
    """Relay's concatenate: its tuple of inputs is the variadic 'data' operand here."""

    name = "nn.concatenate"
    data = var_operand_def(T)
    result = result_def(T)
    axis = int_(0)


@nn_op(shape=split, layout=LayoutRule.SPLIT)
class SplitOp(NNOp):
    """One result per piece between the split indices (Relay's tuple result)."""

    name = "nn.split"
    data = operand_def(T)
    result = var_result_def(T)
    indices_or_sections = attr_def(INTS)
    axis = int_(0)


@nn_op(shape=strided_slice, layout=LayoutRule.STRIDED_SLICE)
class StridedSliceOp(DataOp):
    """begin/end/strides on `axes` (None: the first len(begin) axes); slice_mode "size" reads end as a size."""

    name = "nn.strided_slice"
    begin = attr_def(INTS)
    end = attr_def(INTS)
    strides = ints()
    axes = ints()
    slice_mode = str_("end")
    NORMALISE: ClassVar[dict] = {}  # strides is one per sliced axis, not a 2-D window's pair


@nn_op(shape=take, layout=LayoutRule.SENSITIVE)
class TakeOp(DataOp):
    """Gather along `axis` (None: the flattened data) at integer `indices`; mode clip, wrap or fast."""

    name = "nn.take"
    indices = operand_def(T)
    axis = int_()
    mode = str_("clip")
    INTEGER_OPERANDS: ClassVar[tuple[str, ...]] = ("indices",)


@nn_op(shape=pad, layout=LayoutRule.PAD)
class PadOp(DataOp):
    """pad_width is (before, after) per axis, flattened; pad_mode constant (pad_value), reflect or edge."""

    name = "nn.pad"
    pad_width = attr_def(INTS)
    pad_value = float_(0.0)
    pad_mode = str_("constant")


@nn_op(shape=broadcast_to, layout=LayoutRule.SENSITIVE)
class BroadcastToOp(DataOp):
    name = "nn.broadcast_to"
    shape = attr_def(INTS)


@nn_op(shape=squeeze, layout=LayoutRule.SENSITIVE)
class SqueezeOp(DataOp):
    name = "nn.squeeze"
    axis = ints()


def scatter_nd(shapes: list[Shape], a: dict) -> Shape:
    data, indices, updates = shapes
    if a["mode"] not in ("update", "add"):
        raise ShapeError(f"mode '{a['mode']}' is not update or add")
    if not indices or not 1 <= indices[0] <= len(data):
        raise ShapeError(f"'indices' {fmt_shape(indices)} must lead with M in 1..{len(data)} (the rank of 'data')")
    expected = indices[1:] + data[indices[0]:]
    if updates != expected:
        raise ShapeError(f"'updates' {fmt_shape(updates)} must be {fmt_shape(expected)} for 'indices' "
                         f"{fmt_shape(indices)} and 'data' {fmt_shape(data)}")
    return data


@nn_op(shape=scatter_nd, layout=LayoutRule.SENSITIVE)
class ScatterNDOp(DataOp):
    """`data` with `updates[y...]` written (mode update; the last of repeated positions wins) or added
    (mode add) at the first M coordinates `indices[:, y...]` (Relay's layout; negative ones count
    from the end)."""

    name = "nn.scatter_nd"
    indices = operand_def(T)
    updates = operand_def(T)
    mode = str_("update")
    INTEGER_OPERANDS: ClassVar[tuple[str, ...]] = ("indices",)
