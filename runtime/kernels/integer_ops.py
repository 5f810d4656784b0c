"""Unsigned semantics of the arith ops upstream's named ops emit (unsigned casts, max and min), for
both numpy executors. An `iN` value is held in a signed numpy dtype: `numpy_fn` reads its bits as
unsigned."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects import arith
from xdsl.ir import Attribute, Operation


def _unsigned(array) -> np.ndarray:
    array = np.asarray(array)
    return array.view(np.dtype(f"u{array.dtype.itemsize}"))


def _signed_like(values: np.ndarray, like) -> np.ndarray:
    return values.view(np.asarray(like).dtype)


def _cast_to(result_type: Attribute, dtype_of: Callable) -> Callable:
    dtype = dtype_of(result_type)
    return lambda x: _unsigned(x).astype(dtype)


def numpy_fn(op: Operation, dtype_of: Callable) -> Callable | None:
    """The numpy function of an unsigned arith op, or None for any other op."""
    if isinstance(op, arith.MaxUIOp):
        return lambda a, b: _signed_like(np.maximum(_unsigned(a), _unsigned(b)), a)
    if isinstance(op, arith.MinUIOp):
        return lambda a, b: _signed_like(np.minimum(_unsigned(a), _unsigned(b)), a)
    if isinstance(op, arith.ExtUIOp | arith.UIToFPOp):
        return _cast_to(op.results[0].type, dtype_of)
    if isinstance(op, arith.FPToUIOp):
        dtype = dtype_of(op.results[0].type)
        return lambda x: np.asarray(x).astype(np.dtype(f"u{dtype.itemsize}")).view(dtype)
    return None
