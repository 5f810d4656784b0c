"""Kernels of the normalisation ops (dialects/ops/norm.py)."""

from __future__ import annotations

import numpy as np

from xrelay.dialects import nn
from xrelay.dialects.infer import normalize_axis
from xrelay.dialects.ops.norm import lrn_window
from xrelay.runtime.reference.nn_kernels.base import along_axis, kernel


@kernel(nn.BatchNormOp)
def batch_norm(attrs: dict, data, gamma, beta, moving_mean, moving_var):
    """Inference batch norm: (out, moving_mean, moving_var), as Relay's three results."""
    axis = normalize_axis(int(attrs.get("axis", 1)), data.ndim, "nn.batch_norm")
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
    scale = along_axis(scale.astype(data.dtype), axis, data.ndim)
    shift = along_axis(shift.astype(data.dtype), axis, data.ndim)
    return data * scale + shift, moving_mean, moving_var


@kernel(nn.SoftmaxOp)
def softmax(attrs: dict, data):
    """Numerically stable softmax along ``axis`` (the maximum is subtracted first)."""
    axis = normalize_axis(int(attrs.get("axis", -1)), data.ndim, "nn.softmax")
    shifted = np.exp(data - data.max(axis=axis, keepdims=True))
    return (shifted / shifted.sum(axis=axis, keepdims=True)).astype(data.dtype, copy=False)


@kernel(nn.LogSoftmaxOp)
def log_softmax(attrs: dict, data):
    """``x - max - log(sum(exp(x - max)))`` along ``axis``."""
    axis = normalize_axis(int(attrs.get("axis", -1)), data.ndim, "nn.log_softmax")
    shifted = data - data.max(axis=axis, keepdims=True)
    return (shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))).astype(data.dtype, copy=False)


@kernel(nn.LayerNormOp)
def layer_norm(attrs: dict, data, gamma, beta):
    """Normalise along ``axis`` (statistics in float64), then scale by gamma and shift by beta."""
    axis = normalize_axis(int(attrs.get("axis", -1)), data.ndim, "nn.layer_norm")
    x = data.astype(np.float64)
    centred = x - x.mean(axis=axis, keepdims=True)
    out = centred / np.sqrt(np.mean(centred * centred, axis=axis, keepdims=True) + float(attrs.get("epsilon", 1e-5)))
    if attrs.get("scale", True):
        out *= along_axis(gamma.astype(np.float64), axis, data.ndim)
    if attrs.get("center", True):
        out += along_axis(beta.astype(np.float64), axis, data.ndim)
    return out.astype(data.dtype)


@kernel(nn.LRNOp)
def lrn(attrs: dict, data):
    """``x / (bias + alpha / size * window sum of x^2) ** beta``, the window along ``axis``."""
    axis = normalize_axis(int(attrs.get("axis", 1)), data.ndim, "nn.lrn")
    size = int(attrs.get("size", 5))
    before, after = lrn_window(size)
    pad = [(0, 0)] * data.ndim
    pad[axis] = (before, after)
    squares = np.pad(np.square(data.astype(np.float64)), pad)
    channels = data.shape[axis]
    window = sum(np.take(squares, range(k, k + channels), axis=axis) for k in range(size))
    scaled = float(attrs.get("bias", 2.0)) + float(attrs.get("alpha", 1e-4)) / size * window
    return (data / scaled ** float(attrs.get("beta", 0.75))).astype(data.dtype)
