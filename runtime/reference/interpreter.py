"""Execute a module with xDSL's ``Interpreter``: the ``nn`` op implementations and ``run``.

Python values are plain numpy arrays. Every ``nn`` op is evaluated by its kernel in
``xrelay.runtime.reference.nn_kernels.KERNELS`` (the same table FoldConstant uses), fed ``op.attrs()``.
``run`` hands modules lowered below nn to the linalg/memref and loops executors beside this file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import Operation

from xrelay.dialects import arguments, nn
from xrelay.dialects.arguments import argument_names
from xrelay.dialects.constant import dtype_of
from xrelay.dialects.levels import module_level
from xrelay.runtime.executor.program_entry import cached_program
from xrelay.runtime.reference.nn_kernels import KERNELS


class KernelError(RuntimeError):
    """A kernel rejected its operands; the message names the op, its operand shapes and the cause."""


class KernelAbort(BaseException):
    """Carries a :class:`KernelError` out of xDSL's ``Interpreter`` (``.error``), which would attach a
    print of the whole module (megabytes with bound weights) to any ``Exception``."""

    def __init__(self, error: KernelError):
        super().__init__(str(error))
        self.error = error


def evaluate(op: Operation, args: tuple[Any, ...]) -> tuple[np.ndarray, ...]:
    """Run ``op``'s kernel on numpy operands; always returns a tuple of results."""
    try:
        result = KERNELS[type(op)](op.attrs(), *args)
    except Exception as err:  # noqa: BLE001 - any kernel failure becomes a KernelError naming the op
        shapes = ", ".join(str(getattr(a, "shape", type(a).__name__)) for a in args)
        error = KernelError(f"{op.name} on operands of shapes ({shapes}): {err}")
        error.__cause__ = err
        raise KernelAbort(error) from None
    results = result if isinstance(result, tuple) else (result,)
    # Kernels compute in numpy's types (sqrt of ints is float64); results take the op's declared
    # element type, as FoldConstant and the lowered levels give them.
    return tuple(
        value if value.dtype == (dtype := dtype_of(res.type.get_element_type())) else value.astype(dtype)
        for value, res in zip(map(np.asarray, results), op.results)
    )


class NnFunctions(InterpreterFunctions):
    """Interpreter implementations of every ``nn`` op (operands and results are numpy arrays),
    one per entry of ``KERNELS``, registered below rather than written per op.

    A failing kernel raises :class:`KernelAbort` (see there) holding a :class:`KernelError`.
    """

    @impl(nn.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: nn.ConstantOp, args: tuple[Any, ...]):
        return (op.numpy(),)  # a zero-copy view, not the kernel's copy


def _kernel_impl(op_class: type[Operation]):
    def run(self, interpreter: Interpreter, op: Operation, args: tuple[Any, ...]):
        return evaluate(op, args)

    return impl(op_class)(run)


for _op_class in KERNELS:
    if _op_class is not nn.ConstantOp:
        setattr(NnFunctions, f"run_{_op_class.name.removeprefix('nn.')}", _kernel_impl(_op_class))
register_impls(NnFunctions)


def find_main(module: ModuleOp) -> func.FuncOp:
    """The module's ``func.func @main``; ValueError (TypeError for a non-module) when there is none."""
    return arguments.find_main(module, "run")


def make_interpreter(module: ModuleOp) -> Interpreter:
    """An xDSL ``Interpreter`` for ``module`` with the func, builtin and nn implementations."""
    # Imported here: `xdsl.interpreters` imports every xDSL interpreter (RISC-V's too), a quarter of a
    # second that the lowered levels' executors, which never use it, would pay on their first run.
    from xdsl.interpreters.builtin import BuiltinFunctions
    from xdsl.interpreters.func import FuncFunctions

    interpreter = Interpreter(module)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(BuiltinFunctions())
    interpreter.register_implementations(NnFunctions())
    return interpreter


def execution_level(main: func.FuncOp) -> str:
    """The executor of a function: ``"nn"`` (xDSL's interpreter), ``"linalg"`` (linalg on tensors or
    memrefs, vectorised) or ``"loops"`` (the scalar loops executor)."""
    level = module_level(main)
    return "linalg" if level == "memref" else level


def check_no_recursion(module: ModuleOp) -> None:
    """ValueError naming the cycle when `@main` reaches a function that calls itself (directly or
    through others): no executor supports recursion (the nn one would exhaust Python's stack)."""
    callees = {f.sym_name.data: [call.callee.root_reference.data for call in f.walk() if isinstance(call, func.CallOp)]
               for f in module.ops if isinstance(f, func.FuncOp)}
    done: set[str] = set()

    def visit(path: list[str]) -> None:
        for callee in callees.get(path[-1], ()):
            if callee in path:
                cycle = path[path.index(callee):] + [callee]
                raise ValueError(f"run: recursion is not supported ({' -> '.join('@' + n for n in cycle)})")
            if callee not in done:
                visit(path + [callee])
        done.add(path[-1])

    visit(["main"])


def runnable_level(module: ModuleOp) -> str:
    """`execution_level` of `@main`, once the module is known to run: no recursion, and no
    `func.call` below the nn level (a ValueError otherwise)."""
    check_no_recursion(module)
    main = find_main(module)
    if any(isinstance(op, func.CallOp) for op in main.walk()) and any(
        execution_level(f) != "nn" for f in module.ops if isinstance(f, func.FuncOp)
    ):
        raise ValueError("run: func.call runs only at the nn level; lowered levels execute @main alone "
                         "(inline the callee before lowering)")
    return execution_level(main)


def checked_arguments(main: func.FuncOp, inputs: Mapping[str, object] | Sequence[object],
                      params: Mapping[str, object] | None = None) -> tuple[Any, ...]:
    """The arguments of `main`, in order, from `inputs` and `params` as `run` takes them, each
    checked against its type (`run` says how; every problem is a ValueError or TypeError)."""
    if isinstance(inputs, str | bytes | np.ndarray) or not isinstance(inputs, Mapping | Sequence):
        raise TypeError(f"run: inputs must be a mapping of @main argument names to arrays, or a list of "
                        f"arrays in argument order, got {type(inputs).__name__}")
    if params is not None and not isinstance(params, Mapping):
        raise TypeError(f"run: params must be a mapping of @main argument names to arrays, "
                        f"got {type(params).__name__}")
    params = dict(params or {})
    args = main.body.block.args
    names = argument_names(main)
    if not isinstance(inputs, Mapping):
        left = [n for n in names if n not in params]
        if len(inputs) != len(left):
            raise ValueError(f"run: {len(inputs)} positional input(s) for the {len(left)} argument(s) of @main "
                             f"not in params: {left}")
        inputs = dict(zip(left, inputs))
    both = sorted(set(inputs) & set(params))
    if both:
        raise ValueError(f"run: argument(s) {both} given in both inputs and params")
    given = {**params, **inputs}
    missing = [f"'{n}' ({a.type})" for n, a in zip(names, args) if n not in given]
    if missing:
        raise ValueError(f"run: missing argument(s) of @main: {', '.join(missing)}")
    extra = sorted(set(given) - set(names))
    if extra:
        raise ValueError(f"run: @main has no argument(s) {extra}; its arguments are {names}")
    try:
        return tuple(arguments.checked_argument(given[n], a.type, n) for n, a in zip(names, args))
    except ValueError as error:
        raise ValueError(f"run: {error}") from None


def run(
    module: ModuleOp,
    inputs: Mapping[str, object] | Sequence[object],
    params: Mapping[str, object] | None = None,
    backend: str = "xrelay",
) -> np.ndarray | list[np.ndarray]:
    """Execute ``@main`` of a module on numpy arrays.

    ``inputs`` maps ``@main``'s argument names to arrays, or lists arrays for the arguments ``params``
    leaves, in order; together they cover every argument once. Arrays of another dtype of the same kind
    are cast; anything missing, extra, mis-shaped or of the wrong kind is a ValueError naming the
    argument. One result comes back as an array, several as a list (as TVM's executor does).

    An nn-level module runs on xDSL's ``Interpreter`` (a failing kernel raises :class:`KernelError`), a
    lowered one on the linalg/memref or loops executor; ``backend="iree"`` compiles it with IREE
    (cached; for repeated runs compile once with ``iree_backend.compile_module``)."""
    if backend not in ("xrelay", "iree"):
        raise ValueError(f"run: unknown backend {backend!r}; expected 'xrelay' or 'iree'")
    main = find_main(module) if not isinstance(module, ModuleOp) else cached_program(module, find_main)
    values = checked_arguments(main, inputs, params)
    level = cached_program(module, runnable_level)  # the walks once per state of the module
    if backend == "iree":
        from xrelay.runtime.iree.backend import run_iree

        results = run_iree(module, list(values))
    elif level == "nn":
        try:
            results = make_interpreter(module).call_op(main, values)
        except KernelAbort as abort:
            raise abort.error from abort.error.__cause__
    elif level == "linalg":
        from xrelay.runtime.executor.linalg_exec import run_linalg

        results = run_linalg(module, list(values))
    else:
        from xrelay.runtime.reference.loops_exec import run_loops

        results = run_loops(module, list(values))
    outputs = [r if r.flags.writeable else np.array(r) for r in results]
    return outputs[0] if len(outputs) == 1 else outputs
