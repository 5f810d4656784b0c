"""A convolution's Python epilogue (a `RowTail`'s ufunc calls, then maybe a copy into a pad's interior)
as the `NativeEpilogue` the compiled convolution kernels take (`runtime/native/conv_kernels.py`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xrelay.runtime.native.conv_kernels import EpilogueOp, NativeEpilogue
from xrelay.runtime.native.window_kernels import chain_ops


def native_epilogue(epilogue: Callable[[int, int], None], rows: Callable | None, copy: np.ndarray | None,
                    out: np.ndarray, as_nchw: Callable[[np.ndarray], np.ndarray | None]):
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
            other = as_nchw(np.broadcast_to(other, out.shape))
            if other is None:
                return epilogue
            other = other.transpose(0, 2, 3, 1)
        ops.append(EpilogueOp(ufunc, other, reversed, save))
    final, copied = as_nchw(parsed[2]), as_nchw(copy) if copy is not None else None
    if final is None or (copy is not None and copied is None):
        return epilogue
    return NativeEpilogue(epilogue, ops, final, copied)
