"""`plan-buffers`: a function's buffers share one arena, placed by their lifetimes.

After bufferization every intermediate is a `memref.alloc` that a `memref.dealloc` frees: native code
allocates and zeroes each one on every call (ResNet-18's loops: 284 buffers, 173 MB a call), in fresh
memory that faults its pages in and is cold in the caches. This pass does in the IR what TVM's graph
executor does when it sets up storage: every static `memref.alloc` in a function's entry block
becomes a `memref.view` of one arena, a module-level `memref.global @__arena_<function>` (`i8`,
uninitialized), at a byte offset no buffer alive at the same time uses, and the buffers' deallocs go.
The arena lives as long as the module's program, so a call allocates nothing.

Lifetimes are over the entry block's ops (an op nested in a loop counts as its top-level op): a
buffer lives from its alloc to the last op that uses it or a view of it. Blocks are reused as
`plan-memory` reuses them (`assign_blocks`: the free block released last, which is still in cache,
unless best fit needs less memory); each starts at a multiple of `ARENA_ALIGNMENT` bytes.

Left alone: buffers the function returns (the arena is overwritten by the next call), allocs in
nested regions (one per iteration), dynamic shapes, non-identity layouts; and whole functions of
several blocks, functions another function calls (a recursive call would overwrite the caller's
buffers) and functions whose top-level ops make memrefs this pass cannot follow (an `scf.if` or a
call returning one).

The arena is state: calls of one program must not overlap (`NativeProgram` runs one at a time).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, bufferization, func, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, NoneAttr, StringAttr, UnitAttr, i8
from xdsl.ir import Operation
from xdsl.rewriter import InsertPoint, Rewriter

from xrelay.dialects.constant import dtype_of
from xrelay.dialects.kernel import ARENA_ALIGNMENT
from xrelay.instrument.statistics import Statistic
from xrelay.pass_base import XRelayPass, register_xrelay_pass
from xrelay.passes.kernels.plan_memory import Tracer, assign_blocks
from xrelay.runtime.executor.memory_plan import StorageTracker

PLANNED = Statistic("num-planned-buffers", "Number of allocations that became views of an arena")
ARENA = Statistic("arena-bytes", "Bytes of the arenas the planned buffers share")

VIEWS = (memref.SubviewOp, memref.CollapseShapeOp, memref.ExpandShapeOp, memref.CastOp, memref.ReinterpretCastOp,
         memref.ViewOp, bufferization.ToBufferOp, bufferization.ToTensorOp)
"""Ops whose result views their first operand's memory."""

OWN_MEMORY = (memref.AllocOp, memref.AllocaOp, memref.GetGlobalOp)
"""Ops whose memref result is memory no buffer of the function shares."""


class Unfollowed(Exception):
    """A top-level op makes a memref whose memory the pass cannot tell: the function stays unplanned."""


def _plannable(op: Operation) -> bool:
    memref_type = op.results[0].type if isinstance(op, memref.AllocOp) else None
    return (isinstance(memref_type, MemRefType) and not op.dynamic_sizes and isinstance(memref_type.layout, NoneAttr)
            and isinstance(memref_type.memory_space, NoneAttr) and all(n >= 0 for n in memref_type.get_shape()))


class _Lifetimes(Tracer):
    """The function's buffers and which top-level op touches which memref value (plan-memory's tracker)."""

    def trace(self, op: Operation, step: int) -> None:
        if isinstance(op, memref.AllocOp) and _plannable(op):
            element = op.memref.type.get_element_type()
            self.tracker.fresh(self.slot(op.memref), step, op.memref.type.get_shape(), dtype_of(element), op)
        elif isinstance(op, VIEWS):
            self.tracker.alias(self.slot(op.results[0]), self.slot(op.operands[0]))
        elif not isinstance(op, OWN_MEMORY) and any(isinstance(r.type, MemRefType) for r in op.results):
            raise Unfollowed(op.name)
        used = [v for inner in op.walk() for v in inner.operands if isinstance(v.type, MemRefType)]
        self.tracker.touch(step, [self.slot(v) for v in used])


def plan_function(function: func.FuncOp, module: ModuleOp, rewriter: Rewriter) -> None:
    """Place `function`'s buffers in its arena (see the module docstring)."""
    block = function.body.block
    lifetimes = _Lifetimes(StorageTracker(), {})
    ops = list(block.ops)
    try:
        for step, op in enumerate(ops):
            lifetimes.trace(op, step)
    except (Unfollowed, TypeError):
        return
    tracker = lifetimes.tracker
    returned = [lifetimes.slot(v) for v in ops[-1].operands] if isinstance(ops[-1], func.ReturnOp) else []
    for slot in returned:
        tracker.drop(slot)  # no memory in the arena: its own allocation, which the caller gets
    plan = assign_blocks(tracker, len(ops), returned)
    if plan is None or all(plan.block_of[k] < 0 for k in range(len(tracker.buffers))):
        return
    starts, arena_bytes = [], 0
    for size in plan.block_sizes:
        starts.append(arena_bytes)
        arena_bytes += -(-max(size, 1) // ARENA_ALIGNMENT) * ARENA_ALIGNMENT
    arena_type = MemRefType(i8, [arena_bytes])
    name = _fresh_symbol(module, f"__arena_{function.sym_name.data}")
    rewriter.insert_op(memref.GlobalOp.get(StringAttr(name), arena_type, UnitAttr(), alignment=ARENA_ALIGNMENT),
                       InsertPoint.before(function))
    arena = memref.GetGlobalOp(name, arena_type)
    arena.memref.name_hint = "arena"
    rewriter.insert_op(arena, InsertPoint.at_start(block))
    planned = {k for k in range(len(tracker.buffers)) if k not in plan.unused and plan.block_of[k] >= 0}
    for dealloc in [op for op in function.walk() if isinstance(op, memref.DeallocOp)]:
        if tracker.storage.get(lifetimes.slots.get(dealloc.memref, -1)) in planned:
            rewriter.erase_op(dealloc)
    for k in sorted(planned):
        alloc = tracker.buffers[k].op
        shift = arith.ConstantOp(IntegerAttr(starts[plan.block_of[k]], IndexType()))
        shift.result.name_hint = "offset"
        rewriter.insert_op(shift, InsertPoint.before(alloc))
        rewriter.replace_op(alloc, memref.ViewOp(arena, shift, [], alloc.memref.type))
    PLANNED.add(len(planned))
    ARENA.add(arena_bytes)


def _fresh_symbol(module: ModuleOp, base: str) -> str:
    taken = {op.sym_name.data for op in module.ops if hasattr(op, "sym_name") and isinstance(op.sym_name, StringAttr)}
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name


@register_xrelay_pass("plan-buffers", statistics=(PLANNED, ARENA))
@dataclass(frozen=True)
class PlanBuffers(XRelayPass):
    """Make every static `memref.alloc` in a function's entry block a `memref.view` of one arena
    global, placed by the buffers' lifetimes (memref and loops levels; see the module docstring)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        called = {call.callee.root_reference.data for call in op.walk() if isinstance(call, func.CallOp)}
        rewriter = Rewriter()
        for function in list(op.ops):
            if (isinstance(function, func.FuncOp) and len(function.body.blocks) == 1
                    and function.sym_name.data not in called):
                plan_function(function, op, rewriter)

