"""A contraction's batched matmul planned once: axis orders and matrix shapes fixed at compile time.

`linalg_structured.contract` works out, on every call, which loops are batch, free and contracted,
how each operand's loop-space view is transposed and reshaped into (batch, rows, cols) matrices and
whether the product can be written straight into the output: 40-60 us of Python per call, as long
as the matmul itself for ShuffleNet's grouped 1x1 convolutions (G matrices of 49-3136 rows by
34-136 columns). `planned_contraction` does that analysis once per op, for the case the executor
meets in networks: the output overwritten (its zero fill dropped) and indexed by bare loops, each
operand reading only loops the other operand or the output also reads. A call then makes the two
views, reshapes them and runs one `threaded_matmul` into the output.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.ir.affine import AffineMap

from xrelay.runtime.affine_views import LoopView, is_bare_permutation, loop_order, used_loops
from xrelay.runtime.conv import threaded_matmul


def planned_contraction(maps: Sequence[AffineMap], ranges: Sequence[int], ia: int, ib: int,
                        out: int, reuse_views: Sequence[bool] = (False,)) -> Callable[[list, np.ndarray, bool], bool] | None:
    """`run(ins, target, accumulate) -> bool` computing `maps[out] = sum maps[ia] * maps[ib]` as one
    batched matmul written into `target`; False (the caller runs the general path) when asked to
    accumulate or when the arrays do not allow the direct write. None when the maps are not of the
    planned kind (see the module docstring). While `reuse_views[0]` (a planned program: the same
    arrays on every run) the matrices made for the last call's arrays are kept and reused when the
    next call passes the same arrays, unless making them copied an operand."""
    views = [LoopView(maps[i], ranges) for i in (ia, ib)]
    if not all(v.linear for v in views) or not is_bare_permutation(maps[out]):
        return None
    used_a, used_b, used_o = used_loops(maps[ia]), used_loops(maps[ib]), used_loops(maps[out])
    if used_a - used_b - used_o or used_b - used_a - used_o or (used_a | used_b) != set(range(len(ranges))):
        return None
    out_order = loop_order(maps[out])
    batch = [d for d in out_order if d in used_a and d in used_b]
    free_a = [d for d in out_order if d in used_a and d not in used_b]
    free_b = [d for d in out_order if d in used_b and d not in used_a]
    size = lambda loops: math.prod(ranges[d] for d in loops)  # noqa: E731
    # As `contract`: contracted loops in the smaller operand's memory order; the free loops the
    # output varies fastest along last in the product.
    small = maps[ia] if size(used_a) <= size(used_b) else maps[ib]
    contracted = [d for d in loop_order(small) if d in used_a and d in used_b and d not in used_o]
    last_is_a = bool(free_a) and (not free_b or out_order.index(free_a[-1]) > out_order.index(free_b[-1]))
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
    operands = (ia, ib)

    last: list = [None]  # (a, b, target, lhs, rhs, product) of the last call

    def run(ins: list, target: np.ndarray, accumulate: bool) -> bool:
        a, b = ins[ia], ins[ib]
        entry = last[0]
        if entry is not None and entry[0] is a and entry[1] is b and entry[2] is target and not accumulate:
            threaded_matmul(entry[3], entry[4], out=entry[5])
            return True
        if accumulate or not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                              and isinstance(target, np.ndarray) and target.flags.c_contiguous
                              and a.dtype == b.dtype == target.dtype and a.dtype.kind == "f"):
            return False
        if in_place:
            product = target.reshape(shape)
        else:
            try:  # the output's axes in another order (groups between pixels and filters)
                product = np.reshape(target.transpose(to_labels), shape, copy=False)
            except ValueError:
                return False
        lhs, rhs = (views[k](ins[operands[k]]).transpose(order).reshape(matrix_shape)
                    for k, order, matrix_shape in matrices)
        threaded_matmul(lhs, rhs, out=product)
        if reuse_views[0] and np.may_share_memory(lhs, a) and np.may_share_memory(rhs, b):
            last[0] = (a, b, target, lhs, rhs, product)
        return True

    return run
