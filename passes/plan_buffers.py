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
from xrelay.passes.kernels.plan_memory import Tracer, assign_blocks, block_starts
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


def _element_dtype(op: memref.AllocOp):
    """The numpy dtype of a plannable allocation's elements (static shape, identity layout, default
    memory space, an element type xrelay runs), else None: it keeps its own allocation."""
    memref_type = op.memref.type
    if (op.dynamic_sizes or not isinstance(memref_type, MemRefType) or not isinstance(memref_type.layout, NoneAttr)
            or not isinstance(memref_type.memory_space, NoneAttr) or any(n < 0 for n in memref_type.get_shape())):
        return None
    try:
        return dtype_of(memref_type.get_element_type())
    except TypeError:
        return None


class _Lifetimes(Tracer):
    """The function's buffers and which top-level op touches which memref value (plan-memory's tracker)."""

    def trace(self, op: Operation, step: int) -> None:
        if isinstance(op, memref.AllocOp) and (dtype := _element_dtype(op)) is not None:
            self.tracker.fresh(self.slot(op.memref), step, op.memref.type.get_shape(), dtype, op)
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
    except Unfollowed:
        return
    tracker = lifetimes.tracker
    returned = [lifetimes.slot(v) for v in ops[-1].operands] if isinstance(ops[-1], func.ReturnOp) else []
    for slot in returned:
        tracker.drop(slot)  # no memory in the arena: its own allocation, which the caller gets
    plan = assign_blocks(tracker, len(ops), returned)
    if plan is None or all(block < 0 for block in plan.block_of):  # (dropped buffers have no block)
        return
    starts, arena_bytes = block_starts(plan.block_sizes)
    offsets = {k: starts[block] for k, block in enumerate(plan.block_of) if block >= 0}
    arena_type = MemRefType(i8, [arena_bytes])
    name = _fresh_symbol(module, f"__arena_{function.sym_name.data}")
    rewriter.insert_op(memref.GlobalOp.get(StringAttr(name), arena_type, UnitAttr(), alignment=ARENA_ALIGNMENT),
                       InsertPoint.before(function))
    arena = memref.GetGlobalOp(name, arena_type)
    arena.memref.name_hint = "arena"
    rewriter.insert_op(arena, InsertPoint.at_start(block))
    for dealloc in [op for op in function.walk() if isinstance(op, memref.DeallocOp)]:
        if tracker.storage.get(lifetimes.slots.get(dealloc.memref, -1)) in offsets:
            rewriter.erase_op(dealloc)
    for k, offset in offsets.items():
        alloc = tracker.buffers[k].op
        shift = arith.ConstantOp(IntegerAttr(offset, IndexType()))
        shift.result.name_hint = "offset"
        rewriter.insert_op(shift, InsertPoint.before(alloc))
        rewriter.replace_op(alloc, memref.ViewOp(arena, shift, [], alloc.memref.type))
    PLANNED.add(len(offsets))
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

