"""Kernels of the shape and data-movement ops (dialects/ops/shape.py)."""

from __future__ import annotations

import numpy as np

from xrelay.dialects import nn
from xrelay.dialects.infer import ShapeError
from xrelay.dialects.infer import normalize_axis
from xrelay.dialects.layout import layout_permutation
from xrelay.dialects.ops.shape import pad_pairs, reshape_target, slice_ranges, split_bounds, squeeze_axes
from xrelay.runtime.reference.nn_kernels.base import kernel


@kernel(nn.ExpandDimsOp)
def expand_dims(attrs: dict, data):
    """Insert ``num_newaxis`` size-1 axes at ``axis`` (negative: counted from the end, as Relay)."""
    axis = int(attrs["axis"])
    num = int(attrs.get("num_newaxis", 1))
    if not -data.ndim - 1 <= axis <= data.ndim or num < 0:
        raise ValueError(f"nn.expand_dims: axis {axis} / num_newaxis {num} invalid for shape {data.shape}")
    if axis < 0:
        axis += data.ndim + 1
    return data.reshape(data.shape[:axis] + (1,) * num + data.shape[axis:])


@kernel(nn.ReshapeOp)
def reshape(attrs: dict, data):
    """Reshape to ``newshape`` with Relay's special codes (``reshape_target`` beside the op)."""
    try:
        target = reshape_target(data.shape, tuple(attrs["newshape"]))
    except ShapeError as err:
        raise ValueError(f"nn.reshape: {err}") from None
    return data.reshape(target)


@kernel(nn.TransposeOp)
def transpose(attrs: dict, data):
    """Permute axes (``axes=None`` reverses them; negative axes allowed)."""
    axes = attrs.get("axes")
    if axes is None:
        return np.ascontiguousarray(data.transpose())
    axes = tuple(normalize_axis(int(a), data.ndim, "nn.transpose") for a in axes)
    if sorted(axes) != list(range(data.ndim)):
        raise ValueError(f"nn.transpose: axes {tuple(attrs['axes'])} are not a permutation for shape {data.shape}")
    return np.ascontiguousarray(data.transpose(axes))


@kernel(nn.LayoutTransformOp)
def layout_transform(attrs: dict, data):
    """Transpose between two layouts spelled with the same letters (NCHW -> NHWC, OIHW -> HWIO, ...)."""
    src, dst = attrs["src_layout"], attrs["dst_layout"]
    if len(src) != data.ndim:
        raise ValueError(f"nn.layout_transform: layout {src!r} does not fit a {data.ndim}-D input {data.shape}")
    return np.ascontiguousarray(data.transpose(layout_permutation(src, dst)))


@kernel(nn.BatchFlattenOp)
def batch_flatten(attrs: dict, data):
    """Flatten every axis but the first: (N, ...) -> (N, prod(...))."""
    return data.reshape(data.shape[0], -1)


# --- data movement -------------------------------------------------------------------------


def _with_defaults(op_class, attrs: dict) -> dict:
    """`attrs` with Relay's defaults of `op_class` filled in (kernels may be given fewer keys)."""
    return {**op_class.python_attrs({}), **attrs}


@kernel(nn.ConcatenateOp)
def concatenate(attrs: dict, *data):
    """``np.concatenate`` along ``axis``."""
    return np.concatenate(data, axis=int(attrs.get("axis", 0)))


@kernel(nn.SplitOp)
def split(attrs: dict, data):
    """The pieces between the split indices along ``axis``: a tuple, one array per result."""
    axis, bounds = split_bounds(data.shape, _with_defaults(nn.SplitOp, attrs))
    index = [slice(None)] * data.ndim
    pieces = []
    for lo, hi in zip(bounds, bounds[1:]):
        index[axis] = slice(lo, hi)
        pieces.append(np.ascontiguousarray(data[tuple(index)]))
    return tuple(pieces)


@kernel(nn.StridedSliceOp)
def strided_slice(attrs: dict, data):
    """``data[begin:end:stride]`` on the sliced axes, with Python's slice rules (as Relay)."""
    ranges = slice_ranges(data.shape, _with_defaults(nn.StridedSliceOp, attrs))
    # A negative stop would count from the end again: the slice that runs down past index 0 has none.
    index = tuple(slice(start, stop if stop >= 0 else None, step) for start, stop, step in ranges)
    return np.ascontiguousarray(data[index])


@kernel(nn.TakeOp)
def take(attrs: dict, data, indices):
    """``np.take`` along ``axis`` (None: the flattened data). Mode clip clamps indices into
    [0, n - 1], wrap takes them modulo n, fast requires them in range."""
    axis, mode = attrs.get("axis"), attrs.get("mode", "clip")
    if axis is None:
        data, axis = data.reshape(-1), 0
    axis = normalize_axis(int(axis), data.ndim, "nn.take")
    n = data.shape[axis]
    indices = np.asarray(indices, dtype=np.int64)
    if mode == "clip":
        indices = np.clip(indices, 0, n - 1)
    elif mode == "wrap":
        indices = np.mod(indices, n)
    elif np.any((indices < 0) | (indices >= n)):
        raise ValueError(f"nn.take: mode 'fast' with indices outside [0, {n})")
    return np.take(data, indices, axis=axis)


@kernel(nn.PadOp)
def pad(attrs: dict, data):
    """``np.pad`` with the (before, after) widths per axis: constant ``pad_value``, reflect or edge."""
    a = _with_defaults(nn.PadOp, attrs)
    pairs = pad_pairs(data.shape, a)
    if a["pad_mode"] == "constant":
        return np.pad(data, pairs, mode="constant", constant_values=np.array(a["pad_value"]).astype(data.dtype))
    return np.pad(data, pairs, mode=a["pad_mode"])


@kernel(nn.BroadcastToOp)
def broadcast_to(attrs: dict, data):
    """``np.broadcast_to(data, shape)``, materialised."""
    return np.ascontiguousarray(np.broadcast_to(data, tuple(attrs["shape"])))


@kernel(nn.SqueezeOp)
def squeeze(attrs: dict, data):
    """Drop the listed size-1 axes (None: every size-1 axis)."""
    axes = squeeze_axes(data.shape, {"axis": attrs.get("axis")})
    return data.reshape([n for i, n in enumerate(data.shape) if i not in axes])


@kernel(nn.ScatterNDOp)
def scatter_nd(attrs: dict, data, indices, updates):
    """A copy of ``data`` with each ``updates[y]`` written (or added) at ``indices[:, y]``, in order."""
    out = np.array(data, copy=True)
    positions = indices.reshape(indices.shape[0], -1).T
    values = updates.reshape((positions.shape[0],) + data.shape[indices.shape[0]:])
    for position, value in zip(positions, values):
        if attrs.get("mode", "update") == "add":
            out[tuple(position)] += value
        else:
            out[tuple(position)] = value
    return out
