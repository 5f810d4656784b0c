"""Running a lowered module's `@main` on the linalg/memref executor (`linalg_exec.LinalgProgram`):
`compile_linalg(module)` compiles it once for repeated runs; `run_linalg(module, inputs)` runs it,
compiling once per unchanged module."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.executor.program_entry import bind_inputs, cached_program

__all__ = ["compile_linalg", "run_linalg"]


def compile_linalg(module: ModuleOp) -> LinalgProgram:
    """Compile `@main` of a linalg- or memref-level module once, for repeated runs."""
    return LinalgProgram(module)


def run_linalg(module: ModuleOp, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run `@main` of a linalg- or memref-level module on `inputs` (by argument name or position),
    compiled once and reused while the module is unchanged."""
    program = cached_program(module, LinalgProgram)
    return program(*bind_inputs(program.arg_names, inputs))
