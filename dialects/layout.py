"""Layouts, padding, windows and axes: the helpers the dialect's shape rules, the runtime's kernels
and the lowerings share (the lowest layer that needs them). Bad values raise `ShapeError`
(a ValueError) naming what was wrong.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

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


def pool_geometry(attrs: dict, h: int, w: int, what: str):
    """(window, strides, dilation, declared padding, padding with ceil_mode's extra bottom/right,
    output (OH, OW)) of a pool over an `h` x `w` input, for its kernel and its lowering alike: ceil_mode
    can make the last window run past the declared padding, which is extended there. A ValueError
    naming `what` for a bad window or one that does not fit."""
    window, strides = pair(attrs.get("pool_size", (1, 1))), pair(attrs.get("strides", (1, 1)))
    dilation, pad = pair(attrs.get("dilation", (1, 1))), pad4(attrs.get("padding", (0, 0, 0, 0)), what)
    ceil = bool(attrs.get("ceil_mode", False))
    if min(pad) < 0 or min(strides) < 1 or min(dilation) < 1 or min(window) < 1:
        raise ValueError(f"{what}: bad pool_size {window}, padding {pad}, strides {strides} or dilation {dilation}")
    out_hw = (window_output_size(h, pad[0] + pad[2], window[0], strides[0], dilation[0], ceil),
              window_output_size(w, pad[1] + pad[3], window[1], strides[1], dilation[1], ceil))
    if min(out_hw) < 1:
        raise ValueError(f"{what}: window {window} does not fit padded input of spatial size {(h, w)}")
    extra = [max(0, (out - 1) * stride + d * (k - 1) + 1 - (size + lo + hi))
             for out, stride, d, k, size, lo, hi in zip(out_hw, strides, dilation, window, (h, w), pad[:2], pad[2:])]
    return window, strides, dilation, pad, (pad[0], pad[1], pad[2] + extra[0], pad[3] + extra[1]), out_hw


def avg_pool_divisor(attrs: dict, h: int, w: int, what: str) -> np.ndarray:
    """The (OH, OW) tap counts an average pool over an `h` x `w` input divides its window sums by, as
    TVM's topi pool counts them: the taps inside the declared padding (`count_include_pad`; not
    ceil_mode's extra) or inside the data; at least 1."""
    window, strides, dilation, pad, _, out_hw = pool_geometry(attrs, h, w, what)
    include = bool(attrs.get("count_include_pad", False))
    counts = []
    for axis, size in enumerate((h, w)):
        lo, hi = (0, size + pad[axis] + pad[axis + 2]) if include else (pad[axis], pad[axis] + size)
        taps = np.arange(out_hw[axis])[:, None] * strides[axis] + np.arange(window[axis])[None, :] * dilation[axis]
        counts.append(((taps >= lo) & (taps < hi)).sum(axis=1))
    return np.maximum(counts[0][:, None] * counts[1][None, :], 1)


def reshape_groups(src: Sequence[int], dst: Sequence[int]) -> list[tuple[list[int], list[int]]] | None:
    """A reshape from shape `src` to `dst` as the smallest runs of consecutive axes with equal products,
    in order: (src axes, dst axes) per run, e.g. (1, 8, 5) -> (1, 2, 4, 5) is ([0], [0]), ([1], [1, 2]),
    ([2], [3]); a unit axis alone on one side is a run with nothing on the other. Each run is a
    block of the row-major element order reshaped on its own. None for shapes with a zero-size axis
    or different sizes."""
    if 0 in src or 0 in dst:
        return None
    groups = []
    i = j = 0
    while i < len(src) or j < len(dst):
        if i < len(src) and (j == len(dst) or (src[i] == 1 and dst[j] != 1)):
            groups.append(([i], []))  # a unit axis that vanishes
            i += 1
            continue
        if i == len(src) or (dst[j] == 1 and src[i] != 1):
            groups.append(([], [j]))  # a unit axis that appears
            j += 1
            continue
        ins, outs, size_in, size_out = [i], [j], src[i], dst[j]
        i, j = i + 1, j + 1
        while size_in != size_out:
            if (i if size_in < size_out else j) == len(src if size_in < size_out else dst):
                return None  # the sizes do not match
            if size_in < size_out:
                ins.append(i)
                size_in *= src[i]
                i += 1
            else:
                outs.append(j)
                size_out *= dst[j]
                j += 1
        groups.append((ins, outs))
    return groups
