"""A scalar operand of `np.maximum`/`np.minimum` given as a contiguous array of the result's shape.

numpy 2.4's float `maximum`/`minimum` loops are vectorized for two arrays but not for an array and
a scalar (or a stride-0 broadcast): a ReLU `np.maximum(x, 0, out=x)` over ShuffleNet's 28x28x136
activation takes 42-44 us where `np.maximum(x, zeros, out=x)` takes 15-17 us (add and multiply
are as fast with a scalar as with an array). So an elementwise op whose one ufunc is an extremum of
an operand and a constant (`linalg_structured._one_ufunc_program`: every ReLU and clip) reads the
constant from `filled(value, shape, dtype)`: a read-only view of one zero-strided-free buffer per
(value, dtype), shared by every op and grown to the largest shape asked for.
"""

from __future__ import annotations

import numpy as np

FILLED_EXTREMA = True
"""Whether a scalar operand of maximum/minimum is passed as a filled array (off: as the scalar, for
A/B runs; read when an op's call binds its arguments)."""
EXTREMA = (np.maximum, np.minimum, np.fmax, np.fmin)
MIN_POINTS = 256
"""Below this many points the scalar stays (the call's overhead dominates, no memory spent)."""

_buffers: dict[tuple, np.ndarray] = {}


def filled(value, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A read-only C-contiguous array of `shape` whose every element is `value` as `dtype`."""
    size = int(np.prod(shape, dtype=np.int64))
    key = (np.dtype(dtype).str, np.asarray(value, dtype=dtype).tobytes())
    buffer = _buffers.get(key)
    if buffer is None or buffer.size < size:
        buffer = np.full(max(size, 1), value, dtype=dtype)
        buffer.setflags(write=False)
        _buffers[key] = buffer
    return buffer[:size].reshape(shape)


def fill_scalars(ufunc: np.ufunc, args: list, out: np.ndarray) -> list:
    """`args` with each scalar replaced by `filled` of `out`'s shape when `ufunc` is an extremum of
    one array of `out`'s dtype and one float scalar (see the module docstring), else `args`."""
    if not (FILLED_EXTREMA and ufunc in EXTREMA and len(args) == 2 and out.size >= MIN_POINTS
            and out.dtype.kind == "f"):
        return args
    arrays = [a for a in args if isinstance(a, np.ndarray) and a.ndim > 0]
    if len(arrays) != 1 or arrays[0].dtype != out.dtype:
        return args
    return [filled(a, out.shape, out.dtype) if not (isinstance(a, np.ndarray) and a.ndim > 0) else a for a in args]
