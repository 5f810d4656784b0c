"""A convolution's Python epilogue (a `RowTail`'s ufunc calls, then maybe a copy into a pad's interior)
as the `NativeEpilogue` the compiled convolution kernels take (`runtime/native/conv_kernels.py`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xrelay.runtime.native.conv_kernels import EpilogueOp, NativeEpilogue
from xrelay.runtime.native.window_kernels import chain_ops


def native_epilogue(epilogue: Callable[[int, int], None], rows: Callable | None, copy: np.ndarray | None,
                    out: np.ndarray, out_axes: tuple[int, int, int, int]):
    """`epilogue` (which runs `rows`, a `RowTail`'s, if not None, then copies the rows into `copy` if
    not None) as a `NativeEpilogue` for the native convolution kernels (`runtime/native/conv_kernels.py`),
    whose values are the convolution's `out`; `epilogue` itself when it is not one the kernels can
    apply: a chain of ufunc calls from `out` (`window_kernels.chain_ops`) ending in a view of its shape."""
    calls = getattr(rows, "calls", None) if rows is not None else []
    if calls is None:
        return epilogue
    parsed = chain_ops([(ufunc, [a for a, _ in args], written) for ufunc, args, written in calls], out)
    if parsed is None or parsed[2].shape != out.shape:
        return epilogue
    ops = []
    for ufunc, other, reversed, save in parsed[1]:
        if isinstance(other, np.ndarray):
            if other.dtype != np.float32 or other.ndim != out.ndim:
                return epilogue
            other = np.broadcast_to(other, out.shape).transpose(out_axes).transpose(0, 2, 3, 1)
        ops.append(EpilogueOp(ufunc, other, reversed, save))
    return NativeEpilogue(epilogue, ops, parsed[2].transpose(out_axes),
                          copy.transpose(out_axes) if copy is not None else None)
