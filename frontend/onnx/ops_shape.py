"""Shape and data-movement ops.

Shapes are static in xrelay, so `Shape` is always known at import and the `Shape -> Gather ->
Unsqueeze -> Concat -> Reshape` chains that exporters write fold to a constant target shape
(`fold.py` evaluates them).
"""

from __future__ import annotations

import math

import numpy as np
import onnx

from xrelay.frontend.onnx.registry import as_int_list, converter

# --- helpers shared with the other families -------------------------------------------------------


def normalise_axis(node, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    return axis % rank


def axes_of(node, rank: int, input_index: int = 1, attr_from: int = 13) -> list[int] | None:
    """Axes given as an attribute (before opset `attr_from`) or as input `input_index`."""
    if node.opset < attr_from:
        axes = node.attr("axes")
    elif node.has(input_index):
        axes = node.required_static(input_index, "axes")
    else:
        axes = None
    if axes is None:
        return None
    return sorted(normalise_axis(node, a, rank) for a in as_int_list(axes))


def reshape_to(node, value, shape):
    shape = tuple(int(d) for d in shape)
    if tuple(value.type.get_shape()) == shape:
        return value
    return node.emit("nn.reshape", value, newshape=shape)


def reshape_target(node, in_shape, target, allowzero=False) -> tuple[int, ...]:
    """ONNX Reshape's target with 0 (copy the input's dim) and -1 (infer) resolved."""
    out = [int(d) for d in target]
    for i, d in enumerate(out):
        if d == 0 and not allowzero:
            if i >= len(in_shape):
                raise node.error(f"shape {tuple(target)} copies dimension {i}, which the input {in_shape} lacks")
            out[i] = in_shape[i]
    if out.count(-1) > 1:
        raise node.error(f"shape {tuple(target)} has more than one -1")
    total = math.prod(in_shape)
    if -1 in out:
        rest = math.prod(d for d in out if d != -1)
        if rest == 0 or total % rest:
            raise node.error(f"cannot reshape {in_shape} to {tuple(target)}")
        out[out.index(-1)] = total // rest
    if math.prod(out) != total:
        raise node.error(f"cannot reshape {in_shape} ({total} elements) to {tuple(out)}")
    return tuple(out)


def squeezed(node, shape, axes) -> tuple[int, ...]:
    axes = [i for i, d in enumerate(shape) if d == 1] if axes is None else axes
    for a in axes:
        if shape[a] != 1:
            raise node.error(f"cannot squeeze axis {a} of shape {shape}: it is not 1")
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def unsqueezed(node, shape, axes) -> tuple[int, ...]:
    rank = len(shape) + len(axes)
    axes = sorted(normalise_axis(node, a, rank) for a in axes)
    out, it = [], iter(shape)
    for i in range(rank):
        out.append(1 if i in axes else next(it))
    return tuple(out)


def _unsqueeze_axes(node):
    axes = node.attr("axes") if node.opset < 13 else node.required_static(1, "axes")
    return as_int_list(axes)


def split_sizes(node, dim: int) -> list[int]:
    if node.opset < 13 and node.attr("split") is not None:
        sizes = as_int_list(node.attr("split"))
    elif node.opset >= 13 and node.has(1):
        sizes = as_int_list(node.required_static(1, "split"))
    else:
        parts = node.attr("num_outputs", len(node.outputs))
        chunk = -(-dim // parts)
        sizes = [min(chunk, dim - i * chunk) for i in range(parts)]
    if sum(sizes) != dim:
        raise node.error(f"split sizes {sizes} do not add up to the axis length {dim}")
    return sizes


def slice_params(node, shape):
    """ONNX Slice's (starts, ends, axes, steps), from attributes (opset < 10) or inputs."""
    if node.opset < 10:
        starts, ends = node.attr("starts"), node.attr("ends")
        axes = node.attr("axes", list(range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts = as_int_list(node.required_static(1, "starts"))
        ends = as_int_list(node.required_static(2, "ends"))
        axes = as_int_list(node.required_static(3, "axes")) if node.has(3) else list(range(len(starts)))
        steps = as_int_list(node.required_static(4, "steps")) if node.has(4) else [1] * len(starts)
    rank = len(shape)
    slices = [slice(None)] * rank
    for start, end, axis, step in zip(starts, ends, axes, steps):
        axis = normalise_axis(node, int(axis), rank)
        if step == 0:
            raise node.error("a slice step of 0")
        # ONNX clamps like Python slicing; INT64_MAX/INT64_MIN mean "to the end".
        slices[axis] = slice(*slice(int(start), int(end), int(step)).indices(shape[axis]))
    return slices


def pad_params(node, rank):
    if node.opset < 11:
        pads = node.attr("pads", node.attr("paddings"))
        value = float(node.attr("value", 0.0))
        axes = list(range(rank))
    else:
        pads = as_int_list(node.required_static(1, "pads"))
        value = float(node.static(2).reshape(-1)[0]) if node.has(2) else 0.0
        axes = [normalise_axis(node, a, rank) for a in as_int_list(node.required_static(3, "axes"))] \
            if node.has(3) else list(range(rank))
    pads = as_int_list(pads)
    widths = [[0, 0] for _ in range(rank)]
    for i, axis in enumerate(axes):
        widths[axis] = [pads[i], pads[i + len(axes)]]
    mode = node.attr("mode", "constant")
    if mode not in ("constant", "reflect", "edge"):
        raise node.error(f"pad mode '{mode}' is not supported (constant, reflect, edge)")
    return widths, value, mode


# --- converters ------------------------------------------------------------------------------------


@converter("Shape")
def shape(node):
    dims = np.asarray(node.shape(0), dtype=np.int64)
    start, end = node.attr("start", 0), node.attr("end", len(dims))
    return dims[start:end]


@converter("Size")
def size(node):
    return np.asarray(math.prod(node.shape(0)), dtype=np.int64)


@converter("Identity", "Dropout")
def identity(node):
    # Dropout's mask output stays None: using it is an error (inference computes no mask).
    return [node.value(0)] + [None] * (len(node.outputs) - 1)


@converter("Cast")
def cast(node):
    target = onnx.helper.tensor_dtype_to_np_dtype(node.attr("to"))
    if target != node.dtype(0):
        raise node.error(f"casting a run-time {node.dtype(0)} tensor to {target} is not supported")
    return node.value(0)


@converter("Reshape", needs=("nn.reshape",))
def reshape(node):
    target = node.attr("shape") if node.opset < 5 else node.required_static(1, "the target shape")
    out = reshape_target(node, node.shape(0), as_int_list(target), bool(node.attr("allowzero", 0)))
    return reshape_to(node, node.value(0), out)


@converter("Flatten", needs=("nn.reshape",))
def flatten(node):
    shape_ = node.shape(0)
    axis = normalise_axis(node, node.attr("axis", 1), len(shape_) + 1)
    return reshape_to(node, node.value(0), (math.prod(shape_[:axis]), math.prod(shape_[axis:])))


@converter("Squeeze", needs=("nn.reshape",))
def squeeze(node):
    shape_ = node.shape(0)
    return reshape_to(node, node.value(0), squeezed(node, shape_, axes_of(node, len(shape_))))


@converter("Unsqueeze", needs=("nn.expand_dims", "nn.reshape"))
def unsqueeze(node):
    shape_ = node.shape(0)
    axes = _unsqueeze_axes(node)
    rank = len(shape_) + len(axes)
    new_axes = sorted(normalise_axis(node, a, rank) for a in axes)
    if new_axes == list(range(new_axes[0], new_axes[0] + len(new_axes))):
        # One run of new axes: Relay's expand_dims, which FoldScaleAxis and ConvertLayout know.
        return node.emit("nn.expand_dims", node.value(0), axis=new_axes[0], num_newaxis=len(new_axes))
    return reshape_to(node, node.value(0), unsqueezed(node, shape_, axes))


@converter("Transpose", needs=("nn.transpose",))
def transpose(node):
    perm = node.attr("perm")
    rank = len(node.shape(0))
    perm = tuple(perm) if perm is not None else tuple(reversed(range(rank)))
    if perm == tuple(range(rank)):
        return node.value(0)
    return node.emit("nn.transpose", node.value(0), axes=perm)


@converter("Concat", needs=("nn.concatenate",))
def concat(node):
    values = [node.value(i) for i in range(len(node.inputs)) if node.has(i)]
    rank = len(node.shape(0))
    axis = normalise_axis(node, node.attr("axis", 1 if node.opset < 4 else None), rank)
    if len(values) == 1:
        return values[0]
    return node.emit("nn.concatenate", *values, axis=axis)


@converter("Split", needs=("nn.split",))
def split(node):
    shape_ = node.shape(0)
    axis = normalise_axis(node, node.attr("axis", 0), len(shape_))
    sizes = split_sizes(node, shape_[axis])
    if len(sizes) == 1:
        return node.value(0)
    indices = list(np.cumsum(sizes)[:-1])
    return list(node.emit_op("nn.split", node.value(0), indices_or_sections=indices, axis=axis).results)


@converter("Slice", needs=("nn.strided_slice",))
def slice_(node):
    shape_ = node.shape(0)
    slices = slice_params(node, shape_)
    if any(s.step < 0 for s in slices if s.step is not None):
        raise node.error("Slice with a negative step is not supported")
    axes = [i for i, s in enumerate(slices) if s != slice(None) and s != slice(0, shape_[i], 1)]
    if not axes:
        return node.value(0)
    return node.emit("nn.strided_slice", node.value(0), begin=[slices[a].start for a in axes],
                     end=[max(slices[a].stop, slices[a].start) for a in axes],
                     strides=[slices[a].step for a in axes], axes=axes)


@converter("Gather", needs=("nn.take",))
def gather(node):
    shape_ = node.shape(0)
    axis = normalise_axis(node, node.attr("axis", 0), len(shape_))
    indices = node.static(1)
    if indices is not None:
        indices = np.where(indices < 0, indices + shape_[axis], indices).astype(np.int64)
        return node.emit("nn.take", node.value(0), node.constant(indices), axis=axis)
    return node.emit("nn.take", node.value(0), node.value(1), axis=axis)


@converter("Pad", needs=("nn.pad",))
def pad(node):
    widths, value, mode = pad_params(node, len(node.shape(0)))
    if any(w < 0 for pair in widths for w in pair):
        raise node.error("negative pads (cropping) are not supported")
    if not any(w for pair in widths for w in pair):
        return node.value(0)
    return node.emit("nn.pad", node.value(0), pad_width=[w for pair in widths for w in pair],
                     pad_value=value, pad_mode=mode)


@converter("Expand", needs=("nn.broadcast_to",))
def expand(node):
    target = as_int_list(node.required_static(1, "the target shape"))
    out = tuple(np.broadcast_shapes(node.shape(0), tuple(target)))
    if out == node.shape(0):
        return node.value(0)
    return node.emit("nn.broadcast_to", node.value(0), shape=out)


@converter("Tile", needs=("nn.broadcast_to", "nn.reshape"))
def tile(node):
    """tile(x, r) = reshape(broadcast_to(reshape(x, [1, d0, 1, d1, ...]), [r0, d0, r1, d1, ...]))."""
    shape_ = node.shape(0)
    reps = as_int_list(node.required_static(1, "repeats"))
    if all(r == 1 for r in reps):
        return node.value(0)
    spread = reshape_to(node, node.value(0), [v for d in shape_ for v in (1, d)])
    wide = node.emit("nn.broadcast_to", spread, shape=[v for r, d in zip(reps, shape_) for v in (r, d)])
    return reshape_to(node, wide, [r * d for r, d in zip(reps, shape_)])


@converter("ScatterND", needs=("nn.scatter_nd", "nn.transpose"))
def scatter_nd(node):
    reduction = node.attr("reduction", "none")
    if reduction not in ("none", "add"):
        raise node.error(f"reduction '{reduction}' is not supported (none, add)")
    data, updates = node.values_alike(0, 2)
    # ONNX puts each position's coordinates last, Relay's scatter_nd first.
    rank = len(node.shape(1))
    known = node.static(1)
    if known is not None:
        indices = node.constant(np.moveaxis(known.astype(np.int64), -1, 0))
    else:
        indices = node.emit("nn.transpose", node.value(1), axes=(rank - 1,) + tuple(range(rank - 1)))
    return node.emit("nn.scatter_nd", data, indices, updates, mode="add" if reduction == "add" else "update")
