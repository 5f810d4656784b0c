"""Grouped 1x1 convolutions (planned contractions) split together with the elementwise tail after them.

In ShuffleNet each unit ends with a grouped 1x1 convolution (a `contraction_plan.ContractionStep`:
one batched matmul) whose result, reshaped from (N, H, W, G, C/G) to (N, H, W, C), goes through a
fused elementwise tail: its bias-add, the residual add and the ReLU (`plan.FusedTail`), or its
bias-add and ReLU written into the next depthwise convolution's pad through the channel shuffle
(`shuffle_tail.ShuffledTail`). Split over threads or the two processes (runtime/parallel/spmd.py), the
product and the tail are two splits, each with its barriers, and a tail below its own split
threshold (ShuffleNet's 14x14x272 and 7x7x544 ones) runs on the first process while the second
waits. `fuse_contraction_tails` makes the tail's step a `contraction_plan.SplitTail`: when the pair
splits, the product is deferred to it (the contraction's step only binds its result, which the
reshapes between bind views of) and each part multiplies its output rows, then runs the tail on
them; when it does not (one thread), both steps run as before. Blocks of rows in cache on one
thread measured slower (commit c8a092e).
"""

from __future__ import annotations

import numpy as np

from xrelay.runtime.kernels.contraction_plan import ContractionStep, ContractionTail, SplitTail
from xrelay.runtime.kernels.conv_epilogue import RowTail, _inert
from xrelay.runtime.executor.pad_step import RESHAPES
from xrelay.runtime.executor.plan import MIN_SPLIT_ELEMENTS, PROCESSES_MIN_SPLIT_ELEMENTS, FusedTail
from xrelay.runtime.executor.schedule import StepAccess
from xrelay.runtime.kernels.shuffle_tail import ShuffledTail

def fuse_contraction_tails(steps: list, accesses: dict, memory) -> int:
    """Make each fused tail (a `FusedTail`, or a `ShuffledTail` writing a shuffle's pad) whose first
    member reads the result of a `ContractionStep` before it a `SplitTail` with that step (see the
    module docstring); returns how many.

    The steps between must read and write nothing (constants, allocations) or bind views of the
    result (reshapes); the tail must read the result (through reshapes that keep its leading axes up
    to the tail's row axis) with its own output's indexing, rows along an axis the product's rows
    are the leading loops of, and must not write a buffer the contraction reads."""
    fused = 0
    for t, step in enumerate(steps):
        source = step.source if isinstance(step, ShuffledTail) else step if isinstance(step, FusedTail) else None
        if source is None or t not in accesses:
            continue
        c, views = t - 1, []
        while c >= 0 and (_inert(accesses.get(c)) or _is_view(steps[c], accesses[c])):
            if not _inert(accesses.get(c)):
                views.append(c)
            c -= 1
        conv = steps[c] if c >= 0 else None
        if not (isinstance(conv, ContractionStep) and conv.tail is None and conv.result is not None and c in accesses):
            continue
        bound = set(accesses[c].binds)
        for v in reversed(views):  # each view reads what the contraction or an earlier view binds
            if not accesses[v].reads <= bound:
                break
            bound |= accesses[v].binds
        else:
            axis = _row_axis(source, conv.result)
            inner = conv.planned.rows_per(axis) if axis is not None else None
            if inner is None:
                continue
            rows_of = step if isinstance(step, ShuffledTail) else RowTail.of(step, axis)
            if rows_of is None or source.members[0][0].loop != axis:
                continue
            conv_access, tail_access = accesses[c], accesses[t]
            buffer = lambda s: memory.storage.get(s, ("slot", s))  # noqa: E731
            written = {buffer(s) for s in conv_access.writes | conv_access.binds}
            read = {buffer(s) for s in conv_access.reads} - written
            if any(buffer(s) in read for s in tail_access.writes):
                continue
            conv.tail = _contraction_tail(step, rows_of, conv, axis, inner)
            steps[t] = SplitTail(conv, conv.tail)
            # The memory plan is left as it was (one thread, where the two never run together, runs as
            # before): a buffer allocated between the two steps may share memory with the product's
            # input, which `SplitTail` checks (`ContractionTail.rows_apart`).
            conv.tail.between = [k for k in range(len(memory.buffers)) if c < memory.buffers[k].step <= t]
            tail_access.merge(StepAccess(set(conv_access.reads), set(conv_access.binds), set(conv_access.writes)))
            fused += 1
    return fused


def bind_split_tails(steps: list, planned: list) -> None:
    """Give each fused pair the program's list of planned arrays (empty without a plan: fresh arrays
    share no memory with the product's input)."""
    for step in steps:
        if isinstance(step, SplitTail):
            step.tail.planned = planned


def _contraction_tail(step, rows_of, conv: ContractionStep, axis: int, inner: int) -> ContractionTail:
    rows = conv.result.type.get_shape()[axis]
    macs = int(np.prod(conv.planned.shape, dtype=np.int64)) * conv.planned.matrices[0][2][2]
    if isinstance(step, ShuffledTail):
        return ContractionTail(step, step.epilogue, rows, inner, macs, step.points, *step.min_split)
    return ContractionTail(step, rows_of.bind, rows, inner, macs, step.points,
                           MIN_SPLIT_ELEMENTS, PROCESSES_MIN_SPLIT_ELEMENTS)


def _is_view(step, access) -> bool:
    """Whether a step only binds a view (a reshape): it reads, binds and writes nothing."""
    return access is not None and not access.writes and bool(access.reads) and bool(access.binds) and callable(step)


def _row_axis(tail: FusedTail, result) -> int | None:
    """The output axis the tail's rows run along, when its first member reads `result` (or a reshape
    chain of it keeping every axis up to that one) through its own output's map and type; else None."""
    first = tail.members[0][0]
    cut = first.cuts[len(first.op.inputs)]
    if cut is None:
        return None
    axis = cut[0]
    op = first.op
    maps = op.get_indexing_maps().data
    out_map, out_type = maps[len(op.inputs)], op.outputs[0].type
    for i, value in enumerate(op.inputs):
        if value.type != out_type or maps[i] != out_map:
            continue
        while value is not result and isinstance(value.owner, RESHAPES) and value.has_one_use():
            groups = getattr(value.owner, "reassociation", None)
            if groups is None or any(len(g.data) != 1 or g.data[0].value.data != a
                                     for a, g in enumerate(groups.data[:axis + 1])):
                break
            value = value.owner.operands[0]
        if value is result:
            return axis
    return None
