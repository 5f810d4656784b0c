"""Vectorised numpy executor for modules at the linalg (tensor) and memref levels.

`LinalgProgram(module)` translates `@main` once into numpy closures, one per op, built per op kind
(`data_steps`, `pad_step`, `structured_step`; a `kernel.dispatch` made one step
as its ops say). Tensor-level ops produce fresh arrays (outs copied unless fresh and single-use);
memref-level ops write their outs in place; reshapes are views. While it runs, BLAS is
single-threaded and a kernel splits over the worker threads as its `split` attribute says."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from xdsl.dialects import arith, func, memref, tensor
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, MemRefType, ModuleOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Operation, SSAValue

from xrelay.dialects.arguments import argument_names
from xrelay.dialects.kernel import DispatchOp, is_built
from xrelay.dialects.kernel import YieldOp as KernelYieldOp
from xrelay.dialects.upstream_tensor import concat_as_inserts
from xrelay.runtime.executor.bound_steps import BoundRuns
from xrelay.runtime.parallel.threads import split_blas_threads
from xrelay.runtime.executor.data_steps import (
    RESHAPE_KINDS, compile_allocation, compile_broadcast, compile_constant, compile_copy, compile_dealloc,
    compile_get_global, compile_insert_slice, compile_reshape, compile_slice,
)
from xrelay.runtime.executor.memory_plan import StepAccess, StorageTracker, fresh_single_use
from xrelay.runtime.executor.pad_step import PadStep, compile_pad, fold_transpose
from xrelay.runtime.executor.placement import ir_plan, is_placed
from xrelay.runtime.executor.plan import ChunkedOp, FusedTail
from xrelay.runtime.executor.structured_step import compile_structured_step
from xrelay.runtime.kernels.conv_epilogue import ConvStep, give_pad, give_tail, tail_into_pad
from xrelay.runtime.executor.program_entry import (
    bind_inputs, cached_program, check_argument, check_no_use_after_dealloc, entry_and_globals,
)
from xrelay.runtime.kernels.body_program import aligned_constant, scalar_op_step
from xrelay.runtime.kernels.affine_views import is_bare_permutation, unit_axes
from xrelay.runtime.kernels.linalg_structured import (
    ExecutionError,
    Structured,
    contraction_pair,
    overwritten_identity,
)

__all__ = ["ExecutionError", "LinalgProgram", "compile_linalg", "run_linalg"]


VIEW_KINDS = (*RESHAPE_KINDS, tensor.ExtractSliceOp, memref.SubviewOp)
"""Op kinds whose step binds a view of its operand: it writes no memory."""

PLANNED_OP_KINDS = (
    func.ReturnOp, arith.ConstantOp, tensor.EmptyOp, memref.AllocOp, memref.AllocaOp, memref.DeallocOp,
    memref.GetGlobalOp, *VIEW_KINDS, tensor.InsertSliceOp, memref.CopyOp, tensor.PadOp, Structured,
)
"""Op kinds whose results' memory `_compile` tells the `StorageTracker` about (fresh or an alias);
any other op makes a placed program refuse its placement (runtime/executor/placement.py)."""

COMPILERS = (
    (arith.ConstantOp, compile_constant), ((tensor.EmptyOp, memref.AllocOp, memref.AllocaOp), compile_allocation),
    (memref.DeallocOp, compile_dealloc), (memref.GetGlobalOp, compile_get_global), (RESHAPE_KINDS, compile_reshape),
    ((tensor.ExtractSliceOp, memref.SubviewOp), compile_slice), (tensor.InsertSliceOp, compile_insert_slice),
    (tensor.PadOp, compile_pad), (linalg.BroadcastOp, compile_broadcast), (memref.CopyOp, compile_copy),
    (Structured, compile_structured_step),
)
"""Per op kind, the function appending its step to a `LinalgProgram` (`data_steps`, `pad_step`, ...)."""


class LinalgProgram:
    """`@main` of a linalg- or memref-level module compiled to numpy closures; call with arrays."""

    def __init__(self, module: ModuleOp, entry: str = "main"):
        main, global_arrays = entry_and_globals(module, entry)
        self.globals: dict[str, np.ndarray] = {name: aligned_constant(a) for name, a in global_arrays.items()}
        self.func = main
        self.arg_names = argument_names(main)
        self.arg_types = [arg.type for arg in main.body.block.args]
        self.slots: dict[SSAValue, int] = {}
        for arg in main.body.block.args:
            self._slot(arg)
        self.steps: list[Callable[[list], None]] = []
        self.fill_steps: dict[Operation, tuple[int, Callable[[list], None]]] = {}
        self.result_slots: list[int] = []
        self.memory = StorageTracker()
        self._tail = None  # the fused elementwise tail the next op may join (see `_fuse`)
        self._planned: list[np.ndarray | None] = []  # per planned buffer, its array once planned
        self.accesses = self.memory.accesses  # per step index, what it touches (runtime/executor/bound_steps.py)
        placed = is_placed(main)  # by `plan-memory` (runtime/executor/placement.py); else fresh arrays every run
        self._views_cached = [placed]  # whether kernels keep the views they made: placed programs
        self._tensor_level = not any(isinstance(arg.type, MemRefType) for arg in main.body.block.args)
        self.built = is_built(main)
        """Whether kernel formation ran (`passes/kernels`): the program then runs each `kernel.dispatch`
        as its attributes say and every other op by itself, and fuses nothing on its own."""
        self.kernels: list[tuple[DispatchOp, int, range]] = []
        """Each `kernel.dispatch`, the index of the step that runs it, and the steps of its members."""
        self._kernel: DispatchOp | None = None  # the dispatch whose members are being compiled
        check_no_use_after_dealloc(main.body.block)
        for op in main.body.block.ops:
            self._add(op)
        self.plan = ir_plan(main, self.memory, len(self.steps), self.result_slots) if placed else None
        if placed:
            self._planned[:] = self.plan.arrays
        self.peak_bytes = self.plan.peak_bytes if placed else None
        """Bytes of activation memory a run uses (the arena), or None when not placed."""
        self.runs = BoundRuns(self) if placed and self._tensor_level else None
        """The bindings runs keep (runtime/executor/bound_steps.py); None unless the program is at the
        tensor level (memref arguments may be written through views the plan cannot see) and placed."""

    def _add(self, op: Operation) -> None:
        """Compile `op` into steps and record what they touch (memory, bindings)."""
        if isinstance(op, DispatchOp):
            self._compile_kernel(op)
            return
        if isinstance(op, tensor.ConcatOp):  # as upstream decomposes it: inserts into one buffer
            parts, result = concat_as_inserts(op)
            for part in parts:
                self._add(part)
                if isinstance(part, tensor.EmptyOp):  # its placement is written on the concat
                    self.memory.buffers[-1].op = op
            self.slots[op.result] = self._slot(result)
            return
        step = len(self.steps)
        self._compile(op)
        if not isinstance(op, PLANNED_OP_KINDS):
            self.memory.refuse(f"{op.name}: where its results' memory comes from is not tracked")
        self._tensor_level = self._tensor_level and not any(isinstance(r.type, MemRefType) for r in op.results)
        if len(self.steps) > step:
            self.accesses.setdefault(step, StepAccess()).merge(self._access(op))

    def _compile_kernel(self, dispatch: DispatchOp) -> None:
        """The steps of a `kernel.dispatch`: its members', then made one step as its ops say (never by
        looking around it). A convolution root runs the epilogue on each block of output rows it
        finishes (`conv_epilogue.give_tail`) and writes them into the destination pad (`give_pad`); an
        epilogue and a pad without a convolution become one `TailIntoPad`; a "transpose" kernel's pad
        copies through the transpose (`pad_step.fold_transpose`). Its results are the yielded values' slots."""
        self._tail, self._kernel = None, dispatch
        start = len(self.steps)
        for op in dispatch.body.block.ops:
            if isinstance(op, KernelYieldOp):
                for result, value in zip(dispatch.results, op.values, strict=True):
                    self.slots[result] = self._slot(value)
            else:
                self._add(op)
        self._tail, self._kernel = None, None
        steps, accesses, memory = self.steps, self.accesses, self.memory
        conv, tail, pad = (next((i for i in range(start, len(steps)) if isinstance(steps[i], kind) and i in accesses),
                                None) for kind in (ConvStep, FusedTail, PadStep))
        host = conv
        if dispatch.root.data == "transpose" and tail is not None and pad is not None and len(steps[tail].members) == 1:
            fold_transpose(self, tail, steps[pad], pad)
            host = pad
        elif conv is not None:
            if tail is not None and tail > conv and give_tail(steps, accesses, memory, conv, tail):
                host = tail
            if pad is not None and pad > host:
                give_pad(steps, accesses, memory, self._slot, host, pad)
        elif tail is not None and pad is not None and pad > tail:
            tail_into_pad(steps, accesses, memory, self._slot, tail, pad)
            host = tail
        if host is None:
            host = max((i for i in range(start, len(steps)) if i in accesses), default=len(steps) - 1)
        self.kernels.append((dispatch, host, range(start, len(steps))))

    def _access(self, op: Operation) -> StepAccess:
        """What the step of `op` reads, binds and writes."""
        slot = self._slot
        reads = [*op.operands]
        for region in op.regions:  # values a body (linalg, tensor.pad) reads from outside it
            for inner in region.walk():
                reads += [v for v in inner.operands if v in self.slots and v.owner is not region.block
                          and v.owner not in region.block.ops]
        results = {slot(r) for r in op.results}
        binding = isinstance(op, arith.ConstantOp | tensor.EmptyOp | memref.AllocOp | memref.AllocaOp
                             | memref.GetGlobalOp) or isinstance(op, VIEW_KINDS)
        writes = set() if binding else (results or {slot(v) for v in getattr(op, "outputs", ())})
        return StepAccess({slot(v) for v in reads}, results, writes)

    def _slot(self, value: SSAValue) -> int:
        if value not in self.slots:
            self.slots[value] = len(self.slots)
        return self.slots[value]

    def _elide_zero_fill(self, op: Structured, k: int) -> bool:
        """Whether output k of `op` is a contraction output whose init is a zero `linalg.fill` used only
        here, or a pooling's or a reduction without windows' (`overwritten_identity`) whose fill
        is its reduction's identity; if so the fill's step is dropped (the contraction, the window
        reduction or the one `ufunc.reduce` overwrites every element)."""
        init = op.outputs[k]
        fill = init.owner  # (kernels are formed on tensors: the fill's result)
        if self._kernel is None or fill not in self.fill_steps:  # outside a kernel every op runs by itself
            return False
        if not (init.has_one_use() and fresh_single_use(fill.outputs[0])):
            return False  # dropped, the fill would leave this op writing into a tensor others read
        value = fill.inputs[0].owner
        if not (isinstance(value, arith.ConstantOp) and isinstance(value.value, FloatAttr | IntegerAttr)):
            return False
        number = value.value.value.data
        if not (number == 0 and contraction_pair(op, k) is not None
                and is_bare_permutation(op.get_indexing_maps().data[len(op.inputs) + k].data, unit_axes(init.type))
                or overwritten_identity(op, k) == number):  # a pooling, a ufunc.reduce: written whole
            return False
        index, alias = self.fill_steps.pop(fill)
        self.steps[index] = alias
        if index in self.accesses:  # now a binding: it writes no memory
            self.accesses[index].writes.clear()
        return True

    def _algorithm(self) -> str | None:
        """The convolution algorithm the op being compiled runs by: its kernel's ("generic" when no
        pass chose one, or outside a kernel of a built program); None in a program not built (a
        convolution by im2col, a depthwise one by the depthwise kernel: `ConvGeometry.runner`)."""
        if not self.built:
            return None
        if self._kernel is None or self._kernel.algorithm is None:
            return "generic"
        return self._kernel.algorithm.data

    def _split(self, op: Operation) -> tuple[int, int | None]:
        """Over how many threads `op` (being compiled) splits, and along which axis of its result: its
        kernel's `split` (set by `split-kernels`; the axis only when `op` has one result of the rank of
        the kernel's first one); (1, None) outside a kernel, or in one without `split`."""
        split = self._kernel.split_parts() if self._kernel is not None else None
        if split is None:
            return 1, None
        first = self._kernel.results[0] if self._kernel.results else None
        same_rank = (len(op.results) == 1 and first is not None
                     and len(op.results[0].type.get_shape()) == len(first.type.get_shape()))
        return split[1], split[0] if same_rank else None

    def _fuse(self, op: Structured, chunked: ChunkedOp, prepare, finish) -> None:
        """Add an elementwise op to the fused tail it continues (it reads the last member's result
        with its output's map, writing over it or not, with only constants and allocations compiled
        in between), or start one. The tail's step moves to the position of its newest member, whose
        operands all exist there."""
        tail = self._tail
        maps = op.get_indexing_maps().data
        if tail is not None and self._kernel is not None and tail[0].accepts(chunked) and any(
                v is tail[1] and maps[i] == maps[-1] and v.type == op.outputs[0].type for i, v in enumerate(op.inputs)):
            group, _, index = tail
            group.add(chunked, prepare, finish)
            self.steps[index] = lambda env: None
            self.accesses[len(self.steps)] = self.accesses.pop(index)  # the earlier members run here
        else:
            group = FusedTail(chunked, prepare, finish)
        self._tail = (group, op.results[0], len(self.steps))
        self.steps.append(group)

    def _compile(self, op: Operation) -> None:
        if not isinstance(op, arith.ConstantOp | tensor.EmptyOp | memref.GetGlobalOp | Structured):
            self._tail = None  # a fused tail only runs later than its members across binders
        if isinstance(op, func.ReturnOp):
            self.result_slots = [self._slot(v) for v in op.operands]
            return
        compile_op = next((fn for kinds, fn in COMPILERS if isinstance(op, kinds)), None)
        if compile_op is not None:
            compile_op(self, op)
        elif op.dialect_name() in ("arith", "math") and len(op.results) == 1:  # outside a body: a scalar's
            self.steps.append(scalar_op_step(op, [self._slot(v) for v in op.operands], self._slot(op.results[0])))
        else:
            raise ExecutionError(f"unsupported op {op.name} at the linalg/memref level")

    def __call__(self, *args: np.ndarray) -> list[np.ndarray]:
        if len(args) != len(self.arg_types):
            raise ExecutionError(f"@main takes {len(self.arg_types)} arguments, got {len(args)}")
        runs = self.runs
        env: list = [None] * len(self.slots) if runs is None or runs.bound is None else list(runs.bound)
        for i, (array, arg_type) in enumerate(zip(args, self.arg_types, strict=True)):
            env[i] = check_argument(array, arg_type, self.arg_names[i])
        # BLAS's own threads synchronise per call: BLAS single-threaded, a kernel split over workers.
        with split_blas_threads():
            if runs is None:
                for step in self.steps:
                    step(env)
            else:
                runs.run(env)
        # Copies: a result may be a view of another result or a read-only constant.
        return [np.array(env[s]) for s in self.result_slots]


def compile_linalg(module: ModuleOp) -> LinalgProgram:
    """Compile `@main` of a linalg- or memref-level module once, for repeated runs."""
    return LinalgProgram(module)


def run_linalg(module: ModuleOp, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run `@main` of a linalg- or memref-level module on `inputs` (by argument name or position),
    compiled once and reused while the module is unchanged."""
    program = cached_program(module, LinalgProgram)
    return program(*bind_inputs(program.arg_names, inputs))
