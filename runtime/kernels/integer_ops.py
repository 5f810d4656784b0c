"""Fixed-width integer semantics of the arith ops upstream's named ops emit (unsigned casts, max and
min, wrapping `addi`/`muli`/`trunci`), for both executors. An `iN` value is held in a signed numpy
dtype (a Python int at the loops level): `numpy_fn` reads its bits as unsigned in bodies,
`loops_source` writes the loops executor's expression where a result must wrap to its width."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType
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


def _wrap(value: int, bits: int) -> int:
    """`value` as a signed `bits`-bit integer."""
    value = int(value) & ((1 << bits) - 1)
    return value - (1 << bits) if value >> (bits - 1) else value


def _bits(value_type: Attribute) -> int | None:
    return value_type.width.data if isinstance(value_type, IntegerType) else None


LOOPS_RUNTIME = {"_wrap": _wrap}

_WRAPPED = {arith.AddiOp: "({} + {})", arith.SubiOp: "({} - {})", arith.MuliOp: "({} * {})", arith.TruncIOp: "{}"}


def loops_source(op: Operation, operands: Sequence[str]) -> str | None:
    """The loops executor's Python expression for `op` on its operands' names, where fixed widths
    matter; None when its ordinary translation is right (index arithmetic, non-integer ops)."""
    result_bits = _bits(op.results[0].type) if len(op.results) == 1 else None
    if type(op) in _WRAPPED and result_bits is not None and result_bits > 1:
        return f"_wrap({_WRAPPED[type(op)].format(*operands)}, {result_bits})"
    source_bits = _bits(op.operands[0].type) if op.operands else None
    if source_bits is None:
        return None
    mask = (1 << source_bits) - 1
    if isinstance(op, arith.ExtUIOp):
        return f"({operands[0]} & {mask})"
    if isinstance(op, arith.UIToFPOp):
        return f"float({operands[0]} & {mask})"
    if isinstance(op, arith.MaxUIOp | arith.MinUIOp):
        pick = max if isinstance(op, arith.MaxUIOp) else min
        return f"({operands[0]} if {pick.__name__}({operands[0]} & {mask}, {operands[1]} & {mask}) " \
               f"== ({operands[0]} & {mask}) else {operands[1]})"
    return None
