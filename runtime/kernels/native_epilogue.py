"""A convolution's Python epilogue (a `RowTail`'s ufunc calls, then maybe a copy into a pad's interior)
as the `NativeEpilogue` the compiled convolution kernels take (`runtime/native/conv_kernels.py`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xrelay.runtime.native.conv_kernels import KINDS, EpilogueOp, NativeEpilogue
from xrelay.runtime.native.window_kernels import same_view


def native_epilogue(epilogue: Callable[[int, int], None], rows: Callable | None, copy: np.ndarray | None,
                    out: np.ndarray, out_axes: tuple[int, int, int, int]):
    """`epilogue` (which runs `rows`, a `RowTail`'s, if not None, then copies the rows into `copy` if
    not None) as a `NativeEpilogue` for the native Winograd kernel (`runtime/native/conv_kernels.py`),
    whose values are the convolution's `out`; `epilogue` itself when it is not one the kernel can
    apply: every member one binary ufunc of the value before it and one other operand, all but the
    last writing in place into `out`, the last into `out` or a view of its shape."""
    ops, target = [], out
    for index, (ufunc, args, written) in enumerate(getattr(rows, "calls", None) or [] if rows else []):
        if ufunc not in KINDS or len(args) != 2:
            return epilogue
        value = [i for i, (array, _) in enumerate(args) if same_view(array, target)]
        if len(value) != 1 or (written is not out and not same_view(written, out)
                               and index < len(rows.calls) - 1) or written.shape != out.shape:
            return epilogue
        other = args[1 - value[0]][0]
        if isinstance(other, np.ndarray) and other.ndim:
            if other.dtype != np.float32 or other.ndim != out.ndim:
                return epilogue
            other = np.broadcast_to(other, out.shape).transpose(out_axes).transpose(0, 2, 3, 1)
        else:
            other = float(other)
        ops.append(EpilogueOp(ufunc, other, reversed=value[0] == 1))
        target = written
    if rows is not None and getattr(rows, "calls", None) is None:
        return epilogue
    return NativeEpilogue(epilogue, ops, target.transpose(out_axes),
                          copy.transpose(out_axes) if copy is not None else None)
