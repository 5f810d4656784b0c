"""Shape inference for the nn ops, following Relay's type relations.

Every rule takes the operand shapes (tuples of ints, in operand order) and the op's
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


def _fmt(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _check_rank(name: str, shape: Shape, rank: int) -> None:
    if len(shape) != rank:
        raise ShapeError(f"operand '{name}' must have rank {rank}, got shape {_fmt(shape)}")


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


def _check_positive(**values: Sequence[int]) -> None:
    for name, value in values.items():
        if len(value) != 2 or min(value) < 1:
            raise ShapeError(f"{name} {tuple(value)} must be 2 positive values")


def _window_out(size: int, pad: int, kernel: int, stride: int, dilation: int, ceil: bool) -> int:
    extent = dilation * (kernel - 1) + 1
    span = size + pad - extent
    if ceil:
        return (span + stride - 1) // stride + 1
    return span // stride + 1


def conv2d(shapes: list[Shape], a: dict) -> Shape:
    data, weight = shapes
    _check_rank("data", data, 4)
    _check_rank("weight", weight, 4)
    data_layout, kernel_layout = a["data_layout"], a["kernel_layout"]
    out_layout = a["out_layout"] or data_layout
    check_layout(data_layout, "NCHW", "data_layout")
    check_layout(kernel_layout, "OIHW", "kernel_layout")
    check_layout(out_layout, "NCHW", "out_layout")
    d = dict(zip(data_layout, data))
    k = dict(zip(kernel_layout, weight))
    groups = a["groups"]
    strides, dilation = a["strides"], a["dilation"]
    top, left, bottom, right = a["padding"]
    _check_positive(strides=strides, dilation=dilation)
    if groups < 1 or d["C"] % groups or k["O"] % groups:
        raise ShapeError(
            f"groups={groups} must divide input channels {d['C']} of 'data' {_fmt(data)} "
            f"and output channels {k['O']} of 'weight' {_fmt(weight)}"
        )
    if k["I"] * groups != d["C"]:
        raise ShapeError(
            f"'weight' {_fmt(weight)} ({kernel_layout}) has {k['I']} input channels per group, "
            f"but 'data' {_fmt(data)} ({data_layout}) has {d['C']} channels in {groups} group(s)"
        )
    if a["channels"] is not None and a["channels"] != k["O"]:
        raise ShapeError(f"channels={a['channels']} but 'weight' {_fmt(weight)} has {k['O']} outputs")
    if a["kernel_size"] is not None and tuple(a["kernel_size"]) != (k["H"], k["W"]):
        raise ShapeError(
            f"kernel_size={tuple(a['kernel_size'])} but 'weight' {_fmt(weight)} has a "
            f"{k['H']}x{k['W']} kernel"
        )
    out = {
        "N": d["N"],
        "C": k["O"],
        "H": _window_out(d["H"], top + bottom, k["H"], strides[0], dilation[0], False),
        "W": _window_out(d["W"], left + right, k["W"], strides[1], dilation[1], False),
    }
    if out["H"] < 1 or out["W"] < 1:
        raise ShapeError(
            f"empty output: 'data' {_fmt(data)} is smaller than the dilated kernel of 'weight' "
            f"{_fmt(weight)} after padding {tuple(a['padding'])}"
        )
    return tuple(out[c] for c in out_layout)


def pool2d(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    _check_rank("data", data, 4)
    layout = a["layout"]
    check_layout(layout, "NCHW", "layout")
    d = dict(zip(layout, data))
    _check_positive(pool_size=a["pool_size"], strides=a["strides"], dilation=a["dilation"])
    (ph, pw), (sh, sw), (dh, dw) = a["pool_size"], a["strides"], a["dilation"]
    top, left, bottom, right = a["padding"]
    out = dict(d)
    out["H"] = _window_out(d["H"], top + bottom, ph, sh, dh, a["ceil_mode"])
    out["W"] = _window_out(d["W"], left + right, pw, sw, dw, a["ceil_mode"])
    if out["H"] < 1 or out["W"] < 1:
        raise ShapeError(
            f"empty output: 'data' {_fmt(data)} is smaller than pool_size {(ph, pw)} "
            f"after padding {tuple(a['padding'])}"
        )
    return tuple(out[c] for c in layout)


def global_pool2d(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    _check_rank("data", data, 4)
    check_layout(a["layout"], "NCHW", "layout")
    return tuple(1 if c in "HW" else n for c, n in zip(a["layout"], data))


def batch_flatten(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    if len(data) < 1:
        raise ShapeError(f"operand 'data' must have rank >= 1, got shape {_fmt(data)}")
    return (data[0], math.prod(data[1:]))


def dense(shapes: list[Shape], a: dict) -> Shape:
    data, weight = shapes
    _check_rank("weight", weight, 2)
    if len(data) < 1 or data[-1] != weight[1]:
        raise ShapeError(
            f"last dim of 'data' {_fmt(data)} must equal dim 1 of 'weight' {_fmt(weight)}"
        )
    if a["units"] is not None and a["units"] != weight[0]:
        raise ShapeError(f"units={a['units']} but 'weight' {_fmt(weight)} has {weight[0]} rows")
    return data[:-1] + (weight[0],)


def _axis(axis: int, rank: int, operand: str, shape: Shape) -> int:
    if not -rank <= axis < rank:
        raise ShapeError(f"axis {axis} out of range for operand '{operand}' {_fmt(shape)}")
    return axis % rank


def bias_add(shapes: list[Shape], a: dict) -> Shape:
    data, bias = shapes
    axis = _axis(a["axis"], len(data), "data", data)
    if bias != (data[axis],):
        raise ShapeError(
            f"'bias' {_fmt(bias)} must be 1-D of size {data[axis]} (axis {a['axis']} of "
            f"'data' {_fmt(data)})"
        )
    return data


def batch_norm(shapes: list[Shape], a: dict) -> list[Shape]:
    data = shapes[0]
    axis = _axis(a["axis"], len(data), "data", data)
    channels = (data[axis],)
    for name, shape in zip(("gamma", "beta", "moving_mean", "moving_var"), shapes[1:]):
        if shape != channels:
            raise ShapeError(
                f"'{name}' {_fmt(shape)} must be 1-D of size {data[axis]} (axis {a['axis']} of "
                f"'data' {_fmt(data)})"
            )
    return [data, channels, channels]


def same(shapes: list[Shape], a: dict) -> Shape:
    return shapes[0]


def softmax(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    _axis(a["axis"], len(data), "data", data)
    return data


def broadcast(shapes: list[Shape], a: dict) -> Shape:
    lhs, rhs = shapes
    rank = max(len(lhs), len(rhs))
    padded_l = (1,) * (rank - len(lhs)) + lhs
    padded_r = (1,) * (rank - len(rhs)) + rhs
    out = []
    for x, y in zip(padded_l, padded_r):
        if x != y and x != 1 and y != 1:
            raise ShapeError(f"'lhs' {_fmt(lhs)} and 'rhs' {_fmt(rhs)} do not broadcast")
        out.append(y if x == 1 else x)
    return tuple(out)


def expand_dims(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    rank, axis, count = len(data), a["axis"], a["num_newaxis"]
    if not -rank - 1 <= axis <= rank:
        raise ShapeError(f"axis {axis} out of range [{-rank - 1}, {rank}] for 'data' {_fmt(data)}")
    if count < 0:
        raise ShapeError(f"num_newaxis must be >= 0, got {count}")
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
                raise ShapeError(f"newshape {newshape}: code 0 at {i} but 'data' {_fmt(data)} has rank {len(data)}")
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
            raise ShapeError(f"cannot reshape 'data' {_fmt(data)} to newshape {newshape}")
        out[infer_at] = total // known
    if math.prod(out) != total:
        raise ShapeError(f"cannot reshape 'data' {_fmt(data)} ({total} elements) to {_fmt(out)}")
    return tuple(out)


def transpose(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    rank = len(data)
    axes = a["axes"]
    if axes is None:
        axes = tuple(reversed(range(rank)))
    if len(axes) != rank or not all(-rank <= x < rank for x in axes):
        raise ShapeError(f"axes {tuple(axes)} is not a permutation for 'data' {_fmt(data)}")
    axes = [x % rank for x in axes]
    if sorted(axes) != list(range(rank)):
        raise ShapeError(f"axes {tuple(a['axes'])} is not a permutation for 'data' {_fmt(data)}")
    return tuple(data[x] for x in axes)


def layout_transform(shapes: list[Shape], a: dict) -> Shape:
    (data,) = shapes
    src, dst = a["src_layout"], a["dst_layout"]
    if len(set(src)) != len(src) or not src.isalpha() or not src.isupper():
        raise ShapeError(f"src_layout '{src}' must be distinct upper-case letters")
    check_layout(dst, src, "dst_layout")
    if len(src) != len(data):
        raise ShapeError(f"src_layout '{src}' does not match the rank of 'data' {_fmt(data)}")
    return tuple(data[src.index(c)] for c in dst)


def layout_permutation(src: str, dst: str) -> tuple[int, ...]:
    """Axes for np.transpose taking an array in layout `src` to layout `dst`."""
    check_layout(dst, src, "dst_layout")
    return tuple(src.index(c) for c in dst)
