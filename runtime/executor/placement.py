"""A built module's memory placement, read from its IR (`plan-memory`, dialects/kernel.py).

`kernel.arena_bytes` on the function, `kernel.offset` on each `tensor.empty` and `tensor.pad`,
`kernel.in_place` on inserts whose source lives in its slice. `ir_plan` allocates the arena once and
makes each buffer a view of it, deciding nothing; it checks that every offset is inside the arena,
no two buffers alive at one step overlap, and each in-place insert can be honoured
(`memory_plan.place_in_slices`), else an ExecutionError naming the op."""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation

from xrelay.dialects.kernel import ARENA_ALIGNMENT, ARENA_BYTES, IN_PLACE, OFFSET
from xrelay.runtime.executor.memory_plan import (
    MemoryPlan, StorageTracker, last_uses, place_in_slices, roots_and_lifetimes,
)
from xrelay.runtime.executor.program_entry import located
from xrelay.runtime.kernels.linalg_structured import ExecutionError


def aligned_bytes(nbytes: int) -> np.ndarray:
    """`nbytes` uninitialized bytes starting at a multiple of `ARENA_ALIGNMENT` (a cache line)."""
    raw = np.empty(nbytes + ARENA_ALIGNMENT, np.uint8)
    return raw[-raw.ctypes.data % ARENA_ALIGNMENT:][:nbytes]


def is_placed(function: func.FuncOp) -> bool:
    """Whether `plan-memory` placed `function`'s buffers (it has `kernel.arena_bytes`)."""
    return ARENA_BYTES in function.attributes


def named(op: Operation) -> str:
    """`op` as an error names it: its location, its name and its result's SSA name."""
    result = f" %{op.results[0].name_hint}" if op.results and op.results[0].name_hint else ""
    return f"{located(op)}{op.name}{result}"


def _integer(op: Operation, name: str) -> int:
    attr = op.attributes.get(name)
    if not isinstance(attr, IntegerAttr):
        raise ExecutionError(f"{named(op)}: {name} must be an integer attribute")
    return attr.value.data


def ir_plan(function: func.FuncOp, tracker: StorageTracker, n_steps: int, result_slots: Sequence[int]) -> MemoryPlan:
    """The plan `function`'s placement attributes describe (see the module docstring)."""
    arena_bytes = _integer(function, ARENA_BYTES)
    if tracker.unplannable is not None:
        raise ExecutionError(f"{named(function)} has {ARENA_BYTES}, but {tracker.unplannable}")
    buffers = tracker.buffers
    last_use = last_uses(tracker, n_steps, result_slots)
    parent = _in_place_inserts(function, tracker, last_use)
    root, start, end = roots_and_lifetimes(tracker, last_use, parent)
    offsets = [0] * len(buffers)
    for r in start:
        op = buffers[r].op
        if not isinstance(op, Operation) or OFFSET not in op.attributes:
            where = named(op) if isinstance(op, Operation) else "a buffer"
            raise ExecutionError(f"{where} has no {OFFSET}, but its function is placed ({ARENA_BYTES})")
        offsets[r] = _integer(op, OFFSET)
        if offsets[r] < 0 or offsets[r] + buffers[r].nbytes > arena_bytes or offsets[r] % buffers[r].dtype.itemsize:
            raise ExecutionError(f"{named(op)}: {OFFSET} = {offsets[r]} does not hold its {buffers[r].nbytes} "
                                 f"bytes inside the {arena_bytes}-byte arena at a multiple of "
                                 f"{buffers[r].dtype.itemsize}")
    _check_disjoint(buffers, offsets, start, end)
    arena = aligned_bytes(arena_bytes)
    arrays: list[np.ndarray | None] = [None] * len(buffers)

    def array(k: int) -> np.ndarray:
        if arrays[k] is None:
            b = buffers[k]
            if k in tracker.unused:  # a read-only placeholder of the right shape, no memory
                arrays[k] = np.broadcast_to(np.zeros((), b.dtype), b.shape)
            elif k in parent:  # a view of the slice of its destination it is computed in
                arrays[k] = array(parent[k][0])[parent[k][1]]
            else:
                arrays[k] = arena[offsets[k]:offsets[k] + b.nbytes].view(b.dtype).reshape(b.shape)
        return arrays[k]

    return MemoryPlan([array(k) for k in range(len(buffers))], [], arena_bytes, last_use, [], list(buffers),
                      set(tracker.unused), parent, arena)


def _in_place_inserts(function: func.FuncOp, tracker: StorageTracker,
                      last_use: Sequence[int]) -> dict[int, tuple[int, tuple[slice, ...]]]:
    """Per source buffer of a `kernel.in_place` insert, (its destination buffer, the slice); an
    ExecutionError for a marked insert the program cannot run in place."""
    marked = {i for i, op in enumerate(tracker.placement_ops) if op is not None and IN_PLACE in op.attributes}
    parent = place_in_slices(tracker, last_use, chosen=marked)
    for i in marked:
        source, dest, index, _ = tracker.placements[i]
        if parent.get(source) != (dest, index):
            raise ExecutionError(f"{named(tracker.placement_ops[i])}: {IN_PLACE}, but its source cannot live in "
                                 "the slice (reshaped, placed twice, another insert overlaps it, or the "
                                 "destination is written while the source is alive)")
    recorded = {id(op) for i, op in enumerate(tracker.placement_ops) if i in marked}
    for op in function.walk():
        if IN_PLACE in op.attributes and id(op) not in recorded:
            raise ExecutionError(f"{named(op)}: {IN_PLACE}, but the program copies it (its destination is not a "
                                 "buffer only it writes, or the source's shape is not the slice's)")
    return parent


def _check_disjoint(buffers: Sequence, offsets: Sequence[int], start: dict[int, int], end: dict[int, int]) -> None:
    """An ExecutionError naming two buffers alive at one step whose bytes overlap (a buffer is alive
    from the step allocating it to its last use, both included)."""
    alive: list[tuple[int, int]] = []  # (last step, buffer) heap
    for r in sorted(start, key=lambda r: (start[r], r)):
        while alive and alive[0][0] < start[r]:
            heapq.heappop(alive)
        lo, hi = offsets[r], offsets[r] + buffers[r].nbytes
        for _, q in alive:
            if offsets[q] < hi and lo < offsets[q] + buffers[q].nbytes:
                raise ExecutionError(
                    f"{named(buffers[r].op)}: {OFFSET} = {lo} overlaps {named(buffers[q].op).split(': ')[-1]} "
                    f"({OFFSET} = {offsets[q]}, {buffers[q].nbytes} bytes), alive at the same time "
                    f"(steps {start[r]}-{end[r]} and {start[q]}-{end[q]})")
        heapq.heappush(alive, (end[r], r))
