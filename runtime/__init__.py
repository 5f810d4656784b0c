"""xrelay.runtime: execution of modules at every level.

``run(module, inputs, params=None)`` executes ``@main``; ``KERNELS`` maps each nn op to its numpy
kernel; ``compile_linalg(module)`` compiles a linalg- or memref-level module once into a program to
call with arrays. They are imported on first use, so ``import xrelay.runtime`` stays cheap."""

from typing import Any

__all__ = ["KERNELS", "KernelError", "NnFunctions", "compile_linalg", "run"]

_LAZY = {
    "KERNELS": "xrelay.runtime.reference.nn_kernels",
    "run": "xrelay.runtime.reference.interpreter",
    "KernelError": "xrelay.runtime.reference.interpreter",
    "NnFunctions": "xrelay.runtime.reference.interpreter",
    "compile_linalg": "xrelay.runtime.executor.linalg_exec",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'xrelay.runtime' has no attribute {name!r}")
