"""Reference numpy kernels for every ``nn`` op, keyed by op name in :data:`KERNELS`.

A kernel is ``kernel(attrs, *operands) -> array | tuple[array, ...]``: ``attrs`` is ``op.attrs()``
(plain Python values, Relay defaults filled in; a missing key means the default) and the operands
are numpy arrays. Kernels never write to their operands (constants arrive as read-only views) and
keep the operand dtype (float32 in, float32 out). The interpreter (``xrelay.runtime.interpreter``)
and FoldConstant both evaluate ops through this table.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xrelay.runtime.conv import conv2d
from xrelay.runtime.layout import layout_permutation
from xrelay.runtime.pool import avg_pool2d, global_avg_pool2d, max_pool2d

Kernel = Callable[..., "np.ndarray | tuple[np.ndarray, ...]"]


def _axis(axis: int, ndim: int, what: str) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} out of range for a {ndim}-D input")
    return axis % ndim


def _along(vec: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """Reshape a 1-D per-channel vector so it broadcasts along ``axis`` of an ``ndim``-D array."""
    shape = [1] * ndim
    shape[axis] = vec.shape[0]
    return vec.reshape(shape)


def batch_norm(attrs: dict, data, gamma, beta, moving_mean, moving_var):
    """Inference batch norm: (out, moving_mean, moving_var), as Relay's three results."""
    axis = _axis(int(attrs.get("axis", 1)), data.ndim, "nn.batch_norm")
    channels = data.shape[axis]
    for name, vec in (("gamma", gamma), ("beta", beta), ("moving_mean", moving_mean), ("moving_var", moving_var)):
        if vec.shape != (channels,):
            raise ValueError(
                f"nn.batch_norm: {name} has shape {vec.shape}, expected ({channels},) for data {data.shape}"
            )
    eps = float(attrs.get("epsilon", 1e-5))
    inv_std = 1.0 / np.sqrt(moving_var.astype(np.float64) + eps)
    scale = inv_std * gamma if attrs.get("scale", True) else inv_std
    shift = -moving_mean * scale
    if attrs.get("center", True):
        shift = shift + beta
    scale = _along(scale.astype(data.dtype), axis, data.ndim)
    shift = _along(shift.astype(data.dtype), axis, data.ndim)
    return data * scale + shift, moving_mean, moving_var


def dense(attrs: dict, data, weight):
    """``data [..., K] @ weight[N, K].T``."""
    if weight.ndim != 2 or data.shape[-1] != weight.shape[1]:
        raise ValueError(f"nn.dense: data {data.shape} and weight {weight.shape} do not agree on K")
    return np.matmul(data, weight.T).astype(data.dtype, copy=False)


def bias_add(attrs: dict, data, bias):
    """Add a 1-D bias along ``axis`` (negative counts from the end)."""
    axis = _axis(int(attrs.get("axis", 1)), data.ndim, "nn.bias_add")
    if bias.shape != (data.shape[axis],):
        raise ValueError(f"nn.bias_add: bias {bias.shape} does not match axis {axis} of data {data.shape}")
    return (data + _along(bias, axis, data.ndim)).astype(data.dtype, copy=False)


def softmax(attrs: dict, data):
    """Numerically stable softmax along ``axis`` (the maximum is subtracted first)."""
    axis = _axis(int(attrs.get("axis", -1)), data.ndim, "nn.softmax")
    shifted = np.exp(data - data.max(axis=axis, keepdims=True))
    return (shifted / shifted.sum(axis=axis, keepdims=True)).astype(data.dtype, copy=False)


def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray], name: str) -> Kernel:
    def kernel(attrs: dict, lhs, rhs):
        try:
            out = fn(lhs, rhs)
        except ValueError as err:
            raise ValueError(f"{name}: shapes {lhs.shape} and {rhs.shape} do not broadcast") from err
        return np.asarray(out).astype(np.result_type(lhs.dtype, rhs.dtype), copy=False)

    kernel.__doc__ = f"``{name}`` with numpy broadcasting."
    return kernel


def _divide(lhs, rhs):
    if np.issubdtype(lhs.dtype, np.integer) and np.issubdtype(rhs.dtype, np.integer):
        # Relay's integer division truncates toward zero, like C.
        quotient = np.abs(lhs) // np.abs(rhs)
        return np.where((lhs < 0) != (rhs < 0), -quotient, quotient)
    return np.divide(lhs, rhs)


def relu(attrs: dict, data):
    """``max(data, 0)``."""
    return np.maximum(data, data.dtype.type(0))


def sqrt(attrs: dict, data):
    """Elementwise square root."""
    return np.sqrt(data)


def negative(attrs: dict, data):
    """Elementwise negation."""
    return np.negative(data)


def expand_dims(attrs: dict, data):
    """Insert ``num_newaxis`` size-1 axes at ``axis`` (negative: counted from the end, as Relay)."""
    axis = int(attrs["axis"])
    num = int(attrs.get("num_newaxis", 1))
    if not -data.ndim - 1 <= axis <= data.ndim or num < 0:
        raise ValueError(f"nn.expand_dims: axis {axis} / num_newaxis {num} invalid for shape {data.shape}")
    if axis < 0:
        axis += data.ndim + 1
    return data.reshape(data.shape[:axis] + (1,) * num + data.shape[axis:])


def reshape_target(shape: tuple[int, ...], newshape: tuple[int, ...]) -> tuple[int, ...]:
    """Resolve Relay's reshape codes: 0 copy, -1 infer, -2 copy the rest, -3 merge two, -4 split one."""
    out: list[int] = []
    src = 0
    infer_at = None
    codes = list(newshape)
    i = 0
    while i < len(codes):
        code = int(codes[i])
        if code > 0:
            out.append(code)
            src += 1
        elif code == 0:
            out.append(shape[src])
            src += 1
        elif code == -1:
            if infer_at is not None:
                raise ValueError(f"nn.reshape: more than one -1 in {newshape}")
            infer_at = len(out)
            out.append(1)
            src += 1
        elif code == -2:
            out.extend(shape[src:])
            src = len(shape)
        elif code == -3:
            out.append(shape[src] * shape[src + 1])
            src += 2
        elif code == -4:
            a, b = int(codes[i + 1]), int(codes[i + 2])
            if a == -1:
                a = shape[src] // b
            elif b == -1:
                b = shape[src] // a
            out.extend((a, b))
            src += 1
            i += 2
        else:
            raise ValueError(f"nn.reshape: unknown code {code} in {newshape}")
        i += 1
    total = int(np.prod(shape, dtype=np.int64))
    if infer_at is not None:
        known = int(np.prod(out, dtype=np.int64))
        if known == 0 or total % known:
            raise ValueError(f"nn.reshape: cannot infer -1 reshaping {shape} to {newshape}")
        out[infer_at] = total // known
    if int(np.prod(out, dtype=np.int64)) != total:
        raise ValueError(f"nn.reshape: {shape} has {total} elements, {newshape} gives {tuple(out)}")
    return tuple(out)


def reshape(attrs: dict, data):
    """Reshape to ``newshape`` with Relay's special codes (see :func:`reshape_target`)."""
    try:
        target = reshape_target(data.shape, tuple(attrs["newshape"]))
    except IndexError as err:
        raise ValueError(f"nn.reshape: newshape {tuple(attrs['newshape'])} refers past shape {data.shape}") from err
    return data.reshape(target)


def transpose(attrs: dict, data):
    """Permute axes (``axes=None`` reverses them; negative axes allowed)."""
    axes = attrs.get("axes")
    if axes is None:
        return np.ascontiguousarray(data.transpose())
    axes = tuple(_axis(int(a), data.ndim, "nn.transpose") for a in axes)
    if sorted(axes) != list(range(data.ndim)):
        raise ValueError(f"nn.transpose: axes {tuple(attrs['axes'])} are not a permutation for shape {data.shape}")
    return np.ascontiguousarray(data.transpose(axes))


def layout_transform(attrs: dict, data):
    """Transpose between two layouts spelled with the same letters (NCHW -> NHWC, OIHW -> HWIO, ...)."""
    src, dst = attrs["src_layout"], attrs["dst_layout"]
    if len(src) != data.ndim:
        raise ValueError(f"nn.layout_transform: layout {src!r} does not fit a {data.ndim}-D input {data.shape}")
    return np.ascontiguousarray(data.transpose(layout_permutation(src, dst)))


def batch_flatten(attrs: dict, data):
    """Flatten every axis but the first: (N, ...) -> (N, prod(...))."""
    return data.reshape(data.shape[0], -1)


def constant(attrs: dict):
    """The constant's value as an array (``attrs["value"]`` is an array or a dense elements attribute)."""
    value = attrs["value"]
    if isinstance(value, np.ndarray):
        return value
    from xrelay.dialects.constant import attr_numpy

    return attr_numpy(value)


KERNELS: dict[str, Kernel] = {
    "nn.conv2d": conv2d,
    "nn.batch_norm": batch_norm,
    "nn.relu": relu,
    "nn.max_pool2d": max_pool2d,
    "nn.avg_pool2d": avg_pool2d,
    "nn.global_avg_pool2d": global_avg_pool2d,
    "nn.batch_flatten": batch_flatten,
    "nn.dense": dense,
    "nn.bias_add": bias_add,
    "nn.softmax": softmax,
    "nn.add": _binary(np.add, "nn.add"),
    "nn.subtract": _binary(np.subtract, "nn.subtract"),
    "nn.multiply": _binary(np.multiply, "nn.multiply"),
    "nn.divide": _binary(_divide, "nn.divide"),
    "nn.sqrt": sqrt,
    "nn.negative": negative,
    "nn.expand_dims": expand_dims,
    "nn.reshape": reshape,
    "nn.transpose": transpose,
    "nn.layout_transform": layout_transform,
    "nn.constant": constant,
}
"""Op name -> numpy kernel, for every op of the ``nn`` dialect contract (dialects/README.md)."""
