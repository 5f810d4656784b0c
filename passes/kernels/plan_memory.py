"""`plan-memory`: every buffer the CPU executor allocates gets its byte offset in one arena, in the IR.

xrelay's CPU executor runs linalg on tensors (it never runs the bufferized memref form), binding each
`tensor.empty` and `tensor.pad` result to a buffer the program owns and writing structured ops' results
into their outs. That tensor form is what executes here, so the placement is written there, as
attributes (dialects/kernel.py):

- `kernel.offset` on each `tensor.empty`, `tensor.pad` and `tensor.concat` whose buffer the executor
  allocates: its byte offset in the arena;
- `kernel.in_place` on each `tensor.insert_slice` whose source buffer is computed straight into its
  slice of the destination (a concatenation that copies nothing); that source's `tensor.empty` has
  no offset of its own;
- `kernel.arena_bytes` on the function: the arena's size.

The decision, over op order (the executor plans nothing: runtime/executor/memory_plan.py gives its tracker):
which value shares which buffer (views and reshapes share their operand's; a structured op writes its
result into a fresh single-use out, and inside a kernel an elementwise op over an input nobody else
reads), each buffer's last use (a `kernel.dispatch` is one step: everything in it is live while it
runs), in-place inserts (`place_in_slices`), then blocks by best fit (or the block freed last, when
that needs no more memory). Blocks are laid out in the arena in the order they are first taken, each
at a multiple of `ARENA_ALIGNMENT`. A function with an op whose results' memory the executor does not
track is left unplanned, as is one not at the tensor level.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, ShapedType, TensorType, UnitAttr, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation as Structured
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import Rewriter

from xrelay.dialects.constant import dtype_of
from xrelay.dialects.kernel import ARENA_ALIGNMENT, ARENA_BYTES, FORMED, IN_PLACE, OFFSET, DispatchOp, YieldOp
from xrelay.dialects.structured import captured_values
from xrelay.dialects.upstream_tensor import concat_as_inserts
from xrelay.dialects.upstream_tensor_ops import EmptyOp
from xrelay.pass_base import XRelayPass, register_xrelay_pass
from xrelay.runtime.executor.memory_plan import (
    MemoryPlan, PlannedBuffer, StorageTracker, fresh_single_use, last_uses, place_in_slices, reusable_input,
    roots_and_lifetimes,
)

RESHAPES = (tensor.CollapseShapeOp, tensor.ExpandShapeOp, tensor.ReshapeOp, tensor.CastOp)
VIEWS = (tensor.ExtractSliceOp,)
PASSIVE = (arith.ConstantOp, func.ReturnOp)
"""Ops whose results live in memory the executor does not plan (constants) or that have none. Any op
not named here or below (`linalg.broadcast`, say) is one the executor's tracker refuses
(`linalg_exec.PLANNED_OP_KINDS`): its function stays unplanned."""


class Untracked(Exception):
    """An op whose results' memory the executor does not track: the function stays unplanned."""


@dataclass
class Tracer:
    """The executor's `StorageTracker`, filled from the IR: one step per op of the function's block."""

    tracker: StorageTracker
    slots: dict[SSAValue, int]

    def slot(self, value: SSAValue) -> int:
        return self.slots.setdefault(value, len(self.slots))

    def trace(self, op: Operation, step: int, in_kernel: bool) -> None:
        if isinstance(op, tensor.ConcatOp):  # the executor's decomposition; its buffer's offset goes on the concat
            parts, result = concat_as_inserts(op)
            for part in parts:
                self.trace(part, step, in_kernel)
                if isinstance(part, tensor.EmptyOp):
                    self.tracker.buffers[-1].op = op
            self.slots[op.result] = self.slot(result)
            return
        if isinstance(op, DispatchOp):
            for inner in op.body.block.ops:
                if isinstance(inner, YieldOp):
                    for result, value in zip(op.results, inner.values, strict=True):
                        self.slots[result] = self.slot(value)
                else:
                    self.trace(inner, step, True)
            return
        self._memory(op, step, in_kernel)
        values = [*op.operands, *op.results]
        if isinstance(op, Structured):
            values += captured_values(op)
        self.tracker.touch(step, [self.slot(v) for v in values])

    def _fresh(self, op: Operation, step: int) -> None:
        shaped = op.results[0].type
        if not isinstance(shaped, ShapedType) or any(n < 0 for n in shaped.get_shape()):
            raise Untracked(f"{op.name} of a dynamic shape")
        self.tracker.fresh(self.slot(op.results[0]), step, shaped.get_shape(), dtype_of(shaped.get_element_type()), op)

    def _memory(self, op: Operation, step: int, in_kernel: bool) -> None:
        """What `LinalgProgram._compile` tells its tracker about `op` (runtime/executor/linalg_exec.py)."""
        tracker, slot = self.tracker, self.slot
        if isinstance(op, tensor.EmptyOp):
            self._fresh(op, step)
        elif isinstance(op, tensor.PadOp):
            self._fresh(op, step)
        elif isinstance(op, RESHAPES):
            tracker.alias(slot(op.results[0]), slot(op.operands[0]), reshaped=True)
        elif isinstance(op, VIEWS):
            tracker.alias(slot(op.results[0]), slot(op.operands[0]))
        elif isinstance(op, tensor.InsertSliceOp):
            if fresh_single_use(op.dest):
                tracker.alias(slot(op.result), slot(op.dest))
                sizes = tuple(op.static_sizes.get_values())
                if op.parent is not None and all(s >= 0 for s in sizes) and sizes == tuple(op.source.type.get_shape()):
                    # (a concat's inserts are not in the IR: nothing can say they are in place)
                    tracker.place(slot(op.source), slot(op.dest), slice_index(op), step, op)
        elif isinstance(op, PASSIVE) or isinstance(op, Structured) and not op.results:
            pass
        elif isinstance(op, Structured) and all(isinstance(r.type, TensorType) for r in op.results):
            outs = [slot(v) for v in op.outputs]
            if isinstance(op, linalg.FillOp):
                tracker.alias(slot(op.results[0]), outs[0])
            in_place = [fresh_single_use(v) for v in op.outputs]
            reuse = reusable_input(op) if in_kernel else None
            if reuse is not None:  # the op writes over that input; its empty out is never touched
                tracker.drop(outs[0])
                outs, in_place = [slot(op.inputs[reuse])], [True]
            for result, out, written in zip(op.results, outs, in_place):
                if written:
                    tracker.alias(slot(result), out, written_at=step)
        else:
            raise Untracked(op.name)


def slice_index(op: tensor.InsertSliceOp) -> tuple[slice, ...]:
    """The numpy index of an insert's static slice of its destination."""
    offsets, sizes, strides = (tuple(p.get_values()) for p in (op.static_offsets, op.static_sizes, op.static_strides))
    return tuple(slice(o, o + (n - 1) * s + 1, s) for o, n, s in zip(offsets, sizes, strides, strict=True))


def assign_blocks(tracker: StorageTracker, n_steps: int, result_slots: Sequence[int]) -> MemoryPlan | None:
    """Blocks for `tracker`'s buffers, reused once a buffer's last user has run (None if unplannable).
    A buffer placed in a slice (`place_in_slices`) is a view of it; its root lives from the first
    step of any of them to the last use of any."""
    if tracker.unplannable is not None:
        return None
    buffers = tracker.buffers
    last_use = last_uses(tracker, n_steps, result_slots)
    parent = place_in_slices(tracker, last_use)
    root, start, end = roots_and_lifetimes(tracker, last_use, parent)
    block_of, block_sizes = _assign_blocks(buffers, start, end, n_steps, hot=False)
    hot_of, hot_sizes = _assign_blocks(buffers, start, end, n_steps, hot=True)
    if sum(hot_sizes) <= sum(block_sizes):  # the hot plan unless it needs more memory
        block_of, block_sizes = hot_of, hot_sizes
    for k in range(len(buffers)):
        if k not in tracker.unused:
            block_of[k] = block_of[root[k]]
    return MemoryPlan([], block_of, sum(block_sizes), last_use, block_sizes, list(buffers),
                      set(tracker.unused), parent)


def _assign_blocks(buffers: Sequence[PlannedBuffer], start: dict[int, int], end: dict[int, int], n_steps: int,
                   hot: bool) -> tuple[list[int], list[int]]:
    """Per buffer its block (-1 for buffers not in `start`), and the blocks' sizes: buffer r holds its
    block from step `start[r]` to `end[r]`. A new buffer takes the smallest free block that fits, the
    one freed first among equal sizes; `hot`: the free block that fits freed last, whatever its size."""
    block_sizes: list[int] = []
    free: list[int] = []  # blocks no live buffer uses, in the order they were freed
    block_of = [-1] * len(buffers)
    releases: dict[int, list[int]] = {}
    by_step: dict[int, list[int]] = {}
    for r in start:
        releases.setdefault(end[r], []).append(r)
        by_step.setdefault(start[r], []).append(r)
    for step in range(n_steps + 1):
        for k in by_step.get(step, ()):
            need = buffers[k].nbytes
            fits = [i for i, blk in enumerate(free) if block_sizes[blk] >= need]
            if fits:
                blk = free.pop(fits[-1] if hot else min(fits, key=lambda i: block_sizes[free[i]]))
            else:
                blk = len(block_sizes)
                block_sizes.append(need)
            block_of[k] = blk
        # After the step: buffers whose last use it was give their block back (a buffer allocated
        # and last used by the same step is still held while that step runs, hence the order).
        for k in releases.get(step, ()):
            free.append(block_of[k])
    return block_of, block_sizes



def block_starts(block_sizes: Sequence[int]) -> tuple[list[int], int]:
    """Each block's byte offset in one arena, laid out in order at multiples of `ARENA_ALIGNMENT`,
    and the arena's size."""
    starts, arena = [], 0
    for size in block_sizes:
        starts.append(arena)
        arena += -(-max(size, 1) // ARENA_ALIGNMENT) * ARENA_ALIGNMENT
    return starts, arena


def clear_placement(function: func.FuncOp) -> None:
    function.attributes.pop(ARENA_BYTES, None)
    for op in function.walk():
        for name in (OFFSET, IN_PLACE):
            op.attributes.pop(name, None)


def plan_function(function: func.FuncOp) -> bool:
    """Write the placement of `function`'s buffers (see the module docstring); False if unplanned."""
    clear_placement(function)
    block: Block = function.body.block
    if any(not isinstance(arg.type, TensorType) for arg in block.args if isinstance(arg.type, ShapedType)):
        return False
    tracer = Tracer(StorageTracker(), {})
    for arg in block.args:
        tracer.slot(arg)
    ops = list(block.ops)
    try:
        for step, op in enumerate(ops):
            tracer.trace(op, step, False)
    except Untracked:
        return False
    results = [tracer.slot(v) for v in ops[-1].operands] if ops and isinstance(ops[-1], func.ReturnOp) else []
    plan = assign_blocks(tracer.tracker, len(ops), results)
    if plan is None:
        return False
    starts, arena = block_starts(plan.block_sizes)
    rewriter = Rewriter()
    for k, op in enumerate(b.op for b in tracer.tracker.buffers):
        if k in plan.unused or k in plan.parent or plan.block_of[k] < 0:
            continue
        if isinstance(op, tensor.EmptyOp) and not isinstance(op, EmptyOp):  # printed with its attributes
            replacement = EmptyOp(op.dynamic_sizes, op.tensor.type)
            replacement.attributes.update(op.attributes)
            rewriter.replace_op(op, replacement)
            op = replacement
        op.attributes[OFFSET] = IntegerAttr(starts[plan.block_of[k]], i64)
    unmarked = dict(plan.parent)  # a source is placed by one insert: the first into its slice
    for (source, dest, index, _), insert in zip(tracer.tracker.placements, tracer.tracker.placement_ops, strict=True):
        if unmarked.get(source) == (dest, index):
            del unmarked[source]
            insert.attributes[IN_PLACE] = UnitAttr()
    function.attributes[ARENA_BYTES] = IntegerAttr(arena, i64)
    return True


@register_xrelay_pass("plan-memory")
@dataclass(frozen=True)
class PlanMemory(XRelayPass):
    """Place every buffer the CPU executor allocates in one arena, written as `kernel.offset`,
    `kernel.in_place` and `kernel.arena_bytes` (linalg on tensors; see the module docstring)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.walk():
            if isinstance(function, func.FuncOp) and function.body.blocks and plan_function(function):
                function.attributes[FORMED] = UnitAttr()
