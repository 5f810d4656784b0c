"""Shape-rule helpers shared by the nn op families (`dialects/ops/*.py`), after Relay's type relations.

Every shape rule (beside its op class) takes the operand shapes (tuples of ints, in operand order) and the op's
attributes as plain Python values (``op.attrs()``), and returns the result shape, or a
list of result shapes for ops with several results. Inconsistent input raises
`ShapeError` naming the operand and the shapes; the op wrapper prefixes the op name.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

Shape = tuple[int, ...]


class ShapeError(ValueError):
    """Operand shapes or attributes that no result type can satisfy."""


def fmt_shape(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


MAX_RANK = 64
"""Most dimensions a tensor may have (numpy's limit: every level executes through numpy arrays)."""

MAX_ELEMENTS = 2**32
"""Most elements an nn op's operand or result may have: checked before anything is allocated, so a
mistyped `tensor<99999999999xf32>` is a verifier error naming the type, not an out-of-memory crash."""


def check_size(shape: Shape, what: str) -> None:
    """ShapeError when `shape` has more than MAX_RANK dimensions or MAX_ELEMENTS elements."""
    if len(shape) > MAX_RANK:
        raise ShapeError(f"{what} has {len(shape)} dimensions; at most {MAX_RANK}")
    count = math.prod(shape)
    if count > MAX_ELEMENTS:
        raise ShapeError(f"{what} {fmt_shape(shape)} has {count} elements; at most {MAX_ELEMENTS} (2**32)")


def check_rank(name: str, shape: Shape, rank: int) -> None:
    if len(shape) != rank:
        raise ShapeError(f"operand '{name}' must have rank {rank}, got shape {fmt_shape(shape)}")


def check_layout(layout: str, letters: str, what: str) -> None:
    """Raise unless `layout` is a permutation of `letters` (e.g. NHWC of NCHW)."""
    if len(layout) != len(letters) or sorted(layout) != sorted(letters):
        raise ShapeError(f"{what} '{layout}' is not a permutation of '{letters}'")


def pad4(padding: Sequence[int] | int) -> tuple[int, int, int, int]:
    """Relay's padding forms: (p,) or p -> all sides, (h, w) -> (h, w, h, w), 4-tuple kept."""
    if isinstance(padding, numbers.Integral):
        padding = (padding,)
    padding = tuple(int(p) for p in padding)
    if len(padding) == 1:
        return padding * 4  # type: ignore[return-value]
    if len(padding) == 2:
        return (padding[0], padding[1], padding[0], padding[1])
    if len(padding) == 4:
        return padding  # type: ignore[return-value]
    raise ShapeError(f"padding must have 1, 2 or 4 values, got {padding}")


def pair(value: Sequence[int] | int) -> tuple[int, int]:
    """Relay's 2-D int attributes: an int or 1-tuple applies to both spatial dims."""
    if isinstance(value, numbers.Integral):
        return (int(value), int(value))
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return (value[0], value[0])
    return value  # type: ignore[return-value]


def check_axis(axis: int, rank: int, operand: str, shape: Shape) -> int:
    if not -rank <= axis < rank:
        raise ShapeError(f"axis {axis} out of range for operand '{operand}' {fmt_shape(shape)}")
    return axis % rank


def same(shapes: list[Shape], a: dict) -> Shape:
    return shapes[0]


def layout_permutation(src: str, dst: str) -> tuple[int, ...]:
    """Axes for np.transpose taking an array in layout `src` to layout `dst`."""
    check_layout(dst, src, "dst_layout")
    return tuple(src.index(c) for c in dst)
