"""What both executors of lowered modules share: the entry function and its globals, the checked and
ordered arguments, and the compiled program (and what `runtime.run` checks once) kept per module object
while the module is unchanged, which a call finds in O(1) (`cached_program`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FileLineColLoc, MemRefType, ModuleOp, TensorType
from xdsl.ir import Attribute, Block, Operation

from xrelay.dialects.ir_generation import generation, watch
from xrelay.runtime.kernels.affine_views import ExecutionError
from xrelay.runtime.kernels.body_program import dense_to_numpy, numpy_dtype


def check_no_use_after_dealloc(block: Block) -> None:
    """An ExecutionError naming the op (at file:line:col when parsed from a file) that reads or
    deallocates again a memref after its `memref.dealloc` in `block`: undefined behaviour in MLIR,
    which the executors would otherwise run on a dropped buffer."""
    freed: dict = {}
    for op in block.ops:
        for value in op.operands:
            if value in freed:
                raise ExecutionError(f"{located(op)}{op.name} uses a memref after its memref.dealloc "
                                     f"({located(freed[value]).rstrip(': ') or 'earlier'})")
        if isinstance(op, memref.DeallocOp):
            freed[op.memref] = op


def located(op: Operation) -> str:
    """`file:line:col: ` of an op parsed from a file, else nothing: the start of an error about it."""
    loc = op.location
    return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: " if isinstance(loc, FileLineColLoc) else ""


def entry_and_globals(module: ModuleOp, entry: str) -> tuple[func.FuncOp, dict[str, np.ndarray]]:
    """The module's `func.func @entry` and the values of its `memref.global`s by name (read-only
    when dense, zeros when uninitialized); an ExecutionError when the function is missing or a
    constant global has no dense initial value."""
    main = None
    global_arrays, global_types = {}, {}
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == entry:
            main = op
        elif isinstance(op, memref.GlobalOp):
            if isinstance(op.initial_value, DenseIntOrFPElementsAttr):
                global_arrays[op.sym_name.data] = dense_to_numpy(op.initial_value)
            elif op.constant is None:  # uninitialized: writable memory a program keeps (plan-buffers' arena)
                global_arrays[op.sym_name.data] = np.zeros(op.type.get_shape(), numpy_dtype(op.type.get_element_type()))
            else:
                raise ExecutionError(f"memref.global @{op.sym_name.data} needs a dense initial value")
            global_types[op.sym_name.data] = op.type
    if main is None:
        raise ExecutionError(f"module has no func.func @{entry}")
    for op in main.walk():
        if isinstance(op, memref.GetGlobalOp):
            _check_global_use(op, global_types)
    return main, global_arrays


def _check_global_use(op: memref.GetGlobalOp, global_types: dict[str, Attribute]) -> None:
    """An ExecutionError at `op` when the global it names is missing or of another type (MLIR's
    verifier checks both; xDSL's does not look the symbol up, and the executors would fail inside
    their own tables)."""
    name = op.name_.root_reference.data
    if name not in global_types:
        raise ExecutionError(f"{located(op)}memref.get_global: the module has no memref.global @{name}")
    if op.memref.type != global_types[name]:
        raise ExecutionError(f"{located(op)}memref.get_global @{name} returns {op.memref.type}, but the "
                             f"global is {global_types[name]}")


def check_argument(array, arg_type: Attribute, name: str) -> np.ndarray:
    """`array` as a contiguous numpy array of `arg_type`; a clear error if the shape differs."""
    if isinstance(arg_type, TensorType | MemRefType):
        expected = tuple(arg_type.get_shape())
        array = np.asarray(array, dtype=numpy_dtype(arg_type.get_element_type()), order="C")  # keeps rank 0
        if array.shape != expected:
            raise ExecutionError(f"argument %{name}: expected shape {expected}, got {array.shape}")
        if isinstance(arg_type, MemRefType):
            array = array.copy()  # the callee may write its memref arguments
        return array
    return numpy_dtype(arg_type).type(array)


def bind_inputs(arg_names: Sequence[str], inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> list:
    """Order `inputs` (a name -> array mapping, or a sequence in argument order) like `@main`'s arguments."""
    if isinstance(inputs, Mapping):
        missing = [n for n in arg_names if n not in inputs]
        if missing:
            raise ExecutionError(f"missing input(s) for @main: {', '.join('%' + m for m in missing)}")
        extra = [n for n in inputs if n not in arg_names]
        if extra:
            raise ExecutionError(f"unknown input(s) for @main: {', '.join('%' + e for e in extra)}")
        return [inputs[n] for n in arg_names]
    return list(inputs)


class _Entry:
    """What was computed from one state of a module, and how to tell that state again. Kept on the
    module object itself (`_xrelay_cached`), so that it goes with the module: a program refers to the
    module's ops, and in a table keyed by the module it would keep the module alive for ever."""

    __slots__ = ("generation", "key", "values")

    def __init__(self, key: tuple):
        self.key = key
        self.generation = generation()
        self.values: dict[Callable, object] = {}


def structure_key(module: ModuleOp) -> tuple:
    """Every op of `module` with its name, operands, result types, attributes, properties and the
    arguments of its blocks: equal keys, equal programs. Ops and values by identity (the module holds
    them); attributes, which are immutable, by value. Watches every op (`ir_generation.watch`), so
    that a later change to its attributes moves the IR generation."""
    key = []
    for op in module.walk():
        watch(op)
        key.append((id(op), op.name, tuple(map(id, op.operands)), tuple(r.type for r in op.results),
                    tuple(op.attributes.items()), tuple(op.properties.items()),
                    tuple(tuple(map(id, block.args)) for region in op.regions for block in region.blocks)))
    return tuple(key)


def cached_program(module: ModuleOp, compute: Callable[[ModuleOp], object]):
    """`compute(module)` (a compiled program, or any other function of the module), reused while the
    module is unchanged. In O(1) when no IR changed anywhere since the last call (`ir_generation`);
    after a change, the module is compared with the state its values were computed from, and they
    are dropped if it differs."""
    entry = getattr(module, "_xrelay_cached", None)
    if entry is None or entry.generation != generation():
        key = structure_key(module)
        if entry is None or entry.key != key:
            entry = _Entry(key)
            module._xrelay_cached = entry
        entry.generation = generation()
    if compute not in entry.values:
        entry.values[compute] = compute(module)
        if entry.generation != generation() and structure_key(module) == entry.key:
            entry.generation = generation()  # `compute` made IR of its own, and left the module as it was
    return entry.values[compute]
