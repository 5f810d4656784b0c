"""Kernels of the normalisation ops (dialects/ops/norm.py)."""

from __future__ import annotations

import numpy as np

from xrelay.dialects import nn
from xrelay.runtime.kernels.base import along_axis, check_axis, kernel


@kernel(nn.BatchNormOp)
def batch_norm(attrs: dict, data, gamma, beta, moving_mean, moving_var):
    """Inference batch norm: (out, moving_mean, moving_var), as Relay's three results."""
    axis = check_axis(int(attrs.get("axis", 1)), data.ndim, "nn.batch_norm")
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
    axis = check_axis(int(attrs.get("axis", -1)), data.ndim, "nn.softmax")
    shifted = np.exp(data - data.max(axis=axis, keepdims=True))
    return (shifted / shifted.sum(axis=axis, keepdims=True)).astype(data.dtype, copy=False)
