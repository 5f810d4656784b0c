"""Layouts, padding, windows and axes: the helpers the dialect's shape rules, the runtime's kernels
and the lowerings share (the lowest layer that needs them). Bad values raise `ShapeError`
(a ValueError) naming what was wrong.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from xrelay.dialects.infer import ShapeError


DEFAULT_KERNEL_LAYOUT = {"NCHW": "OIHW", "NHWC": "HWIO"}
"""Relay's default conv2d kernel layout per data layout (ConvertLayout's "default", ResNet's weights)."""


def check_layout(layout: str, letters: str, what: str) -> str:
    """`layout`, unless it is not a permutation of `letters` (e.g. NHWC of NCHW)."""
    if len(layout) != len(letters) or sorted(layout) != sorted(letters):
        raise ShapeError(f"{what} '{layout}' is not a permutation of '{letters}'")
    return layout


def layout_permutation(src: str, dst: str) -> tuple[int, ...]:
    """Axes for `np.transpose` taking an array in layout `src` to layout `dst` (both spelled with
    the same distinct letters: NCHW/NHWC, OIHW/HWIO, ...; split layouts like NCHW4c are refused)."""
    if len(set(src)) != len(src) or sorted(src) != sorted(dst) or not src.isalpha():
        raise ShapeError(f"layout_transform: {src!r} -> {dst!r} is not a permutation of the same distinct letters")
    return tuple(src.index(c) for c in dst)


def pad4(padding: Sequence[int] | int, what: str = "") -> tuple[int, int, int, int]:
    """Relay's 2-D padding as (top, left, bottom, right): p or (p,) -> all sides, (h, w) -> (h, w, h, w)."""
    if isinstance(padding, numbers.Integral):
        padding = (padding,)
    padding = tuple(int(p) for p in padding)
    if len(padding) == 1:
        return padding * 4  # type: ignore[return-value]
    if len(padding) == 2:
        return (padding[0], padding[1], padding[0], padding[1])
    if len(padding) == 4:
        return padding  # type: ignore[return-value]
    raise ShapeError(f"{what + ': ' if what else ''}padding must have 1, 2 or 4 values, got {padding}")


def pair(value: Sequence[int] | int) -> tuple[int, ...]:
    """Relay's 2-D int attributes: an int or a 1-tuple applies to both spatial dims (other lengths
    are returned as they are, for the shape rule to refuse with the attribute's name)."""
    if isinstance(value, numbers.Integral):
        return (int(value), int(value))
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return (value[0], value[0])
    return value


def window_output_size(size: int, pad_total: int, kernel: int, stride: int, dilation: int, ceil: bool = False) -> int:
    """Relay's output extent of a strided, dilated window along one axis."""
    span = size + pad_total - dilation * (kernel - 1) - 1
    return (span + (stride - 1 if ceil else 0)) // stride + 1
