"""What a compiled linalg program's memory is: buffers, their aliases and lifetimes.

While `LinalgProgram` compiles, a `StorageTracker` learns where each slot's memory comes from: a
fresh buffer (`fresh`), another slot's storage (`alias`: views, an op's result in its out, an
elementwise op over its input), or memory no plan owns. An op the tracker does not know makes the
program unplannable. The `plan-memory` pass (passes/kernels/plan_memory.py) fills the same tracker
from the IR to place the buffers; runtime/executor/placement.py binds a built program to that
placement and checks it with the liveness here (`last_uses`, `roots_and_lifetimes`) and
`place_in_slices`, which says when a concatenation's input may live in its slice. A program no
kernel pass has seen runs unplanned, on fresh arrays. `StepAccess` is what each step reads, binds
and writes: the one record of which steps touch which slots, for the liveness and for the bindings
a placed program learns (runtime/executor/bound_steps.py)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import tensor
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation as Structured
from xdsl.ir import SSAValue


def fresh_single_use(value: SSAValue) -> bool:
    """Whether the executor writes into `value`'s buffer in place: a fresh buffer (an empty's, an
    insert's or a structured op's result) that nothing else reads."""
    return isinstance(value.owner, tensor.EmptyOp | tensor.InsertSliceOp | Structured) and value.has_one_use()


def reusable_input(op: Structured) -> int | None:
    """The input an elementwise tensor op in a kernel writes its result over, if any: `op` has one
    output, from a fresh single-use `tensor.empty`, and all-parallel loops; the input has the output's
    type and map, is used only here (so not returned either), and is the result of another
    structured op (a buffer the program allocated, not an argument, a constant or a view)."""
    if len(op.outputs) != 1 or not isinstance(op.outputs[0].owner, tensor.EmptyOp) \
            or not op.outputs[0].has_one_use() or not op.results:
        return None
    if any(str(it.data) != "parallel" for it in op.get_iterator_types()):
        return None
    maps = op.get_indexing_maps().data
    for i, value in enumerate(op.inputs):
        if (value.type == op.outputs[0].type and maps[i] == maps[-1] and value.has_one_use()
                and isinstance(value.owner, Structured) and value.owner.results):
            return i
    return None


@dataclass
class StepAccess:
    """What one step touches: slots it reads, slots it binds in the environment, and slots whose
    memory it writes (none: the step only binds)."""

    reads: set[int] = field(default_factory=set)
    binds: set[int] = field(default_factory=set)
    writes: set[int] = field(default_factory=set)

    def merge(self, other: StepAccess) -> None:
        self.reads |= other.reads
        self.binds |= other.binds
        self.writes |= other.writes


@dataclass
class PlannedBuffer:
    step: int
    """Index of the step that allocates it."""
    shape: tuple[int, ...]
    dtype: np.dtype
    op: object = None
    """The op allocating it (`tensor.empty`, `tensor.pad`): where a built module writes its offset."""

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize


@dataclass
class StorageTracker:
    """Where every slot's memory comes from, and which steps touch which slots (see the module docstring)."""

    buffers: list[PlannedBuffer] = field(default_factory=list)
    storage: dict[int, int] = field(default_factory=dict)
    """slot -> index into `buffers` (slots absent here use memory the plan does not own)."""
    accesses: dict[int, StepAccess] = field(default_factory=dict)
    """Per step, the slots it touches (`StepAccess`: which it reads, binds, writes)."""
    unplannable: str | None = None
    """Why planning is off (an op with unknown aliasing), or None."""
    unused: set[int] = field(default_factory=set)
    """Buffers no step reads or writes (an elementwise op wrote over its input instead)."""
    reshaped: set[int] = field(default_factory=set)
    """Buffers some slot reshapes (a reshape of a strided slice would copy: never placed in a slice)."""
    overwrites: list[tuple[int, int]] = field(default_factory=list)
    """(step, buffer) for every step writing all of a buffer in place (an op's result in its out)."""
    placements: list[tuple[int, int, tuple[slice, ...], int]] = field(default_factory=list)
    """(source buffer, destination buffer, slice, step) per `tensor.insert_slice` writing in place:
    the source may live in that slice of the destination (`place_in_slices`)."""
    placement_ops: list[object] = field(default_factory=list)
    """Per entry of `placements`, its `tensor.insert_slice` (or None)."""

    def fresh(self, slot: int, step: int, shape: Sequence[int], dtype: np.dtype, op: object = None) -> int:
        """`slot` is a new planned buffer allocated by `step` (of `op`); returns its buffer index."""
        self.buffers.append(PlannedBuffer(step, tuple(shape), np.dtype(dtype), op))
        self.storage[slot] = len(self.buffers) - 1
        return self.storage[slot]

    def alias(self, slot: int, of: int, reshaped: bool = False, written_at: int | None = None) -> None:
        """`slot` shares the memory of slot `of`: a view (`reshaped`: a reshape of it), or the result
        an op (at step `written_at`) wrote over all of `of`."""
        if of in self.storage:
            self.storage[slot] = self.storage[of]
            if reshaped:
                self.reshaped.add(self.storage[of])
            if written_at is not None:
                self.overwrites.append((written_at, self.storage[of]))

    def place(self, source: int, dest: int, index: tuple[slice, ...], step: int, op: object = None) -> None:
        """`step` (of `op`) copies slot `source`, whole, into slice `index` of slot `dest`'s buffer."""
        if source in self.storage and dest in self.storage:
            self.placements.append((self.storage[source], self.storage[dest], index, step))
            self.placement_ops.append(op)

    def drop(self, slot: int) -> None:
        """The buffer of `slot` (an allocation) is never read or written: it gets no memory."""
        if slot in self.storage:
            self.unused.add(self.storage[slot])

    def touch(self, step: int, slots: Sequence[int]) -> None:
        """`step` touches `slots` (the pass's tracer: which ones it writes does not matter there)."""
        self.accesses.setdefault(step, StepAccess()).reads.update(slots)

    def refuse(self, why: str) -> None:
        if self.unplannable is None:
            self.unplannable = why


@dataclass
class MemoryPlan:
    arrays: list[np.ndarray]
    """Per planned buffer, its array (a view into the arena; empty in the pass's plan)."""
    block_of: list[int]
    """Per planned buffer, the index of the block it lives in (the pass's plan; empty in the executor's)."""
    peak_bytes: int
    """Bytes of all blocks (the pass's plan) or of the arena (the executor's): the memory a run needs."""
    last_use: list[int]
    block_sizes: list[int] = field(default_factory=list)
    """Bytes of each block."""
    buffers: list[PlannedBuffer] = field(default_factory=list)
    unused: set[int] = field(default_factory=set)
    """Buffers with no memory (read-only placeholders)."""
    parent: dict[int, tuple[int, tuple[slice, ...]]] = field(default_factory=dict)
    """Buffers placed in a slice of another (`place_in_slices`)."""
    arena: np.ndarray | None = None
    """The one allocation every array is a view of (runtime/executor/placement.py); None in the pass's plan."""


def last_uses(tracker: StorageTracker, n_steps: int, result_slots: Sequence[int]) -> list[int]:
    """Per buffer, the last step touching a slot that shares its memory (`n_steps` if returned)."""
    last_use = [b.step for b in tracker.buffers]
    for step, access in tracker.accesses.items():
        for slot in access.reads | access.binds | access.writes:
            k = tracker.storage.get(slot)
            if k is not None:
                last_use[k] = max(last_use[k], step)
    for slot in result_slots:  # returned: alive until the results are copied out
        k = tracker.storage.get(slot)
        if k is not None:
            last_use[k] = n_steps
    return last_use


def roots_and_lifetimes(tracker: StorageTracker, last_use: Sequence[int],
                        parent: dict[int, tuple[int, tuple[slice, ...]]]) -> tuple[list[int], dict[int, int], dict[int, int]]:
    """Per buffer its root (itself, or the buffer it is placed in, transitively), and per root of a
    used buffer the first step any buffer of its tree is allocated and the last any is used."""
    buffers = tracker.buffers
    root = list(range(len(buffers)))
    for k in range(len(buffers)):
        while root[k] in parent:
            root[k] = parent[root[k]][0]
    start: dict[int, int] = {}
    end: dict[int, int] = {}
    for k, b in enumerate(buffers):
        if k not in tracker.unused:
            r = root[k]
            start[r], end[r] = min(start.get(r, b.step), b.step), max(end.get(r, last_use[k]), last_use[k])
    return root, start, end


def place_in_slices(tracker: StorageTracker, last_use: Sequence[int],
                    chosen: Collection[int] | None = None) -> dict[int, tuple[int, tuple[slice, ...]]]:
    """Per buffer computed straight into a slice of another, (that buffer, the slice): a concatenation
    then copies nothing. An insert of S into slice I of D places S there unless S is placed already,
    is or holds D, is reshaped, does not have the slice's shape and dtype, another insert into D
    overlaps I, or a step writes all of D (or what holds D) while S is alive. Only the placements
    whose indices are in `chosen` (all when None) are candidates; every insert counts as a writer."""
    buffers, parent = tracker.buffers, {}
    children: dict[int, list[int]] = {}
    inserts: dict[int, list[tuple[int, tuple[slice, ...]]]] = {}
    for _, dest, index, step in tracker.placements:
        inserts.setdefault(dest, []).append((step, index))
    for i, (source, dest, index, step) in enumerate(tracker.placements):
        if chosen is not None and i not in chosen:
            continue
        chain = [dest]
        while chain[-1] in parent:
            chain.append(parent[chain[-1]][0])
        shape, dest_shape = buffers[source].shape, buffers[dest].shape
        if (source in parent or source in chain or source in tracker.reshaped or source in tracker.unused
                or dest in tracker.unused or buffers[source].dtype != buffers[dest].dtype
                or shape != tuple(len(range(*sl.indices(n))) for sl, n in zip(index, dest_shape))):
            continue
        if any(other != step and _overlap(index, slices, dest_shape) for other, slices in inserts[dest]):
            continue
        tree = [source]
        for k in tree:
            tree += children.get(k, [])
        first, last = min(buffers[k].step for k in tree), max(last_use[k] for k in tree)
        if any(first <= written <= last and k in chain for written, k in tracker.overwrites):
            continue
        parent[source] = (dest, index)
        children.setdefault(dest, []).append(source)
    return parent


def _overlap(a: tuple[slice, ...], b: tuple[slice, ...], shape: tuple[int, ...]) -> bool:
    """Whether slices `a` and `b` of an array of `shape` may share an element (each axis's range of
    positions, ignoring steps, intersects)."""
    for sa, sb, n in zip(a, b, shape, strict=True):
        ra, rb = range(*sa.indices(n)), range(*sb.indices(n))
        if not ra or not rb or max(min(ra), min(rb)) > min(max(ra), max(rb)):
            return False
    return True

