"""Static memory planning for a compiled linalg/memref program: liveness-based buffer reuse.

As TVM's graph memory planner does, but over the executor's steps: while `LinalgProgram` compiles,
a `StorageTracker` learns, for every slot a step defines, where its memory comes from:

- a fresh buffer the plan owns (`tensor.empty`, `memref.alloc`): `fresh`;
- the storage of another slot (views, reshapes, slices; a structured op's result written into its
  out; an elementwise op writing over its input): `alias`;
- memory the plan does not own (arguments, constants, globals, copies made while running):
  anything else.

`plan_memory` then finds each buffer's last use (the last step touching any slot that shares its
storage; the returned values live to the end) and hands the buffers, in step order, blocks of
memory: a block whose buffer has had its last use is reused by the next allocation it fits
(best fit, else a new block). The blocks are allocated once; a run allocates no activations.
An op the tracker was not told about makes the program unplannable (`plan_memory` returns None):
its results might share memory in ways the plan cannot see.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass
class PlannedBuffer:
    step: int
    """Index of the step that allocates it."""
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize


@dataclass
class StorageTracker:
    """Where every slot's memory comes from, and which steps touch which slots (see the module docstring)."""

    buffers: list[PlannedBuffer] = field(default_factory=list)
    storage: dict[int, int] = field(default_factory=dict)
    """slot -> index into `buffers` (slots absent here use memory the plan does not own)."""
    touched: list[tuple[int, tuple[int, ...]]] = field(default_factory=list)
    """(step, slots the step reads or writes)."""
    unplannable: str | None = None
    """Why planning is off (an op with unknown aliasing), or None."""
    unused: set[int] = field(default_factory=set)
    """Buffers no step reads or writes (an elementwise op wrote over its input instead)."""

    def fresh(self, slot: int, step: int, shape: Sequence[int], dtype: np.dtype) -> int:
        """`slot` is a new planned buffer allocated by `step`; returns its buffer index."""
        self.buffers.append(PlannedBuffer(step, tuple(shape), np.dtype(dtype)))
        self.storage[slot] = len(self.buffers) - 1
        return self.storage[slot]

    def alias(self, slot: int, of: int) -> None:
        """`slot` shares the memory of slot `of` (a view, or an op's result written into `of`)."""
        if of in self.storage:
            self.storage[slot] = self.storage[of]

    def drop(self, slot: int) -> None:
        """The buffer of `slot` (an allocation) is never read or written: it gets no memory."""
        if slot in self.storage:
            self.unused.add(self.storage[slot])

    def touch(self, step: int, slots: Sequence[int]) -> None:
        self.touched.append((step, tuple(slots)))

    def refuse(self, why: str) -> None:
        if self.unplannable is None:
            self.unplannable = why


@dataclass
class MemoryPlan:
    arrays: list[np.ndarray]
    """Per planned buffer, its array (a view into its block)."""
    block_of: list[int]
    """Per planned buffer, the index of the block it lives in."""
    peak_bytes: int
    """Bytes of all blocks: the activation memory a run needs."""
    unplanned_bytes: int
    """Bytes of all planned buffers that are used, had each its own allocation."""
    last_use: list[int]


def plan_memory(tracker: StorageTracker, n_steps: int, result_slots: Sequence[int]) -> MemoryPlan | None:
    """Blocks for `tracker`'s buffers, reused once a buffer's last user has run (None if unplannable)."""
    if tracker.unplannable is not None:
        return None
    buffers = tracker.buffers
    last_use = [b.step for b in buffers]
    for step, slots in tracker.touched:
        for slot in slots:
            k = tracker.storage.get(slot)
            if k is not None:
                last_use[k] = max(last_use[k], step)
    for slot in result_slots:  # returned: alive until the results are copied out
        k = tracker.storage.get(slot)
        if k is not None:
            last_use[k] = n_steps
    block_sizes: list[int] = []
    free: list[int] = []  # blocks no live buffer uses
    block_of = [-1] * len(buffers)
    releases: dict[int, list[int]] = {}
    for k, end in enumerate(last_use):
        releases.setdefault(end, []).append(k)
    by_step: dict[int, list[int]] = {}
    for k, b in enumerate(buffers):
        by_step.setdefault(b.step, []).append(k)
    for step in range(n_steps + 1):
        for k in by_step.get(step, ()):
            if k in tracker.unused:
                continue
            need = buffers[k].nbytes
            fits = [blk for blk in free if block_sizes[blk] >= need]
            if fits:
                blk = min(fits, key=lambda b: block_sizes[b])
                free.remove(blk)
            else:
                blk = len(block_sizes)
                block_sizes.append(need)
            block_of[k] = blk
        # After the step: buffers whose last use it was give their block back (a buffer allocated
        # and last used by the same step is still held while that step runs, hence the order).
        for k in releases.get(step, ()):
            if block_of[k] >= 0:
                free.append(block_of[k])
    blocks = [np.empty(max(size, 1), np.uint8) for size in block_sizes]
    arrays = []
    for k, b in enumerate(buffers):
        if block_of[k] < 0:  # unused: a read-only placeholder of the right shape, no memory
            arrays.append(np.broadcast_to(np.zeros((), b.dtype), b.shape))
            continue
        raw = blocks[block_of[k]][:b.nbytes]
        arrays.append(raw.view(b.dtype).reshape(b.shape))
    used = [b.nbytes for k, b in enumerate(buffers) if k not in tracker.unused]
    return MemoryPlan(arrays, block_of, sum(block_sizes), sum(used), last_use)
