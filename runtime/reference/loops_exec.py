"""Executor for loops-level modules (`scf.for` nests over memrefs).

`compile_loops(module)` translates `@main` once into Python source and `exec`s it. Every memref is
a flat numpy array (views share their source's; whole arrays are seen through the type's layout,
`_shaped`, and a copy through a subview indexes element positions, `flat_positions`). A top-level
nest that is the loops of a structured op runs over whole arrays (`loop_nests.raise_nest`); any
other nest scalar by scalar: SSA values as locals, loads and stores indexing the flat arrays with
the offsets their layouts give, `scf.for` as `range`, index arithmetic (`affine.apply`) on Python
ints, and every other scalar op as the numpy function a linalg body's op is (`body_program`) on
numpy scalars of its type: one table of op semantics (IEEE division, NaN in max/min, wrapping
integers) for the linalg and loops executors."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from xdsl.dialects import affine, arith, bufferization, func, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, StridedLayoutAttr, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineExpr

from xrelay.dialects.arguments import argument_names
from xrelay.runtime.reference.affine_loops import check_static_bounds, scf_loops
from xrelay.runtime.kernels.affine_views import ExecutionError
from xrelay.runtime.kernels.body_program import body_op_fn, numpy_dtype, scalar_constant
from xrelay.runtime.executor.program_entry import bind_inputs, cached_program, check_argument, entry_and_globals
from xrelay.runtime.reference.loop_nests import raise_nest
from xrelay.runtime.executor.static_layouts import layout_of, static_layouts


class SourceWriter:
    """Lines of generated source and the names of the SSA values in them, for the loops level's
    Python (`LoopsCompiler`) and C (`codegen/c_source.py`) translations: `names` gives each value a
    local `v<n>`, `literals` the values written as literals (or globals) where they are used."""

    INDENT = "    "

    def __init__(self):
        self.names: dict[SSAValue, str] = {}
        self.literals: dict[SSAValue, str] = {}
        self.lines: list[str] = []

    def name(self, value: SSAValue) -> str:
        if value in self.literals:
            return self.literals[value]
        if value not in self.names:
            self.names[value] = f"v{len(self.names)}"
        return self.names[value]

    def emit(self, indent: int, line: str) -> None:
        self.lines.append(self.INDENT * indent + line)


_AFFINE_PYTHON = {AffineBinaryOpKind.Add: "({} + {})", AffineBinaryOpKind.Mul: "({} * {})",
                  AffineBinaryOpKind.FloorDiv: "({} // {})", AffineBinaryOpKind.CeilDiv: "(-((-{}) // {}))",
                  AffineBinaryOpKind.Mod: "({} % {})"}


def affine_source(expr: AffineExpr, operands: Sequence[str]) -> str:
    """`expr` over the index values named `operands`, as Python (on ints, `//` and `%` are MLIR's)."""
    if isinstance(expr, AffineDimExpr):
        return operands[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return str(expr.value)
    assert isinstance(expr, AffineBinaryOpExpr)
    return _AFFINE_PYTHON[expr.kind].format(affine_source(expr.lhs, operands), affine_source(expr.rhs, operands))


def _view(flat: np.ndarray, mtype: MemRefType) -> np.ndarray:
    """The flat array of a memref's buffer seen with the memref's shape, strides and offset (its
    type's layout, `static_layouts.layout_of`)."""
    strides, offset = layout_of(mtype)
    return np.lib.stride_tricks.as_strided(flat[offset:], tuple(mtype.get_shape()),
                                           tuple(s * flat.itemsize for s in strides))


def _shaped(raised, types: list[MemRefType]):
    """`raised.run` called on flat arrays, each viewed as its memref type says; the view of an array
    seen last time is reused, so constant weights stay the same object (their Winograd transform is
    cached on it)."""
    seen: list = [None] * len(types)

    def run(*flats):
        for i, (flat, mtype) in enumerate(zip(flats, types)):
            if seen[i] is None or seen[i][0] is not flat:
                seen[i] = (flat, _view(flat, mtype))
        raised.run([view for _, view in seen])

    return run


def flat_positions(mtype: MemRefType) -> np.ndarray:
    """The positions in its buffer's flat array of every element of a memref, in row-major order
    (a copy through a subview indexes them)."""
    strides, offset = layout_of(mtype)
    extent = offset + sum(max(n - 1, 0) * s for n, s in zip(mtype.get_shape(), strides)) + 1
    return _view(np.arange(extent, dtype=np.int64), mtype).reshape(-1)


class LoopsCompiler(SourceWriter):
    """Translates `@main` into the Python source of one function (see the module docstring); index
    constants are inlined, others are globals of the generated code (`literals`)."""

    def __init__(self, module: ModuleOp, entry: str = "main", vectorize: bool = True):
        super().__init__()
        self.vectorize = vectorize
        self.globals: dict[str, object] = {"_np": np, "_nonzero": _nonzero}
        self.roots: dict[SSAValue, SSAValue] = {}  # memref value -> the buffer it views
        self.constant_roots: set[SSAValue] = set()
        self.in_nest = False  # inside a top-level nest translated scalar by scalar
        self.raised_nests = 0
        self.scalar_nests = 0
        main, self.global_arrays = entry_and_globals(module, entry)
        self.func = main
        args = main.body.block.args
        params = [self.name(a) for a in args]
        self.lines.append(f"def main({', '.join(params)}):")
        for a in args:
            self.roots[a] = a
        self.block(main.body.block, 1)
        self.source = "\n".join(self.lines) + "\n"

    def block(self, block: Block, indent: int) -> None:
        start = len(self.lines)
        for op in block.ops:
            self.op(op, indent)
        if len(self.lines) == start:
            self.emit(indent, "pass")

    def index(self, ref: SSAValue, indices: Sequence[SSAValue]) -> str:
        """The position of `ref[indices]` in its buffer's flat array, through its type's layout (a
        size-1 axis can only be indexed by 0)."""
        strides, offset = layout_of(ref.type)
        terms = [self.name(idx) if stride == 1 else f"{self.name(idx)} * {stride}"
                 for size, idx, stride in zip(ref.type.get_shape(), indices, strides, strict=True)
                 if size != 1 and stride != 0]
        return " + ".join(([str(offset)] if offset else []) + terms) or "0"

    def constant(self, value: object) -> str:
        """The name of a global holding `value` (an array, a scalar, a function) for the generated code."""
        key = f"G_{len(self.globals)}"
        self.globals[key] = value
        return key

    def nest(self, loop: scf.ForOp, indent: int) -> None:
        """A top-level loop nest: over whole arrays when it raises to a structured op, else scalar code."""
        raised = raise_nest(loop, self.roots, frozenset(self.constant_roots)) if self.vectorize else None
        if raised is not None:
            key = f"N_{self.raised_nests}"
            self.raised_nests += 1
            self.globals[key] = _shaped(raised, [m.type for m in raised.memrefs])
            self.emit(indent, f"{key}({', '.join(self.name(m) for m in raised.memrefs)})")
            return
        self.scalar_nests += 1
        self.in_nest = True
        self.op(loop, indent, nest=False)
        self.in_nest = False

    def op(self, op: Operation, indent: int, nest: bool = True) -> None:
        emit = lambda line: self.emit(indent, line)  # noqa: E731
        if nest and isinstance(op, scf.ForOp) and not self.in_nest:
            self.nest(op, indent)
            return
        if isinstance(op, arith.ConstantOp):
            if isinstance(op.result.type, IndexType) and isinstance(op.value, IntegerAttr):
                self.literals[op.result] = f"({op.value.value.data})"
            else:
                try:
                    self.literals[op.result] = self.constant(scalar_constant(op.value, op.result.type))
                except ExecutionError as error:
                    raise ExecutionError(f"loops level: {error}") from None
        elif isinstance(op, memref.LoadOp):
            emit(f"{self.name(op.res)} = {self.name(op.memref)}[{self.index(op.memref, op.indices)}]")
        elif isinstance(op, memref.StoreOp):
            emit(f"{self.name(op.memref)}[{self.index(op.memref, op.indices)}] = {self.name(op.value)}")
        elif isinstance(op, affine.ApplyOp):
            operands = [self.name(v) for v in op.mapOperands]
            (expr,) = op.map.data.results
            emit(f"{self.name(op.result)} = {affine_source(expr, operands)}")
        elif isinstance(op, arith.SelectOp):
            c, t, f = op.operands
            emit(f"{self.name(op.result)} = {self.name(t)} if {self.name(c)} else {self.name(f)}")
        elif op.dialect_name() in ("arith", "math"):
            try:
                function = self.constant(body_op_fn(op))
            except ExecutionError:
                raise ExecutionError(f"loops level: unsupported op {op.name}") from None
            operands = [self.name(v) for v in op.operands]
            if isinstance(op, arith.DivSIOp | arith.RemSIOp | arith.FloorDivSIOp):
                operands[1] = f"_nonzero({operands[1]})"
            emit(f"{self.name(op.results[0])} = {function}({', '.join(operands)})")
        elif isinstance(op, memref.AllocOp | memref.AllocaOp):
            mtype = op.results[0].type
            size = int(np.prod(mtype.get_shape()))
            self.roots[op.results[0]] = op.results[0]
            emit(f"{self.name(op.results[0])} = _np.zeros({size}, _np.{numpy_dtype(mtype.get_element_type())})")
        elif isinstance(op, memref.DeallocOp):
            pass
        elif isinstance(op, memref.GetGlobalOp):
            name = op.name_.root_reference.data
            key = f"G_{len(self.globals)}"
            source = self.global_arrays[name]
            flat = np.array(source).reshape(-1)
            self.roots[op.memref] = op.memref
            if not source.flags.writeable:  # a dense initial value; an uninitialized global is program state
                flat.flags.writeable = False
                self.constant_roots.add(op.memref)
            self.globals[key] = flat
            emit(f"{self.name(op.memref)} = {key}")
        elif isinstance(op, memref.ViewOp):  # a buffer of its own: views used together do not overlap
            if op.sizes:
                raise ExecutionError("loops level: memref.view with dynamic sizes")
            result = op.result.type
            nbytes = max(1, int(np.prod(result.get_shape()))) * numpy_dtype(result.get_element_type()).itemsize
            self.roots[op.result] = op.result
            shift = self.name(op.byte_shift)
            emit(f"{self.name(op.result)} = {self.name(op.source)}[{shift}:{shift} + {nbytes}]"
                 f".view(_np.{numpy_dtype(result.get_element_type())})")
        elif isinstance(op, memref.CollapseShapeOp | memref.ExpandShapeOp | memref.CastOp
                        | bufferization.ToBufferOp | bufferization.ToTensorOp):  # views of the same flat array
            self.roots[op.results[0]] = self.roots.get(op.operands[0], op.operands[0])
            emit(f"{self.name(op.results[0])} = {self.name(op.operands[0])}")
        elif isinstance(op, memref.SubviewOp):
            if op.offsets or op.sizes or op.strides or not isinstance(op.result.type.layout, StridedLayoutAttr):
                raise ExecutionError("loops level: memref.subview needs static offsets, sizes and strides")
            self.roots[op.result] = self.roots.get(op.source, op.source)
            emit(f"{self.name(op.result)} = {self.name(op.source)}")  # the same flat array, strided indexing
        elif isinstance(op, memref.CopyOp):
            if any(isinstance(t.layout, StridedLayoutAttr) for t in (op.source.type, op.destination.type)):
                # A subview on either side: copy element positions computed once from the layouts.
                src, dst = (self.constant(flat_positions(t)) for t in (op.source.type, op.destination.type))
                emit(f"{self.name(op.destination)}[{dst}] = {self.name(op.source)}[{src}]")
            else:
                emit(f"{self.name(op.destination)}[:] = {self.name(op.source)}")
        elif isinstance(op, scf.ForOp):
            body = op.body.block
            iv, carried = body.args[0], body.args[1:]
            for arg, init in zip(carried, op.iter_args, strict=True):
                emit(f"{self.name(arg)} = {self.name(init)}")
            lb, ub, step = self.name(op.lb), self.name(op.ub), self.name(op.step)
            bounds = ub if (lb, step) == ("(0)", "(1)") else f"{lb}, {ub}, {step}"
            emit(f"for {self.name(iv)} in range({bounds}):")
            self.block(body, indent + 1)
            for res, arg in zip(op.results, carried, strict=True):
                emit(f"{self.name(res)} = {self.name(arg)}")
        elif isinstance(op, scf.YieldOp):
            parent = op.parent_op()
            if isinstance(parent, scf.ForOp):
                targets = parent.body.block.args[1:]
            elif isinstance(parent, scf.IfOp):
                targets = parent.results
            else:
                raise ExecutionError(f"loops level: scf.yield inside {parent.name if parent else 'nothing'}")
            for target, value in zip(targets, op.operands, strict=True):
                emit(f"{self.name(target)} = {self.name(value)}")
        elif isinstance(op, scf.IfOp):
            emit(f"if {self.name(op.cond)}:")
            self.block(op.true_region.block, indent + 1)
            if op.false_region.blocks:
                emit("else:")
                self.block(op.false_region.block, indent + 1)
        elif isinstance(op, func.ReturnOp):
            emit(f"return ({''.join(self.name(v) + ', ' for v in op.operands)})")
        else:
            raise ExecutionError(f"loops level: unsupported op {op.name}")


def _nonzero(divisor):
    """An integer divisor, or the ZeroDivisionError the native loops executor raises too (numpy's
    integer division by zero gives 0)."""
    if divisor == 0:
        raise ZeroDivisionError("integer division or modulo by zero")
    return divisor


class LoopsProgram:
    """`@main` of a loops-level module compiled to a Python function; call with numpy arrays.

    `vectorize=False` translates every nest scalar by scalar (the reference the whole-array nests
    are checked against); `raised_nests` and `scalar_nests` count how the nests were translated."""

    def __init__(self, module: ModuleOp, entry: str = "main", vectorize: bool = True):
        module = static_layouts(scf_loops(module), entry)  # affine loops as scf; memrefs index through layouts
        for op in module.walk():  # before any nest is translated (scalar or whole-array)
            if isinstance(op, memref.LoadOp | memref.StoreOp) and isinstance(op.memref.type, MemRefType):
                check_static_bounds(op.memref.type.get_shape(), op.indices, op)
        compiler = LoopsCompiler(module, entry, vectorize)
        self.source = compiler.source
        namespace = compiler.globals
        exec(compile(self.source, f"<xrelay loops @{entry}>", "exec"), namespace)  # noqa: S102
        self._main = namespace["main"]
        self.raised_nests, self.scalar_nests = compiler.raised_nests, compiler.scalar_nests
        block = compiler.func.body.block
        self.arg_names = argument_names(compiler.func)
        self.arg_types = [a.type for a in block.args]
        self.result_types = list(compiler.func.function_type.outputs)

    def __call__(self, *args: np.ndarray) -> list[np.ndarray]:
        if len(args) != len(self.arg_types):
            raise ExecutionError(f"@main takes {len(self.arg_types)} arguments, got {len(args)}")
        flat = [np.array(check_argument(array, arg_type, name)).reshape(-1)  # a copy: the callee may write it
                if isinstance(arg_type, MemRefType | TensorType) else array  # (tensors: upstream's edges)
                for name, array, arg_type in zip(self.arg_names, args, self.arg_types, strict=True)]
        try:
            with np.errstate(all="ignore"):  # IEEE results (inf, nan, wrapped integers), as compiled code's
                results = self._main(*flat)
        except IndexError as error:  # a dynamic index past the end of a buffer
            raise ExecutionError(f"loops level: memref access out of bounds ({error})") from None
        outputs = []
        for value, result_type in zip(results, self.result_types, strict=True):
            if isinstance(result_type, MemRefType | TensorType):
                dtype = numpy_dtype(result_type.get_element_type())
                outputs.append(np.array(value, dtype=dtype).reshape(result_type.get_shape()))
            else:
                outputs.append(np.asarray(value))
        return outputs


def compile_loops(module: ModuleOp, vectorize: bool = True) -> LoopsProgram:
    """Compile `@main` of a loops-level module once, for repeated runs (`vectorize`: see LoopsProgram)."""
    return LoopsProgram(module, vectorize=vectorize)


_LOOPS_COMPILER: list[Callable[[ModuleOp], object]] = []


def register_loops_compiler(compiler: Callable[[ModuleOp], object]) -> Callable[[ModuleOp], object]:
    """Register what compiles a loops-level module for `run_loops` (`codegen/program.py` does: the C
    translation is a layer above this one, docs/architecture.md §1)."""
    _LOOPS_COMPILER[:] = [compiler]
    return compiler


def run_loops(module: ModuleOp, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run `@main` of a loops-level module on `inputs` (by argument name or position), natively
    (`codegen/`, registered) or on this executor where that cannot run.

    The module is translated once and the function reused while the module is unchanged."""
    if not _LOOPS_COMPILER:
        from xrelay.plugins import load_plugins

        load_plugins()
    program = cached_program(module, _LOOPS_COMPILER[0] if _LOOPS_COMPILER else LoopsProgram)
    return program(*bind_inputs(program.arg_names, inputs))
