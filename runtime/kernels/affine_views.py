"""Operands seen through linalg indexing maps: strided loop-space views of numpy arrays.

`LoopView(map, ranges)` analyses an affine map once and gives, for an operand array, a view with
one axis per loop (a window such as `d2 * 2 + d5` is a stride, no copy); maps that are not linear
(floordiv, mod) gather through index arrays (`gather_view`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)


class ExecutionError(Exception):
    """An op or construct the executor cannot run; the message names the op."""


def linear_form(expr: AffineExpr) -> tuple[dict[int, int], int] | None:
    """`expr` as ({dim: coefficient}, constant), or None if it is not linear."""
    if isinstance(expr, AffineDimExpr):
        return {expr.position: 1}, 0
    if isinstance(expr, AffineConstantExpr):
        return {}, expr.value
    if isinstance(expr, AffineBinaryOpExpr):
        lhs, rhs = linear_form(expr.lhs), linear_form(expr.rhs)
        if lhs is None or rhs is None:
            return None
        if expr.kind == AffineBinaryOpKind.Add:
            coeffs = dict(lhs[0])
            for dim, c in rhs[0].items():
                coeffs[dim] = coeffs.get(dim, 0) + c
            return coeffs, lhs[1] + rhs[1]
        if expr.kind == AffineBinaryOpKind.Mul:
            if not lhs[0]:
                lhs, rhs = rhs, lhs
            if rhs[0]:
                return None
            factor = rhs[1]
            return {d: c * factor for d, c in lhs[0].items()}, lhs[1] * factor
    return None


def window_form(expr: AffineExpr, outer_loops, inner_loops) -> tuple[int, int, int, int, int] | None:
    """(outer loop, inner loop, outer coefficient, inner coefficient, constant) when `expr` is a
    window `o * s + k * d + c` (convolution, pooling) with o in `outer_loops`, k in `inner_loops`,
    s, d >= 1 and c >= 0; else None."""
    form = linear_form(expr)
    if form is None:
        return None
    coeffs, const = form
    loops = [d for d, k in coeffs.items() if k]
    outer = [d for d in loops if d in outer_loops]
    inner = [d for d in loops if d in inner_loops]
    if len(loops) != 2 or len(outer) != 1 or len(inner) != 1 or const < 0 or min(coeffs[d] for d in loops) < 1:
        return None
    return outer[0], inner[0], coeffs[outer[0]], coeffs[inner[0]], const


def data_axes(amap: AffineMap, outer_loops, inner_loops) -> list[tuple] | None:
    """Per result of `amap`: ("loop", d) for a bare loop d, or ("window", outer loop, inner loop,
    outer coefficient, inner coefficient, constant) for a `window_form` (a convolution's or a
    pooling's data); None when some result is neither."""
    axes = []
    for expr in amap.results:
        window = None if isinstance(expr, AffineDimExpr) else window_form(expr, outer_loops, inner_loops)
        if window is None and not isinstance(expr, AffineDimExpr):
            return None
        axes.append(("loop", expr.position) if window is None else ("window", *window))
    return axes


class LoopView:
    """Views of operands through one indexing map with one axis per loop: full range for loops the
    map uses, 1 otherwise (`linear` is False when some result is not linear in the loops: floordiv,
    mod). The map is analysed once; the view geometry is cached per operand shape and strides."""

    def __init__(self, amap: AffineMap, ranges: Sequence[int]):
        forms = [linear_form(e) for e in amap.results]
        self.amap = amap
        self.ranges = tuple(ranges)
        self.linear = all(f is not None for f in forms)
        self.forms = [(tuple(coeffs.items()), const) for coeffs, const in forms] if self.linear else []
        self._geometry: dict[tuple, tuple[int, list[int], list[int]]] = {}

    def geometry(self, shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, list[int], list[int]]:
        """(byte offset, view shape, view strides) for an operand of this shape and these strides."""
        key = (shape, strides)
        found = self._geometry.get(key)
        if found is None:
            if len(shape) != len(self.forms):
                raise ExecutionError(f"indexing map {self.amap} does not fit an operand of shape {shape}")
            offset = 0
            view_shape, view_strides = [1] * len(self.ranges), [0] * len(self.ranges)
            for (coeffs, const), size, stride in zip(self.forms, shape, strides):
                if const < 0 or const > size:
                    raise ExecutionError(f"indexing map {self.amap} reaches outside an operand of shape {shape}")
                offset += const * stride
                for dim, c in coeffs:
                    view_strides[dim] += c * stride
                    view_shape[dim] = self.ranges[dim]
            found = self._geometry[key] = (offset, view_shape, view_strides)
        return found

    def __call__(self, array: np.ndarray, writeable: bool = False) -> np.ndarray:
        """The loop-space view of `array` (linear maps only)."""
        array = np.asarray(array)
        offset, shape, strides = self.geometry(array.shape, array.strides)
        if array.flags.c_contiguous and array.size:
            # np.ndarray over the array's buffer: several times cheaper than as_strided (and it
            # checks that the view stays inside the buffer).
            return np.ndarray(shape, array.dtype, array, offset, strides)
        base = array[tuple(slice(const, None) for _, const in self.forms)] if self.forms else array
        return as_strided(base, shape=shape, strides=strides, writeable=writeable)


def gather_view(array: np.ndarray, amap: AffineMap, ranges: Sequence[int]) -> np.ndarray:
    """A loop-space array of `array`'s elements for any affine map (fancy indexing: the map evaluated
    over index grids, elementwise)."""
    rank = len(ranges)
    grids = [np.arange(r).reshape([r if i == d else 1 for i in range(rank)]) for d, r in enumerate(ranges)]
    return np.asarray(array)[tuple(np.asarray(index) for index in amap.eval(grids, []))]


def used_loops(amap: AffineMap) -> set[int]:
    return set().union(*(e.used_dims() for e in amap.results)) if amap.results else set()


def loop_order(amap: AffineMap) -> list[int]:
    """The loops an operand uses, outermost (largest memory stride) first."""
    order: list[int] = []
    for expr in amap.results:
        for d in sorted(expr.used_dims()):
            if d not in order:
                order.append(d)
    return order


def unit_axes(shaped) -> tuple[int, ...]:
    """The axes of size 1 of a shaped type (a tensor's, a memref's)."""
    return tuple(i for i, size in enumerate(shaped.get_shape()) if size == 1)


def is_bare_permutation(amap: AffineMap, unit_axes: tuple[int, ...] = ()) -> bool:
    """Whether every result is a distinct bare loop index (the operand is indexed exactly by loops),
    or the constant 0 on one of `unit_axes` (axes of size 1: a squeeze-excitation's 1x1 image)."""
    dims_ = [e.position for e in amap.results if isinstance(e, AffineDimExpr)]
    units = sum(isinstance(e, AffineConstantExpr) and e.value == 0 and i in unit_axes for i, e in enumerate(amap.results))
    return len(dims_) + units == len(amap.results) and len(set(dims_)) == len(dims_)
