"""A contraction's batched matmul planned once: axis orders and matrix shapes fixed at compile time.

For a dense layer or a convolution (the output indexed by bare loops, each operand reading only loops
the other or the output reads), `planned_contraction` works out once how the operands' loop-space
views reshape to matrices; a call makes the two matrix views (a convolution's data copied: im2col)
and runs one `threaded_matmul` into the output. `linalg_structured.compile_structured` sums the
product over the loop space for any other contraction."""

from __future__ import annotations

import math
import functools
from collections.abc import Sequence

import numpy as np
from xdsl.ir.affine import AffineMap

from xrelay.runtime.kernels.affine_views import LoopView, is_bare_permutation, loop_order, used_loops
from xrelay.runtime.kernels.conv import threaded_matmul


@functools.lru_cache(maxsize=4096)
def contraction_loops(map_a: AffineMap, map_b: AffineMap, map_out: AffineMap, a_smaller: bool):
    """(output loops outermost first, batch, free-a, free-b and contracted loops, whether the free-a
    loops go last in the product) of the contraction
    `map_out += map_a * map_b` as a batched matmul; computed once per maps (a run only looks them up).
    The contracted loops are in the memory order of the smaller operand (the weight), so its reshape
    is free; the free loops the output varies fastest along go last in the product."""
    used_a, used_b, used_o = used_loops(map_a), used_loops(map_b), used_loops(map_out)
    out_order = loop_order(map_out)
    batch = [d for d in out_order if d in used_a and d in used_b]
    free_a = [d for d in out_order if d in used_a and d not in used_b]
    free_b = [d for d in out_order if d in used_b and d not in used_a]
    small_map = map_a if a_smaller else map_b
    contracted = [d for d in loop_order(small_map) if d in used_a and d in used_b and d not in used_o]
    last_is_a = bool(free_a) and (not free_b or out_order.index(free_a[-1]) > out_order.index(free_b[-1]))
    return out_order, batch, free_a, free_b, contracted, last_is_a


def planned_contraction(maps: Sequence[AffineMap], ranges: Sequence[int], ia: int, ib: int,
                        out: int, reuse_views: Sequence[bool] = (False,),
                        unit_axes: tuple[int, ...] = ()) -> PlannedContraction | None:
    """`run(ins, target, accumulate) -> bool` computing `maps[out] (+)= sum maps[ia] * maps[ib]` as one
    batched matmul into `target` (a convolution's data copied to its patch matrix); False (the general
    path) when the arrays do not fit; None for maps of another kind (the output's may index
    `unit_axes`, its axes of size 1, by 0). While `reuse_views[0]` the matrices made for the same
    arrays are reused (unless making them copied an operand)."""
    views = [LoopView(maps[i], ranges) for i in (ia, ib)]
    if not all(v.linear for v in views) or not is_bare_permutation(maps[out], unit_axes):
        return None
    used_a, used_b, used_o = used_loops(maps[ia]), used_loops(maps[ib]), used_loops(maps[out])
    if used_a - used_b - used_o or used_b - used_a - used_o or (used_a | used_b) != set(range(len(ranges))):
        return None
    size = lambda loops: math.prod(ranges[d] for d in loops)  # noqa: E731
    out_order, batch, free_a, free_b, contracted, last_is_a = contraction_loops(
        maps[ia], maps[ib], maps[out], size(used_a) <= size(used_b))
    if last_is_a:
        sides = ((1, free_b, contracted), (0, contracted, free_a))
        labels = batch + free_b + free_a
    else:
        sides = ((0, free_a, contracted), (1, contracted, free_b))
        labels = batch + free_a + free_b
    rank = len(ranges)
    matrices = []  # per side of the product: (operand, transposition of its loop-space view, shape)
    for operand, rows, cols in sides:
        order = batch + rows + cols
        matrices.append((operand, order + [d for d in range(rank) if d not in order],
                         (size(batch), size(rows), size(cols))))
    shape = (size(batch), matrices[0][2][1], matrices[1][2][2])
    significant = lambda loops: [d for d in loops if ranges[d] != 1]  # noqa: E731
    in_place = significant(labels) == significant(out_order)
    to_labels = [out_order.index(d) for d in labels]
    groups = (batch, sides[0][1], sides[1][2])
    return PlannedContraction(views, matrices, shape, in_place, to_labels, (ia, ib), reuse_views, groups,
                              out_order)


class PlannedContraction:
    """`planned_contraction`'s runner: `self(ins, target, accumulate) -> bool` (see there)."""

    def __init__(self, views, matrices, shape, in_place, to_labels, operands, reuse_views, groups, out_loops):
        self.views, self.matrices, self.shape = views, matrices, shape
        self.in_place, self.to_labels, self.operands, self.reuse_views = in_place, to_labels, operands, reuse_views
        self.groups, self.out_loops = groups, out_loops
        """The loops of the product's (B, M, N) axes; the loop of each axis of the output."""
        self.split: int | None = None
        """Its kernel's `split` parts (passes/kernels/split_kernels.py), or None: whole."""
        self.along: int | None = None
        """The product axis its kernel's `split` cuts (the one holding the split loop), or None: the larger."""
        self.last: tuple | None = None
        """(a, b, target, lhs, rhs, product) of the last call, kept while `reuse_views[0]`."""

    def cut_along(self, loop: int | None) -> None:
        """Cut the product along the (B, M, N) axis holding `loop` (None: the larger side)."""
        self.along = next((axis for axis, loops in enumerate(self.groups) if loop in loops), None)

    def kept(self, ins: list, target: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(lhs, rhs, product) of the last call when `ins` and `target` are its arrays, else None."""
        entry = self.last
        if entry is not None and entry[0] is ins[self.operands[0]] and entry[1] is ins[self.operands[1]] \
                and entry[2] is target:
            return entry[3:]
        return None

    def __call__(self, ins: list, target: np.ndarray, accumulate: bool) -> bool:
        """Compute the product of these arrays into `target` (`accumulate`: added to it); False when the
        arrays are not numbers of one dtype. An operand whose loop-space view does not reshape to its
        matrix (a convolution's data: its im2col) is copied here."""
        kept = None if accumulate else self.kept(ins, target)
        if kept is not None:
            threaded_matmul(*kept[:2], out=kept[2], threads=self.split, along=self.along)
            return True
        a, b = (ins[k] for k in self.operands)
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and isinstance(target, np.ndarray)
                and a.dtype == b.dtype == target.dtype and a.dtype.kind in "fiu"):
            return False
        try:  # (not in place: the output's axes in another order, groups between pixels and filters)
            view = target if self.in_place else target.transpose(self.to_labels)
            product = np.reshape(view, self.shape, copy=False)
        except ValueError:
            if len(to_labels := self.to_labels) != target.ndim:
                return False
            view, product = target.transpose(to_labels), None  # (a product not one view of it: copied in)
        matrices, copied = [], False
        for k, order, shape in self.matrices:
            loop_view = self.views[k](ins[self.operands[k]]).transpose(order)
            try:
                matrices.append(np.reshape(loop_view, shape, copy=False))
            except ValueError:
                matrices.append(loop_view.reshape(shape))
                copied = True
        direct = product is not None and not accumulate  # (accumulate: its fill not dropped, an op by itself)
        result = threaded_matmul(*matrices, out=product if direct else None, threads=self.split, along=self.along)
        if direct and self.reuse_views[0] and not copied:
            self.last = (a, b, target, *matrices, product)
        elif accumulate:
            np.add(view, result.reshape(view.shape), out=view)
        elif not direct:
            np.copyto(view, result.reshape(view.shape))
        return True
