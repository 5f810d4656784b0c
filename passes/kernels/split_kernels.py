"""`split-kernels`: how each kernel's work is split over threads, written as its `split` attribute.

For every `kernel.dispatch` the pass sets `split = array<i64: axis, parts>`: the axis of the kernel's
first result its work is cut along and into how many parts, one per worker thread (`parts = 1`: it
runs whole on the calling thread). A split costs a hand-off to a worker (microseconds to the compiled
kernels' spinning workers, tens of them through Python's threads), so a kernel splits only when its
work reaches the option for its kind:
- a convolution by Winograd always splits (its many small matmuls would synchronise OpenBLAS's own
  threads on each); by im2col or directly from `min_conv_macs` multiply-adds (2^20: light
  ShuffleNet's grouped 1x1 convolutions, 3.6M, split; with 2^20 and `min_points` 2^16 instead of
  2^22 and 2^18 it ran 7.27 -> 6.23 ms on two threads); a depthwise one (no input
  channel is reduced) from `min_depthwise_macs` (2^17: its pixels split in the compiled kernel, at
  the cost of a claim from its own thread pool, no GIL hand-off; 7x7x1152 5x5 with a SiLU epilogue,
  1.4M multiply-adds: 130 -> 82 us on two threads; 14x14x96 3x3, 0.17M: 25 -> 18 us);
- a matmul from `min_matmul_macs` multiply-adds (2^22);
- a pooling, a reduction or an elementwise chain from `min_points` loop points of its root (or first
  member; 2^16).
Its axis, which the executor cuts: a convolution's output rows (its pixels), or its filters when
they outnumber the output pixels (Winograd: when `winograd_splits_filters` says so); a matmul's
larger side (the product's rows, or its columns when they are more); otherwise the first loop every
operand can be sliced along (the executor's `split_loop`, runtime/executor/plan.py) of at least
`min_rows` iterations (a channels-first image's 3 channels are too few rows for two parts of two,
`threads.run_parts`), or the first such loop of any length in an op of fewer than `long_op_points`
loop points (a tail over a 2x2 or 3x3 map keeps its rows, the loop a convolution's epilogue runs it
along, runtime/kernels/conv_epilogue.py).
A kernel nothing can cut (a product with a side of one element, which the compiled taps kernel runs,
or one not planned as one matmul) gets `parts = 1`. `threads` is the number of parts (0: this machine's cores, as a TVM target's
`num-cores`). The executor splits each kernel into `parts`, never more than the threads it runs with
(runtime/parallel/threads.py, `split_parts`), and splits nothing outside a kernel, in a kernel
without `split` or in a program no kernel pass has seen.
"""

from __future__ import annotations

from dataclasses import dataclass

import math
import os

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir.affine import AffineDimExpr

from xrelay.dialects.kernel import DispatchOp
from xrelay.pass_base import XRelayPass, register_xrelay_pass
from xrelay.passes.kernels.choose_conv_algorithm import kernel_root
from xrelay.runtime.executor.plan import split_loop
from xrelay.runtime.kernels.contraction_plan import planned_contraction
from xrelay.runtime.kernels.affine_views import unit_axes
from xrelay.runtime.kernels.linalg_conv import conv_geometry
from xrelay.runtime.kernels.linalg_structured import contraction_pair
from xrelay.runtime.native.conv_kernels import winograd_splits_filters

def _points(op: LinalgStructuredOperation) -> int:
    try:
        return int(np.prod(op.get_static_loop_ranges(), dtype=np.int64))
    except NotImplementedError:
        return 0


def _first_member(dispatch: DispatchOp) -> LinalgStructuredOperation | None:
    return next((op for op in dispatch.body.block.ops if isinstance(op, LinalgStructuredOperation)
                 and not op.name == "linalg.fill"), None)


@register_xrelay_pass("split-kernels")
@dataclass(frozen=True)
class SplitKernels(XRelayPass):
    """Set `split` on every kernel (see the module docstring for the options)."""

    threads: int = 0
    min_conv_macs: int = 1 << 20
    min_depthwise_macs: int = 1 << 17
    min_matmul_macs: int = 1 << 22
    min_points: int = 1 << 16
    min_rows: int = 4
    long_op_points: int = 1 << 16

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        threads = self.threads or os.cpu_count() or 1
        for dispatch in op.walk():
            if isinstance(dispatch, DispatchOp) and dispatch.results:
                axis, split = self.decide(dispatch, threads)
                dispatch.split = DenseArrayBase.from_list(i64, (axis, threads if split and threads > 1 else 1))

    def decide(self, dispatch: DispatchOp, threads: int) -> tuple[int, bool]:
        """(the result axis, whether the kernel splits)."""
        shape = dispatch.results[0].type.get_shape()
        default_axis = next((a for a, n in enumerate(shape) if n >= 2 * threads), 0)
        root = kernel_root(dispatch)
        kind = dispatch.root.data
        if kind == "conv" and root is not None:
            pair = contraction_pair(root, 0)
            try:
                ranges = tuple(root.get_static_loop_ranges())
            except NotImplementedError:
                return default_axis, False
            geometry = conv_geometry([m.data for m in root.get_indexing_maps()], ranges, *pair, len(root.inputs)) \
                if pair is not None else None
            macs = _points(root)
            if geometry is None or geometry.depthwise:  # (or not a 2-D convolution)
                return default_axis, geometry is not None and macs >= self.min_depthwise_macs
            out = root.results[0].type.get_shape()
            n, f, oh, ow = (out[a] for a in geometry.out_axes)
            rows, filters = geometry.out_axes[2], geometry.out_axes[1]
            algorithm = dispatch.algorithm.data if dispatch.algorithm is not None else "im2col"
            if algorithm.startswith("winograd"):
                by_filters = winograd_splits_filters(n, oh, ow, f, int(algorithm[-1]), threads)
                return (filters if by_filters else rows), True
            channels_last = filters == len(out) - 1
            by_filters = channels_last and n * oh * ow < f and geometry.group_axes is None  # (groups: by rows)
            return (filters if by_filters else rows), macs >= self.min_conv_macs and (channels_last or n == 1)
        if kind == "matmul" and root is not None:
            axis = _matmul_axis(root)
            return (default_axis, False) if axis is None else (axis, _points(root) >= self.min_matmul_macs)
        first = root if root is not None else _first_member(dispatch)
        axis = self._chunk_axis(first) if first is not None else None
        return (default_axis, False) if axis is None else (axis, _points(first) >= self.min_points)

    def _chunk_axis(self, op: LinalgStructuredOperation) -> int | None:
        """The result axis of the loop an elementwise, pooling or reduction op is cut along (see the
        module docstring), or None when none can be cut."""
        try:
            ranges = tuple(op.get_static_loop_ranges())
        except NotImplementedError:
            return None
        loops = [d for d in range(len(ranges)) if split_loop(op, ranges, only=d) is not None]
        long = [d for d in loops if ranges[d] >= self.min_rows or _points(op) < self.long_op_points]
        return _output_axis(op, (long or loops)[0]) if loops else None


def _output_axis(op: LinalgStructuredOperation, loop: int) -> int | None:
    """The axis of `op`'s first output indexed by `loop` alone."""
    results = op.get_indexing_maps().data[len(op.inputs)].data.results
    return next((a for a, e in enumerate(results) if isinstance(e, AffineDimExpr) and e.position == loop), None)


def _matmul_axis(root: LinalgStructuredOperation) -> int | None:
    """The result axis a matmul is cut along: its larger side's (rows of the product when they are at
    least its columns, else columns; the executor cuts that side of the batched matmul it plans),
    or None when the executor does not plan it as one matmul (it then runs whole)."""
    pair = contraction_pair(root, 0)
    try:
        ranges = tuple(root.get_static_loop_ranges())
    except NotImplementedError:
        return None
    maps = [m.data for m in root.get_indexing_maps()]
    if pair is None:
        return None
    planned = planned_contraction(maps, ranges, *pair, len(root.inputs), unit_axes=unit_axes(root.outputs[0].type))
    if planned is None:
        return None
    _, rows, cols = planned.groups
    size = lambda loops: math.prod(ranges[d] for d in loops)  # noqa: E731
    side = rows if size(rows) >= size(cols) else cols
    return _output_axis(root, side[0]) if side else None
