"""`xrelay.build`: TVM's `relay.build`, one pipeline from the nn graph to what executes.

`build(mod, params=None, target="cpu")` binds `params`, then runs the `Build` pass (`-p build` in
`xrelay-opt`; its phases in passes/build.py) under the current PassContext, so every instrument sees
every phase: the graph passes (each filtered by the context's opt level: build under
`PassContext(opt_level=3)`, as TVM's tutorials do, for the fastest pipeline), lowering to linalg, and
kernel formation.

It returns an `Executable`: called with arrays it runs the built module (`runtime.run`'s argument
conventions); `.module` is the final IR, every decision the CPU executor applies written in it
(`kernel.dispatch` ops and their attributes); `.save(path)` writes it as `.mlir` with its weights in an
`.npz` beside it, which `xrelay-run` executes without running any pass (`Executable.load` does the
same in Python).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp

def build(mod: ModuleOp, params: Mapping[str, np.ndarray] | None = None, target: str = "cpu") -> Executable:
    """Build `mod` (nn, or linalg on tensors) for `target` under the current PassContext."""
    from xrelay.frontend import bind_params_by_name
    from xrelay.passes.build import Build

    if params:
        mod = bind_params_by_name(mod, dict(params))
    return Executable(Build(target)(mod), target)


class Executable:
    """A built module and its compiled program (TVM's `relay.build` result with its graph executor)."""

    def __init__(self, module: ModuleOp, target: str = "cpu"):
        from xrelay.runtime.reference.interpreter import find_main

        self.module = module
        """The final IR: what runs, every executor decision in it."""
        self.target = target
        main = find_main(module)
        self._main = main
        if target == "iree":
            from xrelay.runtime.iree.backend import compile_module

            self._program = compile_module(module)
        else:
            from xrelay.runtime.executor.linalg_exec import LinalgProgram

            self._program = LinalgProgram(module)

    @property
    def program(self):
        """The compiled program (`LinalgProgram` for "cpu", IREE's `CompiledModule` for "iree")."""
        return self._program

    def __call__(self, *args: np.ndarray | Mapping[str, np.ndarray] | Sequence[np.ndarray]):
        """Run on arrays in argument order, or on one mapping of argument names to arrays; one
        result comes back as an array, several as a list (as `runtime.run`)."""
        if len(args) == 1 and isinstance(args[0], Mapping):
            from xrelay.runtime.reference.interpreter import checked_arguments

            args = checked_arguments(self._main, args[0])
        results = self._program(*args)
        return results[0] if len(results) == 1 else results

    def save(self, path: str | Path) -> None:
        """Write the built module as `.mlir` (what `xrelay-run` executes without planning passes), its
        large constants as `dense_resource` handles whose arrays go to the `.npz` of the same name
        beside it (xrelay/weights_file.py): readable IR, and quick to load."""
        from xrelay.output_file import open_output
        from xrelay.weights_file import save_with_weights

        path = Path(path)
        text, weights = save_with_weights(self.module, path)
        if weights is not None:  # first, so that the module never names a weights file not yet there
            with open_output(path.with_suffix(".npz"), "wb") as f:
                f.write(weights)
        with open_output(path) as f:
            f.write(text)

    @staticmethod
    def load(path: str | Path) -> Executable:
        """The executable of a saved built module and its weights file (no pass runs); a
        `weights_file.WeightsError` when the weights file is missing or not the module's."""
        from xdsl.parser import Parser

        from xrelay.dialects import make_context
        from xrelay.weights_file import load_weights

        with open(path, "rb") as f:
            module = Parser(make_context(), f.read(), str(path)).parse_module()
        load_weights(module, path)
        return Executable(module)

    def close(self) -> None:
        """Release what the compiled program holds (an IREE session), if anything."""
        close = getattr(self._program, "close", None)
        if close is not None:
            close()
