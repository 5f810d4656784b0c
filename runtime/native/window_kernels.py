"""Pooling windows and elementwise chains compiled from `conv_kernels.c` (`xrelay_window`): one call
per kernel, its epilogue applied to each value before it is stored, its parts claimed by the calling
thread and the C worker pool (no Python between them); and strided copies (`copy_kernels.c`).

`native_window` takes (n, h, w, c) views; `window_views` and `chain_views` make them from what the
numpy kernels hold (a pooling's data and output, a fused tail's ufunc calls over loop-space views).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence

import numpy as np

from xrelay.runtime.native.build import usable_threads
from xrelay.runtime.native.conv_kernels import KINDS, SAVED, UNARY, EpilogueOp, _kernel, _ops, _strides

REDUCTIONS = {np.add: 0, np.maximum: 3, np.minimum: 4}
"""The ufuncs a window may reduce with, by their code in `conv_kernels.c`."""

VECTOR = 256
"""`as_four_axes` merges the vector axis with the one outside it while it is shorter than this."""

WINDOW = Sequence[int]
"""(kh, kw, sh, sw, dh, dw): taps, strides and dilations of the two window axes."""


def native_window(x: np.ndarray, out: np.ndarray, window: WINDOW = (1, 1, 1, 1, 1, 1), reduce: np.ufunc = np.add,
                  accumulate: bool = False, ops: Sequence[EpilogueOp] = (), copy: np.ndarray | None = None
                  ) -> Callable[[int], None] | None:
    """`call(threads)` storing into `out` (and `copy` unless None), both (n, oh, ow, c) views, the
    epilogue `ops` (operands (n, oh, ow, c)) of the `reduce` over each window of `x` (an (n, h, w, c)
    view; with `accumulate`, also over `out`'s value): a 1x1 window makes `out = ops(x)`. None when the
    kernel is unavailable, or an array is not float32 whole-element strides, or a window leaves `x`.
    The call reads the arrays' memory when called: it may be kept while they hold the operands."""
    built = _kernel()
    arrays = [x, out] + ([copy] if copy is not None else [])
    if built is None or reduce not in REDUCTIONS or any(a.ndim != 4 or a.dtype != np.float32 for a in arrays):
        return None
    kh, kw, sh, sw, dh, dw = (int(v) for v in window)
    n, oh, ow, c = out.shape
    if (copy is not None and copy.shape != out.shape) or x.shape[0] < n or x.shape[3] < c or min(kh, kw) < 1 \
            or (oh and (oh - 1) * sh + (kh - 1) * dh >= x.shape[1]) \
            or (ow and (ow - 1) * sw + (kw - 1) * dw >= x.shape[2]):
        return None
    strides = [_strides(a) for a in arrays]
    listed = list(ops)
    op_array = _ops(listed, out.shape)
    if None in strides or op_array is None:
        return None
    i64 = ctypes.c_int64
    four = lambda values: (i64 * 4)(*values)  # noqa: E731
    view = lambda a, s: (ctypes.c_void_p(a.ctypes.data), four(s))  # noqa: E731
    acc = view(out, strides[1]) if accumulate else (None, None)
    target = view(out, strides[1])
    second = view(copy, strides[2]) if copy is not None else (None, None)
    head = (ctypes.c_void_p(x.ctypes.data), four(strides[0]), *(i64(v) for v in (n, oh, ow, c, kh, kw, sh, sw, dh, dw)),
            ctypes.c_int(REDUCTIONS[reduce]), *acc, *target, *second, op_array, ctypes.c_int(len(listed)))
    function = built[0].xrelay_window
    keep = (arrays, listed)

    def call(threads: int, keep=keep) -> None:
        function(*head, ctypes.c_int(usable_threads(max(1, threads))))

    return call


def native_copy(out: np.ndarray, source: np.ndarray) -> Callable[[int], None] | None:
    """`call(threads)` copying `source` into `out`, float32 views of one four-axis shape with any
    whole-element strides (`out`'s dense axis last: `as_four_axes`), or None when the kernel is
    unavailable or the views are other. Like `native_window`'s, the call may be kept."""
    built = _kernel()
    if built is None or out.shape != source.shape or len(out.shape) != 4 \
            or not out.dtype == source.dtype == np.float32:
        return None
    strides = [_strides(out), _strides(source)]
    if None in strides:
        return None
    four = lambda values: (ctypes.c_int64 * 4)(*values)  # noqa: E731
    head = (ctypes.c_void_p(source.ctypes.data), four(strides[1]), ctypes.c_void_p(out.ctypes.data),
            four(strides[0]), four(out.shape))
    function = built[0].xrelay_copy

    def call(threads: int, keep=(out, source)) -> None:
        function(*head, ctypes.c_int(usable_threads(max(1, threads))))

    return call


def as_four_axes(arrays: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """The same-shape `arrays` viewed with four axes, the same for all: the first array's unit-stride
    axis moved last (the kernel's vector loop), neighbouring axes merged where every array's strides
    allow (the last while shorter than `VECTOR`), unit axes put in front. None when more than four
    axes remain."""
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays):
        return None
    axes = [d for d in range(len(shape)) if shape[d] > 1]
    contiguous = [d for d in axes if arrays[0].strides[d] == arrays[0].itemsize]
    if contiguous:
        axes = [d for d in axes if d != contiguous[0]] + [contiguous[0]]
    order = axes + [d for d in range(len(shape)) if d not in axes]  # the unit axes last, then dropped
    views = [np.reshape(a.transpose(order), [shape[d] for d in axes], copy=False) for a in arrays]
    shape, strides = [list(v.shape) for v in views[:1]][0], [list(v.strides) for v in views]
    d = len(shape) - 2
    while d >= 0:
        if all(s[d] == s[d + 1] * shape[d + 1] for s in strides) and (d < len(shape) - 2 or shape[-1] < VECTOR):
            shape[d:d + 2] = [shape[d] * shape[d + 1]]
            for s in strides:
                s[d:d + 2] = [s[d + 1]]
        d -= 1
    if len(shape) > 4:
        return None
    shape, strides = [1] * (4 - len(shape)) + shape, [[0] * (4 - len(s)) + s for s in strides]
    return [np.lib.stride_tricks.as_strided(v, shape, s) for v, s in zip(views, strides)]


def chain_ops(calls: Sequence[tuple], start: np.ndarray | None) -> tuple[np.ndarray, list[list], np.ndarray] | None:
    """(first value, ops, last out) of a chain of ufunc calls `(ufunc, args, out)`: each call reads the
    value the one before it wrote (the first: `start`, or its first array argument when None), in
    whichever view, and at most one other argument: an array or scalar the chain does not write, or
    one earlier value of the chain (kept by a `save`). Each op is [ufunc, operand (array, float, None
    for a `UNARY` ufunc, or `SAVED`), reversed, save]. None for another chain."""
    if start is None:
        start = next((a for a in calls[0][1] if isinstance(a, np.ndarray) and a.ndim), None)
        if start is None:
            return None
    held, ops, current = [(start, 0)], [], 0  # the views holding values of the chain
    producer, saved = {0: None}, None  # the op after which each value exists; the value saved
    for ufunc, args, out in calls:
        if ufunc not in KINDS or len(args) != (1 if ufunc in UNARY else 2) or not isinstance(out, np.ndarray):
            return None
        found = [next((n for v, n in held if same_view(v, a)), None) for a in args]
        mine = [i for i, n in enumerate(found) if n == current]
        if len(mine) != 1:
            return None
        operand = None
        if len(args) == 2:
            other, value = args[1 - mine[0]], found[1 - mine[0]]
            if value is not None:  # an earlier value of the chain: the saved one
                if saved not in (None, value):
                    return None
                saved, operand = value, SAVED
            elif isinstance(other, np.ndarray) and other.ndim:
                operand = other
            else:
                operand = float(other)
        ops.append([ufunc, operand, mine[0] == 1, False])
        current += 1
        producer[current] = ops[-1]
        held = [(v, n) for v, n in held if not same_view(v, out)] + [(out, current)]
    if saved is not None:
        if producer[saved] is None:  # the first value: kept by a multiplication by 1
            ops.insert(0, [np.multiply, 1.0, False, True])
        else:
            producer[saved][3] = True
    return start, ops, held[-1][0]


def chain_views(calls: Sequence[tuple]) -> tuple[np.ndarray, np.ndarray, list[EpilogueOp]] | None:
    """(value, out, ops) of a chain of ufunc calls `(ufunc, args, out)` over views of one shape
    (`chain_ops`): `out = ops(value)`, all viewed with four axes. None for another chain."""
    parsed = chain_ops(calls, None)
    if parsed is None:
        return None
    value, listed, out = parsed
    shape = out.shape
    arrays = [value, out] + [o for _, o, _, _ in listed if isinstance(o, np.ndarray)]
    if any(a.dtype != np.float32 for a in arrays) or any(c[2].shape != shape for c in calls):
        return None
    try:
        four = as_four_axes([np.broadcast_to(a, shape) for a in arrays])
    except ValueError:
        return None
    if four is None:
        return None
    it = iter(four[2:])
    ops = [EpilogueOp(ufunc, next(it) if isinstance(other, np.ndarray) else other, reversed, save)
           for ufunc, other, reversed, save in listed]
    return four[0], four[1], ops


def same_view(a, b) -> bool:
    """Whether `a` and `b` are arrays over the same memory with the same shape, strides and dtype (a
    source computed in place: an insert has nothing to copy)."""
    return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
            and a.strides == b.strides and a.dtype == b.dtype and a.ctypes.data == b.ctypes.data)
