"""Running a lowered module's `@main` on the linalg/memref executor (`linalg_exec.LinalgProgram`).

`compile_linalg(module)` compiles it once for repeated runs; `run_linalg(module, inputs)` runs it,
compiling once per unchanged module; `run_lowered` sends a module with loop nests to the loops
executor instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.executor.program_entry import bind_inputs, cached_program

__all__ = ["compile_linalg", "is_lowered", "run_linalg", "run_lowered"]


def compile_linalg(module: ModuleOp) -> LinalgProgram:
    """Compile `@main` of a linalg- or memref-level module once, for repeated runs."""
    return LinalgProgram(module)


def run_linalg(module: ModuleOp, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run `@main` of a linalg- or memref-level module on `inputs` (by argument name or position).

    The module is compiled once and the program reused while the module is unchanged."""
    program = cached_program(module, LinalgProgram)
    return program(*bind_inputs(program.arg_names, inputs))


def is_lowered(module: ModuleOp) -> bool:
    """Whether `@main` is below the nn level (no nn ops left, some linalg/memref/scf/tensor/arith op)."""
    main = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main"), None)
    if main is None:
        return False
    dialects = {op.name.split(".")[0] for op in main.walk()}
    return "nn" not in dialects and bool(dialects & {"linalg", "memref", "scf", "tensor", "arith"})


def run_lowered(module: ModuleOp, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run a linalg-, memref- or loops-level module: loop nests on the compiled scalar executor
    (`loops_exec`), everything else on the vectorised one."""
    main = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    if any(op.name == "scf.for" for op in main.walk()):
        from xrelay.runtime.reference.loops_exec import run_loops

        return run_loops(module, inputs)
    return run_linalg(module, inputs)
