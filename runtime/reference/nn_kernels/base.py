"""The kernel table: `KERNELS` maps every nn op class to its numpy kernel; `@kernel(OpClass)` registers one.

A kernel is ``kernel(attrs, *operands) -> array | tuple[array, ...]``: ``attrs`` is ``op.attrs()``
(Relay defaults filled in), the operands numpy arrays it never writes; it keeps the operand dtype.
The interpreter and FoldConstant both evaluate ops through this table."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation

from xrelay.dialects import nn
from xrelay.dialects.op_base import OpTable

Kernel = Callable[..., "np.ndarray | tuple[np.ndarray, ...]"]

KERNELS: dict[type[Operation], Kernel] = OpTable("kernel")
"""nn op class -> numpy kernel, for every registered nn op (tests/test_op_coverage.py checks)."""

kernel = KERNELS.register
"""`@kernel(nn.XOp)`: register the decorated function as the kernel of the op classes given."""



def along_axis(vec: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """Reshape a 1-D per-channel vector so it broadcasts along ``axis`` of an ``ndim``-D array."""
    shape = [1] * ndim
    shape[axis] = vec.shape[0]
    return vec.reshape(shape)


@kernel(nn.ConstantOp)
def constant(attrs: dict):
    """The constant's value as an array (``attrs["value"]`` is an array or a dense elements attribute)."""
    value = attrs["value"]
    if isinstance(value, np.ndarray):
        return value
    from xrelay.dialects.constant import attr_numpy

    return attr_numpy(value)
