"""`@main` of a loops-level module as one C translation unit.

`CTranslation(module)` writes `int xrelay_main(void **slots, int64_t xr_threads)`: `slots` holds a
pointer per `@main` argument, then per result (a contiguous array the function copies the result
into), then per `memref.global` the function reads (`global_names`, in order). Every memref is a
pointer to the first element of its buffer (`restrict`: xrelay passes distinct copies, and the
`memref.view`s of one buffer that are used together do not overlap, as `plan-buffers` places them), indexed
through its type's static layout (row-major, or a subview's strides and offset), as the numpy
loops executor indexes its flat arrays. SSA values are C locals of their own type; `scf.for` is a
C `for` (loop-carried values are locals assigned by `scf.yield`); an `scf.for` whose iterations write
disjoint elements (`access.parallel_safe`) and an `scf.parallel` run across `xr_threads` OpenMP
threads. An index that cannot be proven inside its memref is checked: the function then returns
the 1-based number of the failing access (`checks` says which op it was), -2 after an integer
division by zero, -1 when an allocation failed, and 0 on success.
"""

from __future__ import annotations

import math

from xdsl.dialects import affine, arith, bufferization, func, memref, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineExpr

from xrelay.runtime.reference.affine_loops import check_static_bounds, constant_int, scf_loops
from xrelay.runtime.reference.loops_exec import SourceWriter
from xrelay.runtime.kernels.affine_views import ExecutionError
from xrelay.codegen.access import IndexRanges, free_values, offset_extent, parallel_safe
from xrelay.codegen.c_ops import PRELUDE, c_literal, c_type, scalar_expression
from xrelay.runtime.native.build import NativeUnsupported
from xrelay.runtime.executor.program_entry import entry_and_globals, located
from xrelay.runtime.executor.static_layouts import layout_of, static_layouts

_VIEWS = (memref.CollapseShapeOp, memref.ExpandShapeOp, memref.CastOp, memref.SubviewOp,
          bufferization.ToBufferOp, bufferization.ToTensorOp)
"""Ops whose result is another view of their first operand's buffer."""

PARALLEL_WORK = 1 << 20
"""Scalar op executions below which a loop stays on one thread. A fork-join costs microseconds on an
idle machine, but on a shared one the join waits until every thread of the team has been scheduled
again, which takes milliseconds: only loops of about a millisecond's work or more are split."""


CHUNKS_PER_THREAD = 4
"""How many pieces a parallel loop's iterations are cut into per thread, for threads to share out."""


def _affine_c(expr: AffineExpr, operands: list[str]) -> str:
    if isinstance(expr, AffineDimExpr):
        return operands[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return f"((int64_t){expr.value}LL)"
    assert isinstance(expr, AffineBinaryOpExpr)
    lhs, rhs = _affine_c(expr.lhs, operands), _affine_c(expr.rhs, operands)
    return {AffineBinaryOpKind.Add: f"({lhs} + {rhs})", AffineBinaryOpKind.Mul: f"({lhs} * {rhs})",
            AffineBinaryOpKind.FloorDiv: f"xr_floordiv({lhs}, {rhs}, &xr_err)",
            AffineBinaryOpKind.CeilDiv: f"xr_ceildiv({lhs}, {rhs}, &xr_err)",
            AffineBinaryOpKind.Mod: f"xr_mod({lhs}, {rhs}, &xr_err)"}[expr.kind]


def _trip_count(lb: SSAValue, ub: SSAValue, step: SSAValue) -> int | None:
    bounds = [constant_int(v) for v in (lb, ub, step)]
    if None in bounds or bounds[2] <= 0:
        return None
    return max(0, -(-(bounds[1] - bounds[0]) // bounds[2]))


def _offset_trips(loop: scf.ForOp) -> int | None:
    """The trip count of a loop from `lb` to `lb + extent` by a constant step (a tile's points), else
    None. Written as `for (i = lb; i < lb + 32; i++)`, gcc cannot count its iterations (under
    `-fwrapv`, `lb + 32` may wrap around), and vectorises it for any trip count with a prologue and an
    epilogue that cost more than the two vector iterations of a 32-point tile."""
    extent = offset_extent(loop)
    return None if extent is None else -(-extent // constant_int(loop.step))


def _work(region_op: Operation) -> int:
    """Scalar op executions of one run of `region_op`'s body, loops multiplied by their trip counts
    (an unknown trip count counts as 16)."""
    total = 0
    for region in region_op.regions:
        for block in region.blocks:
            for op in block.ops:
                if isinstance(op, scf.ForOp):
                    total += (_trip_count(op.lb, op.ub, op.step) or 16) * _work(op)
                elif isinstance(op, scf.ParallelOp):
                    trips = [_trip_count(*b) or 16 for b in zip(op.lowerBound, op.upperBound, op.step)]
                    total += math.prod(trips) * _work(op)
                else:
                    total += 1 + _work(op)
    return total


class CTranslation(SourceWriter):
    """The C source of `@entry` (see the module docstring) and what calling it needs."""

    INDENT = "  "

    def __init__(self, module: ModuleOp, entry: str = "main"):
        super().__init__()
        module = static_layouts(scf_loops(module), entry)
        self.func, self.global_arrays = entry_and_globals(module, entry)
        self.arguments = list(self.func.body.block.args)
        self.result_types = list(self.func.function_type.outputs.data)
        self.global_names: list[str] = []
        self.checks: list[str] = []
        self.parallel_loops = 0
        self._roots: dict[SSAValue, str] = {}
        self._allocated: dict[str, tuple[Block, bool]] = {}  # root -> (its block, freed yet)
        self._ranges = IndexRanges()
        self._in_parallel = False
        self._find_roots()
        self.functions: list[str] = []
        header = ["int xrelay_main(void **slots, int64_t xr_threads) {", "  int xr_err = 0;",
                  "  (void)xr_threads;"]
        for position, arg in enumerate(self.arguments):
            kind = c_type(arg.type.get_element_type() if isinstance(arg.type, MemRefType) else arg.type)
            if isinstance(arg.type, MemRefType):
                header.append(f"  {kind} *restrict {self._roots[arg]} = ({kind} *)slots[{position}];")
            else:
                header.append(f"  {kind} {self.name(arg)} = *({kind} *)slots[{position}];")
        self.block(self.func.body.block, 1)
        first_global = len(self.arguments) + len(self.result_types)
        for position, name in enumerate(self.global_names):
            kind = c_type(self.global_arrays_type(name))
            header.append(f"  {kind} *restrict {self._global_root(name)} = ({kind} *)slots[{first_global + position}];")
        self.source = "\n".join([PRELUDE, *self.functions] + header + self.lines + ["}", ""])

    # --- names and buffers -----------------------------------------------------------------------

    def global_arrays_type(self, name: str):
        return next(op.memref.type.get_element_type() for op in self.func.walk()
                    if isinstance(op, memref.GetGlobalOp) and op.name_.root_reference.data == name)

    def _global_root(self, name: str) -> str:
        return f"g{self.global_names.index(name)}"

    def _find_roots(self) -> None:
        """The buffer (a C pointer name) every memref value of `@main` views."""
        for position, arg in enumerate(self.arguments):
            self._roots[arg] = f"a{position}"
        for op in self.func.walk():
            if isinstance(op, memref.AllocOp | memref.AllocaOp | memref.ViewOp):
                self._roots[op.results[0]] = f"b{len(self._roots)}"
            elif isinstance(op, memref.GetGlobalOp):
                name = op.name_.root_reference.data
                if name not in self.global_names:
                    self.global_names.append(name)
                self._roots[op.memref] = self._global_root(name)
            elif isinstance(op, _VIEWS) and op.operands[0] in self._roots:
                self._roots[op.results[0]] = self._roots[op.operands[0]]

    def root(self, value: SSAValue, op: Operation) -> str:
        if value not in self._roots:
            raise NativeUnsupported(f"{located(op)}{op.name}: a memref of unknown origin")
        return self._roots[value]

    def offset(self, ref: SSAValue, indices, op: Operation) -> str:
        """The element position of `ref[indices]` in its buffer; indices not proven inside their
        dimension are checked (a failure records the op in `checks`)."""
        memref_type = ref.type
        assert isinstance(memref_type, MemRefType)
        strides, offset = layout_of(memref_type)
        terms = [str(offset)]
        check_static_bounds(memref_type.get_shape(), indices, op)
        for axis, (index, size, stride) in enumerate(zip(indices, memref_type.get_shape(), strides, strict=True)):
            name = self.name(index)
            if not self._ranges.within(index, size):
                self.checks.append(f"{located(op)}{op.name} index #{axis} is outside the memref's dimension "
                                   f"of size {size}")
                name = (f"((uint64_t)({name}) < {size}ULL ? ({name}) : "
                        f"(__atomic_store_n(&xr_err, {len(self.checks)}, __ATOMIC_RELAXED), (int64_t)0))")
            if stride:
                terms.append(f"{name} * {stride}")
        return " + ".join(terms)

    def copy(self, source: SSAValue, destination: str, dest_type: MemRefType, indent: int, op: Operation) -> None:
        """Element-wise copy of memref `source` into buffer `destination` viewed as `dest_type`."""
        shape = list(source.type.get_shape())
        if list(dest_type.get_shape()) != shape:
            raise ExecutionError(f"{located(op)}{op.name}: shapes {source.type} and {dest_type} differ")
        (src_strides, src_offset), (dst_strides, dst_offset) = layout_of(source.type), layout_of(dest_type)
        counters = [f"k{indent}_{axis}" for axis in range(len(shape))]
        for axis, (counter, size) in enumerate(zip(counters, shape)):
            self.emit(indent + axis, f"for (int64_t {counter} = 0; {counter} < {size}; {counter}++)")
        src = " + ".join([str(src_offset)] + [f"{c} * {s}" for c, s in zip(counters, src_strides)])
        dst = " + ".join([str(dst_offset)] + [f"{c} * {s}" for c, s in zip(counters, dst_strides)])
        self.emit(indent + len(shape), f"{destination}[{dst}] = {self.root(source, op)}[{src}];")

    # --- ops -----------------------------------------------------------------------------------

    def block(self, block: Block, indent: int) -> None:
        for op in block.ops:
            if op is block.last_op and isinstance(op, scf.YieldOp | scf.ReduceOp | func.ReturnOp):
                self.free_allocas(block, indent)
            self.op(op, indent)

    def free_allocas(self, block: Block, indent: int) -> None:
        for op in block.ops:
            if isinstance(op, memref.AllocaOp):
                self.emit(indent, f"free({self._roots[op.memref]});")

    def declare(self, value: SSAValue, expression: str, indent: int) -> None:
        self.emit(indent, f"{c_type(value.type)} {self.name(value)} = {expression};")

    def op(self, op: Operation, indent: int) -> None:
        if isinstance(op, arith.ConstantOp):
            self.literals[op.result] = c_literal(op.value, op.result.type)
        elif isinstance(op, memref.LoadOp):
            self.declare(op.res, f"{self.root(op.memref, op)}[{self.offset(op.memref, op.indices, op)}]", indent)
        elif isinstance(op, memref.StoreOp):
            target = f"{self.root(op.memref, op)}[{self.offset(op.memref, op.indices, op)}]"
            self.emit(indent, f"{target} = {self.name(op.value)};")
        elif isinstance(op, affine.ApplyOp) and len(op.map.data.results) == 1:
            operands = [self.name(v) for v in op.mapOperands]
            self.declare(op.result, _affine_c(op.map.data.results[0], operands), indent)
        elif (expression := scalar_expression(op, [self.name(v) for v in op.operands])) is not None:
            self.declare(op.results[0], expression, indent)
        elif isinstance(op, memref.AllocOp | memref.AllocaOp):
            self.alloc(op, indent)
        elif isinstance(op, memref.DeallocOp):
            root = self.root(op.memref, op)
            block, freed = self._allocated.get(root, (None, True))
            if block is op.parent_block() and not freed:  # else freed when @main returns
                self.emit(indent, f"free({root});")
                self._allocated[root] = (block, True)
        elif isinstance(op, memref.ViewOp):
            if op.sizes:
                raise NativeUnsupported(f"{located(op)}{op.name} with dynamic sizes")
            kind = c_type(op.result.type.get_element_type())
            shift = f"(char *){self.root(op.source, op)} + {self.name(op.byte_shift)}"
            self.emit(indent, f"{kind} *{self._roots[op.result]} = ({kind} *)({shift});")  # no restrict: views share a buffer
        elif isinstance(op, (memref.GetGlobalOp, *_VIEWS)):  # a root, or a view of one: nothing to run
            self.root(op.results[0], op)
        elif isinstance(op, memref.CopyOp):
            self.copy(op.source, self.root(op.destination, op), op.destination.type, indent, op)
        elif isinstance(op, scf.ForOp):
            self.for_loop(op, indent)
        elif isinstance(op, scf.ParallelOp):
            self.parallel_loop(op, indent)
        elif isinstance(op, scf.IfOp):
            for result in op.results:
                self.emit(indent, f"{c_type(result.type)} {self.name(result)};")
            self.emit(indent, f"if ({self.name(op.cond)}) {{")
            self.block(op.true_region.block, indent + 1)
            if op.false_region.blocks:
                self.emit(indent, "} else {")
                self.block(op.false_region.block, indent + 1)
            self.emit(indent, "}")
        elif isinstance(op, scf.YieldOp):
            parent = op.parent_op()
            targets = parent.body.block.args[1:] if isinstance(parent, scf.ForOp) else parent.results
            temporaries = [f"t{indent}_{i}" for i in range(len(op.operands))]
            for temporary, value in zip(temporaries, op.operands):  # all read before any is written
                self.emit(indent, f"{c_type(value.type)} {temporary} = {self.name(value)};")
            for target, temporary in zip(targets, temporaries, strict=True):
                self.emit(indent, f"{self.name(target)} = {temporary};")
        elif isinstance(op, scf.ReduceOp) and not op.operands:
            pass
        elif isinstance(op, func.ReturnOp):
            self.ret(op, indent)
        else:
            raise NativeUnsupported(f"{located(op)}op {op.name}")

    def alloc(self, op: memref.AllocOp | memref.AllocaOp, indent: int) -> None:
        memref_type = op.memref.type
        if op.dynamic_sizes or not isinstance(memref_type, MemRefType):
            raise NativeUnsupported(f"{located(op)}{op.name} with dynamic sizes")
        kind, root = c_type(memref_type.get_element_type()), self._roots[op.memref]
        size = max(1, math.prod(memref_type.get_shape()))
        self.emit(indent, f"{kind} *restrict {root} = ({kind} *)xr_alloc({size}, sizeof({kind}));")
        if indent == 1:
            self.emit(indent, f"if (!{root}) return -1;")
        if isinstance(op, memref.AllocOp):
            self._allocated[root] = (op.parent_block(), False)

    def for_loop(self, op: scf.ForOp, indent: int) -> None:
        trips = _trip_count(op.lb, op.ub, op.step)
        if (not self._in_parallel and _work(op) * (trips or 16) >= PARALLEL_WORK and trips != 1
                and parallel_safe(op, self._roots)):
            self.parallel_for(op, indent)
        elif not op.results and op.parent_block() is self.func.body.block:
            self.call(self.function(op, lambda: self.loop(op, 1)), indent)
        else:
            self.loop(op, indent)

    def loop(self, op: scf.ForOp, indent: int, lower: str | None = None, upper: str | None = None) -> None:
        """`op` as a C `for` (from `lower` to `upper` instead of its bounds when they are given)."""
        body = op.body.block
        iv, carried = body.args[0], body.args[1:]
        for arg, init, result in zip(carried, op.iter_args, op.results, strict=True):
            self.emit(indent, f"{c_type(arg.type)} {self.name(arg)} = {self.name(init)};")
            self.names[result] = self.name(arg)
        i, step = self.name(iv), self.name(op.step)
        lb, ub = lower or self.name(op.lb), upper or self.name(op.ub)
        trips = None if lower or upper else _offset_trips(op)
        if trips is not None:  # a counter from 0: gcc then knows the trip count (see `_offset_trips`)
            self.emit(indent, f"for (int64_t {i}_t = 0; {i}_t < {trips}; {i}_t++) {{")
            self.emit(indent + 1, f"int64_t {i} = {lb} + {i}_t * {step};")
        else:
            self.emit(indent, f"for (int64_t {i} = {lb}; {i} < {ub}; {i} += {step}) {{")
        self.block(body, indent + 1)
        self.emit(indent, "}")

    def parallel_for(self, op: scf.ForOp, indent: int) -> None:
        """`op` as up to `CHUNKS_PER_THREAD` chunks of consecutive iterations per OpenMP thread, each
        run by a call of a function of its own (see `function`) and handed to whichever thread is
        free: on a machine other processes share, a thread that loses its core does not hold up the
        loop (a static split waits for the slowest thread)."""
        self.parallel_loops += 1
        self._in_parallel = True
        call = self.function(op, lambda: self.loop(op, 1, "xr_lo", "xr_hi"), chunked=True)
        self._in_parallel = False
        lb, ub, step = self.name(op.lb), self.name(op.ub), self.name(op.step)
        self.emit(indent, "{")
        self.emit(indent + 1, f"int64_t xr_n = XR_MAX(({ub}) - ({lb}) + ({step}) - 1, 0) / ({step});")
        self.emit(indent + 1, f"int64_t xr_chunks = XR_MIN(xr_n, {CHUNKS_PER_THREAD} * xr_threads);")
        self.emit(indent + 1, "#pragma omp parallel for num_threads(xr_threads) schedule(dynamic, 1)")
        self.emit(indent + 1, "for (int64_t xr_c = 0; xr_c < xr_chunks; xr_c++) {")
        self.emit(indent + 2, f"int64_t xr_lo = ({lb}) + ({step}) * (xr_n * xr_c / xr_chunks);")
        self.emit(indent + 2, f"int64_t xr_hi = XR_MIN(({lb}) + ({step}) * (xr_n * (xr_c + 1) / xr_chunks), ({ub}));")
        self.call(call + ", xr_lo, xr_hi", indent + 2)
        self.emit(indent + 1, "}")
        self.emit(indent, "}")

    def function(self, op: Operation, write_body, chunked: bool = False) -> str:
        """A static C function running `op` (its body written at indent 1 by `write_body`), returning
        the call's text without its closing parenthesis. Every buffer `op` uses is a `restrict`
        pointer parameter: gcc trusts `restrict` on parameters (not on locals, nor on the variables
        an OpenMP region captures), and without it cannot vectorise a loop that stores to one buffer
        while loading from another."""
        params, args = [], []
        for value in free_values(op):
            if isinstance(value.type, MemRefType):
                root = self.root(value, op)
                if root not in args:
                    params.append(f"{c_type(value.type.get_element_type())} *restrict {root}")
                    args.append(root)
            elif value not in self.literals:
                params.append(f"{c_type(value.type)} {self.name(value)}")
                args.append(self.name(value))
        params.append("int64_t xr_threads")
        args.append("xr_threads")
        if chunked:
            params += ["int64_t xr_lo", "int64_t xr_hi"]
        outer = self.lines
        self.lines = []
        write_body()
        name = f"xr_f{len(self.functions)}"
        self.functions.append("\n".join([f"static int {name}({', '.join(params)}) {{", "  int xr_err = 0;",
                                         "  (void)xr_threads;", *self.lines, "  return xr_err;", "}", ""]))
        self.lines = outer
        return f"{name}({', '.join(args)}"

    def call(self, call: str, indent: int) -> None:
        """Call an outlined function; a failure it reports becomes this function's."""
        self.emit(indent, f"{{ int xr_e = {call}); if (xr_e) __atomic_store_n(&xr_err, xr_e, __ATOMIC_RELAXED); }}")

    def parallel_loop(self, op: scf.ParallelOp, indent: int) -> None:
        if op.initVals:
            raise NativeUnsupported(f"{located(op)}scf.parallel with reductions")
        parallel = not self._in_parallel and _work(op) >= PARALLEL_WORK // 16
        if parallel:
            self.emit(indent, "#pragma omp parallel for num_threads(xr_threads) schedule(static)")
            self.parallel_loops += 1
            self._in_parallel = True
        bounds = zip(op.body.block.args, op.lowerBound, op.upperBound, op.step, strict=True)
        for depth, (iv, lb, ub, step) in enumerate(bounds):
            i = self.name(iv)
            self.emit(indent + depth, f"for (int64_t {i} = {self.name(lb)}; {i} < {self.name(ub)}; "
                                      f"{i} += {self.name(step)}) {{")
        depth = len(op.lowerBound)
        self.block(op.body.block, indent + depth)
        for level in reversed(range(depth)):
            self.emit(indent + level, "}")
        if parallel:
            self._in_parallel = False

    def ret(self, op: func.ReturnOp, indent: int) -> None:
        for position, value in enumerate(op.operands):
            slot = f"slots[{len(self.arguments) + position}]"
            if isinstance(value.type, MemRefType):
                kind = c_type(value.type.get_element_type())
                result = MemRefType(value.type.get_element_type(), value.type.get_shape())
                self.emit(indent, "{")
                self.emit(indent + 1, f"{kind} *restrict r = ({kind} *){slot};")
                self.copy(value, "r", result, indent + 1, op)
                self.emit(indent, "}")
            else:
                self.emit(indent, f"*({c_type(value.type)} *){slot} = {self.name(value)};")
        for root, (block, freed) in self._allocated.items():
            if not freed and block is self.func.body.block:  # nested ones are out of scope (MLIR leaks them)
                self.emit(indent, f"free({root});")
        self.emit(indent, "return xr_err;")
