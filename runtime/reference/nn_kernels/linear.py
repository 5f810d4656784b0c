"""Kernels of the linear-algebra ops (dialects/ops/linear.py)."""

from __future__ import annotations

import numpy as np

from xrelay.dialects import nn
from xrelay.dialects.infer import normalize_axis
from xrelay.runtime.reference.nn_kernels.base import along_axis, kernel


@kernel(nn.DenseOp)
def dense(attrs: dict, data, weight):
    """``data [..., K] @ weight[N, K].T``."""
    if weight.ndim != 2 or data.shape[-1] != weight.shape[1]:
        raise ValueError(f"nn.dense: data {data.shape} and weight {weight.shape} do not agree on K")
    return np.matmul(data, weight.T).astype(data.dtype, copy=False)


@kernel(nn.BiasAddOp)
def bias_add(attrs: dict, data, bias):
    """Add a 1-D bias along ``axis`` (negative counts from the end)."""
    axis = normalize_axis(int(attrs.get("axis", 1)), data.ndim, "nn.bias_add")
    if bias.shape != (data.shape[axis],):
        raise ValueError(f"nn.bias_add: bias {bias.shape} does not match axis {axis} of data {data.shape}")
    return (data + along_axis(bias, axis, data.ndim)).astype(data.dtype, copy=False)


@kernel(nn.BatchMatmulOp)
def batch_matmul(attrs: dict, x, y):
    """``x @ y`` per batch, y given as [B, N, K] when transpose_b (Relay's default); a batch of 1 broadcasts."""
    if attrs.get("transpose_a", False):
        x = x.transpose(0, 2, 1)
    if attrs.get("transpose_b", True):
        y = y.transpose(0, 2, 1)
    return np.matmul(x, y).astype(np.result_type(x, y), copy=False)
