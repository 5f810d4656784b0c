"""Convolutions compiled from `conv_kernels.c`: one call per convolution, no GIL inside.

`native_winograd` (a Winograd F(2,3) or F(4,3) convolution; numpy has none),
`native_im2col` (im2col + GEMM, `runtime/kernels/linalg_conv.py`) and `native_depthwise` (a depthwise
convolution, the same file's) run when the machine's C compiler
built `conv_kernels.c` (cached like the loops executor's libraries, `build.py`) and numpy's BLAS is an
ILP64 OpenBLAS whose `cblas_sgemm` the C code can call; otherwise they return False and the numpy
kernels run. `XRELAY_NATIVE=0` chooses numpy, as for the loops level.

An epilogue (`EpilogueOp`s) is applied to every output value before it is stored, on the thread that
computed it: a bias add, a ReLU, a residual add, each a scalar or a strided float32 array.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from xrelay.runtime.math_functions import erf
from xrelay.runtime.native.build import NativeUnavailable, load, native_enabled, usable_threads

KINDS = {np.add: 0, np.subtract: 1, np.multiply: 2, np.maximum: 3, np.minimum: 4, np.divide: 6, np.negative: 8,
         np.exp: 9, erf: 10}
"""The ufuncs an epilogue operation may be, by their code in `conv_kernels.c` (`REVERSED`: theirs reversed;
`UNARY`: those of no operand)."""
REVERSED = {np.subtract: 5, np.divide: 7}
UNARY = (np.negative, np.exp, erf)
SAVED = "saved"
"""An `EpilogueOp` operand: the value the last operation with `save` left."""

DEPTHWISE_ROW_VALUES = 8192
"""`conv_kernels.c`'s ROW_VALUES: the depthwise kernel's buffer of one output row's values (its
output rows are at most this wide)."""

BLOCK_BYTES = 1 << 20
"""The most one block's transformed tiles and point-wise products take: half a core's L2 cache."""


class _Op(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("scalar", ctypes.c_int32), ("value", ctypes.c_float),
                ("save", ctypes.c_int32), ("data", ctypes.c_void_p), ("strides", ctypes.c_int64 * 4)]


@dataclass(frozen=True)
class EpilogueOp:
    """`value = ufunc(value, operand)` (or `ufunc(operand, value)` when `reversed`; `ufunc(value)` for
    the `UNARY` ones) on each output value; `operand` a Python float, a float32 array viewed as
    (N, OH, OW, F), or `SAVED`. With `save`, the value after it is kept for a later `SAVED` operand."""

    ufunc: np.ufunc
    operand: object
    reversed: bool = False
    save: bool = False


def _sgemm_address() -> int | None:
    """The address of numpy's OpenBLAS's ILP64 `cblas_sgemm`, or None."""
    from xrelay.runtime.parallel.threads import _openblas_paths

    for path in _openblas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_cblas_sgemm64_", "cblas_sgemm64_"):
            function = getattr(lib, name, None)
            if function is not None:
                return ctypes.cast(function, ctypes.c_void_p).value
    return None


def _kernel():
    """(the library's handle, the sgemm address), or None when `XRELAY_NATIVE=0` or either is unavailable."""
    return _built() if native_enabled() else None


@functools.cache
def _built():
    """`_kernel` once per process (a failure noted on stderr once)."""
    sgemm = _sgemm_address()
    if sgemm is None:
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    sources = []
    for name in ("math_kernels.c", "conv_kernels.c", "matmul_kernels.c", "copy_kernels.c", "direct_kernels.c"):  # (each uses those before it)
        with open(os.path.join(here, name)) as source:
            sources.append(source.read())
    try:
        library = load("".join(sources))
    except NativeUnavailable as reason:
        print(f"xrelay: note: native convolution kernels unavailable ({reason}); running them on numpy",
              file=sys.stderr)
        return None
    for name in ("winograd", "im2col", "window", "depthwise", "matmul", "copy", "direct"):
        getattr(library.handle, f"xrelay_{name}").restype = ctypes.c_int
    return library.handle, sgemm


def available() -> bool:
    """Whether `native_winograd` can run here."""
    return _kernel() is not None


def _strides(array: np.ndarray) -> tuple[int, ...] | None:
    if any(s % array.itemsize for s in array.strides):
        return None
    return tuple(s // array.itemsize for s in array.strides)


def _ops(epilogue: list[EpilogueOp], shape: tuple[int, ...]):
    ops = (_Op * max(1, len(epilogue)))()
    for op, e in zip(ops, epilogue):
        code = KINDS.get(e.ufunc)
        if code is None:
            return None
        op.kind = REVERSED.get(e.ufunc, code) if e.reversed else code
        op.save = int(e.save)
        if isinstance(e.operand, str):  # SAVED
            op.scalar = 2
        elif isinstance(e.operand, np.ndarray):
            if e.operand.dtype != np.float32 or e.operand.shape != shape:
                return None
            strides = _strides(e.operand)
            if strides is None:
                return None
            op.scalar, op.data = 0, e.operand.ctypes.data
            op.strides[:] = strides
        else:
            op.scalar, op.value = 1, float(e.operand or 0.0)
    return ops


class NativeEpilogue:
    """A convolution's epilogue as `native_winograd` takes it: `ops` on each value, stored into `out`
    (an (N, F, OH, OW) view; None: the convolution's own output) and also into `copy` unless None.
    Called as `rows(r0, r1)` it runs the Python epilogue it stands for (`rows`), for kernels that run
    on numpy."""

    def __init__(self, rows, ops: list[EpilogueOp], out: np.ndarray | None = None, copy: np.ndarray | None = None):
        self.rows, self.ops, self.out, self.copy = rows, ops, out, copy
        self.call: Callable[[], None] | None = None
        """The native kernel's call with every argument bound, set when a kernel ran with this epilogue:
        while the convolution's operands are the same arrays (a planned program's), calling it again
        computes the same convolution (`ConvStep` does, skipping its runner's Python)."""

    def __call__(self, r0: int, r1: int) -> None:
        if self.rows is not None:  # (None: no epilogue)
            self.rows(r0, r1)


def _view(array: np.ndarray | None):
    """(pointer, int64[4] strides in elements) of an (N, F, OH, OW) view as (N, OH, OW, F), or None
    when its strides are not whole elements; (None, None) for no array."""
    if array is None:
        return None, None
    nhwc = array.transpose(0, 2, 3, 1)
    strides = _strides(nhwc)
    if strides is None or nhwc.dtype != np.float32:
        return None
    return ctypes.c_void_p(nhwc.ctypes.data), (ctypes.c_int64 * 4)(*strides)


def _bound(x: np.ndarray, weight: np.ndarray, out: np.ndarray, accumulate: bool, epilogue: NativeEpilogue | None):
    """What the convolution kernels take besides their own arguments: (the built kernels, x as NHWC
    and its strides, the output's (N, OH, OW, F) shape, the C arguments acc, accs, y, ys, y2, ys2, the
    epilogue's ops and their count), or None when the kernels are unavailable or an array is not one
    they can address (float32; `weight` C-contiguous)."""
    built = _kernel()
    if built is None or not (x.dtype == weight.dtype == out.dtype == np.float32) or not weight.flags.c_contiguous:
        return None
    xv = x.transpose(0, 2, 3, 1)
    xs = _strides(xv)
    target = epilogue.out if epilogue is not None and epilogue.out is not None else out
    views = [_view(out if accumulate else None), _view(target), _view(epilogue.copy if epilogue else None)]
    if xs is None or None in views:
        return None
    shape = target.transpose(0, 2, 3, 1).shape
    listed = list(epilogue.ops) if epilogue is not None else []
    ops = _ops(listed, shape)
    if ops is None:
        return None
    return built, xv, (ctypes.c_int64 * 4)(*xs), shape, [v for view in views for v in view], \
        (ops, ctypes.c_int(len(listed)))


def _run(function, arguments: tuple, keep: tuple, epilogue: NativeEpilogue | None) -> bool:
    """Call `function(*arguments)`, and keep the call on `epilogue` (with `keep`, the arrays it points
    into, alive as long as it is)."""

    def call(keep=keep) -> None:
        if function(*arguments) != 0:
            raise MemoryError("native convolution kernel: out of memory")

    if epilogue is not None:
        epilogue.call = call
    call()
    return True


def winograd_splits_filters(n: int, oh: int, ow: int, f: int, m: int, threads: int) -> bool:
    """Whether a Winograd F(m, 3) convolution is cut over `threads` threads by its filters (each
    thread multiplies every tile by its share of the transformed weight), not by rows of tiles (each
    thread reads all of it): when the filters outnumber four per tile and there are enough of them.
    `split-kernels` writes this as the kernel's split axis; `native_winograd` cuts by it."""
    tile_rows, tiles = -(-oh // m), n * -(-oh // m) * -(-ow // m)
    return not (f < 2 * threads or (tile_rows >= threads and f < 4 * tiles))


def native_winograd(x: np.ndarray, u: np.ndarray, m: int, out: np.ndarray, accumulate: bool, threads: int,
                    epilogue: NativeEpilogue | None = None, by_filters: bool | None = None) -> bool:
    """The stride-1, undilated 3x3 convolution of x by Winograd F(m x m, 3 x 3), written (or with
    `accumulate` added) into `out` (x and out as (N, C, H, W) and (N, F, OH, OW) views, u
    `conv.winograd_weights(w, m)`) through `epilogue`, over `threads` threads, by filters or by rows
    of tiles as `by_filters` says (None: as `winograd_splits_filters` does); False, having done
    nothing, when the kernel is unavailable or the arrays are not float32 views it can address."""
    bound = _bound(x, u, out, accumulate, epilogue) if m in (2, 4) else None
    if bound is None:
        return False
    kernel, xv, xs, (_, oh, ow, f), outputs, ops = bound
    n, h, w, c = xv.shape
    i64 = ctypes.c_int64
    arguments = (ctypes.c_void_p(xv.ctypes.data), xs, i64(n), i64(h), i64(w), i64(c), ctypes.c_void_p(u.ctypes.data),
                 i64(f), *outputs[:6], i64(oh), i64(ow), ctypes.c_int(m), ctypes.c_int(usable_threads(max(1, threads))),
                 i64(BLOCK_BYTES), ctypes.c_int(winograd_splits_filters(n, oh, ow, f, m, threads)
                                                if by_filters is None else by_filters),
                 ctypes.c_void_p(kernel[1]), *ops)
    return _run(kernel[0].xrelay_winograd, arguments, (x, u, out, epilogue), epilogue)


def native_im2col(x: np.ndarray, wmat: np.ndarray, kernel: tuple[int, int], strides: tuple[int, int],
                  dilation: tuple[int, int], out: np.ndarray, accumulate: bool, threads: int,
                  by_filters: bool, epilogue: NativeEpilogue | None = None, groups: int = 1,
                  direct: bool = False) -> bool:
    """The convolution of x (an (N, C, H, W) view read from (0, 0), every window inside it) with
    `wmat`, the (KH*KW*C, F) weight matrix (rows in (kh, kw, c) order, C-contiguous), into `out` (an
    (N, F, OH, OW) view; plus what it holds if `accumulate`) through `epilogue`, over `threads`
    threads, by pixels or (`by_filters`) by filters; False, having done nothing, when the kernel is
    unavailable or the arrays are not float32 views it can address. With `groups` > 1, channels and
    filters are cut into that many consecutive groups, each convolved alone, and `wmat` is the groups'
    (KH*KW*C/groups, F/groups) matrices one above the other (always by pixels). With `direct`
    (ungrouped), the direct kernel instead (`direct_kernels.c`: each block of output pixels' sums in
    registers over the whole reduction, no patches; for a short one, such as three colour channels)."""
    bound = None if x.shape[1] % groups or out.shape[1] % groups else _bound(x, wmat, out, accumulate, epilogue)
    if bound is None:
        return False
    built, xv, xs, (_, oh, ow, f), outputs, ops = bound
    i64 = ctypes.c_int64
    if direct and groups == 1:
        arguments = (ctypes.c_void_p(xv.ctypes.data), xs, i64(xv.shape[0]), i64(xv.shape[3]),
                     ctypes.c_void_p(wmat.ctypes.data), i64(f), *(i64(v) for v in (*kernel, *strides, *dilation)),
                     *outputs[:6], i64(oh), i64(ow), ctypes.c_int(usable_threads(max(1, threads))), *ops)
        return _run(built[0].xrelay_direct, arguments, (x, wmat, out, epilogue), epilogue)
    arguments = (ctypes.c_void_p(xv.ctypes.data), xs, i64(xv.shape[0]), i64(xv.shape[3] // groups), i64(groups),
                 ctypes.c_void_p(wmat.ctypes.data), i64(f), i64(kernel[0]), i64(kernel[1]), i64(strides[0]),
                 i64(strides[1]), i64(dilation[0]), i64(dilation[1]), *outputs[:6], i64(oh), i64(ow),
                 ctypes.c_int(usable_threads(max(1, threads))), i64(BLOCK_BYTES), ctypes.c_int(int(by_filters)),
                 ctypes.c_void_p(built[1]), *ops)
    return _run(built[0].xrelay_im2col, arguments, (x, wmat, out, epilogue), epilogue)


def native_depthwise(x: np.ndarray, w: np.ndarray, strides: tuple[int, int], dilation: tuple[int, int],
                     out: np.ndarray, accumulate: bool, threads: int, epilogue: NativeEpilogue | None = None) -> bool:
    """The depthwise convolution of x (an (N, C, H, W) view read from (0, 0), every window inside it)
    with `w`, the (KH, KW, C) weight (C-contiguous), into `out` (an (N, C, OH, OW)
    view; plus what it holds if `accumulate`) through `epilogue`, over `threads` threads by output rows;
    False, having done nothing, when the kernel is unavailable or the arrays are not float32 views it
    can address."""
    bound = _bound(x, w, out, accumulate, epilogue)
    if bound is None:
        return False
    built, xv, xs, (_, oh, ow, c), outputs, ops = bound
    (n, h, width, channels), (kh, kw) = xv.shape, w.shape[:2]
    if channels != c or w.shape[2] != c or (oh - 1) * strides[0] + (kh - 1) * dilation[0] >= h \
            or (ow - 1) * strides[1] + (kw - 1) * dilation[1] >= width or ow > DEPTHWISE_ROW_VALUES:
        return False
    i64 = ctypes.c_int64
    arguments = (ctypes.c_void_p(xv.ctypes.data), xs, i64(n), i64(c), ctypes.c_void_p(w.ctypes.data), i64(kh), i64(kw),
                 i64(strides[0]), i64(strides[1]), i64(dilation[0]), i64(dilation[1]), *outputs[:6], i64(oh), i64(ow),
                 ctypes.c_int(usable_threads(max(1, threads))), *ops)
    return _run(built[0].xrelay_depthwise, arguments, (x, w, out, epilogue), epilogue)


def native_matmul(lhs: np.ndarray, rhs: np.ndarray, out: np.ndarray, along: int, threads: int) -> bool:
    """`out[b] = lhs[b] @ rhs[b]` for (B, M, K) @ (B, K, N) into (B, M, N) float32 views, as one compiled
    call cut into `threads` parts along axis `along` of the product (`matmul_kernels.c`); False, having
    done nothing, when the kernel is unavailable or a view is not one sgemm can address (an operand's
    rows and columns both strided, an output whose columns are)."""
    built = _kernel()
    if built is None or not (lhs.dtype == rhs.dtype == out.dtype == np.float32) or 1 in out.shape[1:]:
        return False  # (a matrix-vector product: numpy's gemv; sgemm would pack the matrix, 1.7x slower)
    layouts = [_matrix_layout(a) for a in (lhs, rhs, out)]
    if None in layouts or layouts[2][2] != NO_TRANS:
        return False
    (sa, lda, ta), (sb, ldb, tb), (sc, ldc, _) = layouts
    i64 = ctypes.c_int64
    b, m, n = out.shape
    return built[0].xrelay_matmul(ctypes.c_void_p(lhs.ctypes.data), i64(sa), i64(lda), ctypes.c_int(ta),
                    ctypes.c_void_p(rhs.ctypes.data), i64(sb), i64(ldb), ctypes.c_int(tb),
                    ctypes.c_void_p(out.ctypes.data), i64(sc), i64(ldc), i64(b), i64(m), i64(n), i64(lhs.shape[2]),
                    ctypes.c_int(along), ctypes.c_int(usable_threads(max(1, threads))), ctypes.c_void_p(built[1])) == 0


NO_TRANS, TRANS = 111, 112


def _matrix_layout(a: np.ndarray) -> tuple[int, int, int] | None:
    """(batch stride, leading dimension, NO_TRANS or TRANS) of a (B, R, C) view, in elements, or None."""
    strides = _strides(a)
    if strides is None or min(strides) < 0:
        return None
    batch, rows, cols = a.shape
    sb, sr, sc = strides
    sb = sb if batch > 1 else 0
    if (cols == 1 or sc == 1) and (rows == 1 or sr >= cols):
        return sb, sr if rows > 1 else max(cols, 1), NO_TRANS
    if (rows == 1 or sr == 1) and (cols == 1 or sc >= rows):
        return sb, sc if cols > 1 else max(rows, 1), TRANS
    return None
