"""Shape-rule helpers shared by the nn op families (`dialects/ops/*.py`), after Relay's type relations.

Every shape rule (beside its op class) takes the operand shapes (tuples of ints, in operand order) and the op's
attributes as plain Python values (``op.attrs()``), and returns the result shape, or a
list of result shapes for ops with several results. Inconsistent input raises
`ShapeError` naming the operand and the shapes; the op wrapper prefixes the op name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

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


def normalize_axis(axis: int, rank: int, what: str) -> int:
    """`axis` in [0, rank) (negative counts from the end); ShapeError naming `what` when out of range."""
    if not -rank <= axis < rank:
        raise ShapeError(f"{what}: axis {axis} out of range for rank {rank}")
    return axis % rank


def check_axis(axis: int, rank: int, operand: str, shape: Shape) -> int:
    """`normalize_axis` for a shape rule: out of range names the operand and its shape."""
    try:
        return normalize_axis(axis, rank, operand)
    except ShapeError:
        raise ShapeError(f"axis {axis} out of range for operand '{operand}' {fmt_shape(shape)}") from None


def check_per_channel(data: Shape, axis: int, **vectors: Shape) -> int:
    """Check that each named operand is 1-D, one value per index of `data`'s axis `axis` (bias,
    gamma, ...); returns the axis normalised."""
    channels = (data[check_axis(axis, len(data), "data", data)],)
    for name, shape in vectors.items():
        if shape != channels:
            raise ShapeError(f"'{name}' {fmt_shape(shape)} must be 1-D of size {channels[0]} (axis {axis} of "
                             f"'data' {fmt_shape(data)})")
    return axis % len(data)


def per_channel(*operands: str) -> Callable[[list[Shape], dict], Shape]:
    """The shape rule of an op that keeps `data`'s shape and reads `operands` (those after `data`) one
    value per index of its axis `axis` (bias_add's bias, prelu's alpha, layer_norm's gamma and beta)."""

    def rule(shapes: list[Shape], a: dict) -> Shape:
        check_per_channel(shapes[0], a["axis"], **dict(zip(operands, shapes[1:])))
        return shapes[0]

    return rule


def same(shapes: list[Shape], a: dict) -> Shape:
    return shapes[0]
