"""Shape and data-movement ops: reshapes, transposes and layout transforms (values move, none change).

Kernels: runtime/kernels/shape.py; lowerings: lowering/to_linalg/shape.py.
"""

from __future__ import annotations

import math
from typing import ClassVar

from xdsl.dialects.builtin import StringAttr
from xdsl.dialects.builtin import TensorType as T
from xdsl.irdl import operand_def, result_def
from xdsl.irdl import attr_def

from xrelay.dialects.infer import MAX_RANK, Shape, ShapeError, check_layout, fmt_shape
from xrelay.dialects.op_base import INT, INTS, LayoutRule, NNOp, int_, ints, nn_op

__all__ = ["BatchFlattenOp", "ExpandDimsOp", "LayoutTransformOp", "ReshapeOp", "TransposeOp"]


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


def reshape(shapes: list[Shape], a: dict) -> Shape:
    """Relay's codes: 0 copies the input dim at the same position, -1 is inferred."""
    (data,) = shapes
    newshape = tuple(a["newshape"])
    out: list[int] = []
    infer_at = None
    for i, code in enumerate(newshape):
        if code == 0:
            if i >= len(data):
                raise ShapeError(f"newshape {newshape}: code 0 at {i} but 'data' {fmt_shape(data)} has rank {len(data)}")
            out.append(data[i])
        elif code == -1:
            if infer_at is not None:
                raise ShapeError(f"newshape {newshape} has more than one -1")
            infer_at = len(out)
            out.append(1)
        elif code > 0:
            out.append(code)
        else:
            raise ShapeError(f"newshape {newshape}: unsupported code {code} (only 0 and -1)")
    total, known = math.prod(data), math.prod(out)
    if infer_at is not None:
        if known == 0 or total % known:
            raise ShapeError(f"cannot reshape 'data' {fmt_shape(data)} to newshape {newshape}")
        out[infer_at] = total // known
    if math.prod(out) != total:
        raise ShapeError(f"cannot reshape 'data' {fmt_shape(data)} ({total} elements) to {fmt_shape(out)}")
    return tuple(out)


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


@nn_op
class BatchFlattenOp(NNOp):
    name = "nn.batch_flatten"
    data = operand_def(T)
    result = result_def(T)
    SHAPE_RULE = staticmethod(batch_flatten)
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.SENSITIVE


@nn_op
class ExpandDimsOp(NNOp):
    name = "nn.expand_dims"
    data = operand_def(T)
    result = result_def(T)
    axis = attr_def(INT)
    num_newaxis = int_(1)
    SHAPE_RULE = staticmethod(expand_dims)
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.SENSITIVE


@nn_op
class ReshapeOp(NNOp):
    name = "nn.reshape"
    data = operand_def(T)
    result = result_def(T)
    newshape = attr_def(INTS)
    SHAPE_RULE = staticmethod(reshape)
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.SENSITIVE


@nn_op
class TransposeOp(NNOp):
    name = "nn.transpose"
    data = operand_def(T)
    result = result_def(T)
    axes = ints()
    SHAPE_RULE = staticmethod(transpose)
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.SENSITIVE


@nn_op
class LayoutTransformOp(NNOp):
    name = "nn.layout_transform"
    data = operand_def(T)
    result = result_def(T)
    src_layout = attr_def(StringAttr)
    dst_layout = attr_def(StringAttr)
    SHAPE_RULE = staticmethod(layout_transform)
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.TRANSFORM
