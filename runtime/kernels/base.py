"""The kernel table: `KERNELS` maps every nn op class to its numpy kernel; `@kernel(OpClass)` registers one.

A kernel is ``kernel(attrs, *operands) -> array | tuple[array, ...]``: ``attrs`` is ``op.attrs()``
(plain Python values, Relay defaults filled in; a missing key means the default) and the operands
are numpy arrays. Kernels never write to their operands (constants arrive as read-only views) and
keep the operand dtype (float32 in, float32 out). The interpreter (``xrelay.runtime.interpreter``)
and FoldConstant both evaluate ops through this table.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import Operation

from xrelay.dialects import nn

Kernel = Callable[..., "np.ndarray | tuple[np.ndarray, ...]"]

KERNELS: dict[type[Operation], Kernel] = {}
"""nn op class -> numpy kernel, for every registered nn op (tests/test_op_coverage.py checks)."""


def kernel(*op_classes: type[Operation]) -> Callable[[Kernel], Kernel]:
    """Register the decorated function as the kernel of `op_classes`."""

    def register(fn: Kernel) -> Kernel:
        for op_class in op_classes:
            if op_class in KERNELS:
                raise ValueError(f"{op_class.name} has two kernels")
            KERNELS[op_class] = fn
        return fn

    return register



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
