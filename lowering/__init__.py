"""xrelay.lowering: nn → linalg on tensors → linalg on memrefs → scf loops.

Passes (xrelay `XRelayPass`es, so instrumented, and xDSL ModulePasses usable from `xrelay-opt`):
`ConvertNNToLinalg` (`convert-nn-to-linalg`), `LinalgBufferize` (`linalg-bufferize`) and
`LinalgToLoops` (`linalg-to-loops`). `lower(module, to=...)` runs the pipeline for a level as a
`transform.Sequential` under the current PassContext and returns the lowered module (the input
module is left as it was).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.dialects.builtin import ModuleOp

__all__ = ["LEVEL_PASSES", "ConvertNNToLinalg", "LinalgBufferize", "LinalgToLoops", "lower", "pipeline"]

_CLASSES = {
    "ConvertNNToLinalg": "xrelay.lowering.nn_to_linalg",
    "LinalgBufferize": "xrelay.lowering.bufferize",
    "LinalgToLoops": "xrelay.lowering.linalg_to_loops",
}

LEVEL_PASSES: dict[str, tuple[str, ...]] = {
    "linalg": ("ConvertNNToLinalg",),
    "memref": ("ConvertNNToLinalg", "LinalgBufferize"),
    "loops": ("ConvertNNToLinalg", "LinalgBufferize", "LinalgToLoops"),
}
"""Lowering level → the passes (class names, in order) that bring an nn module there."""


def _loader(class_name: str) -> Callable[[], type]:
    return lambda: getattr(importlib.import_module(_CLASSES[class_name]), class_name)


_FORMER_NAMES = {"NNBufferize": "LinalgBufferize"}
"""Class names of an earlier release that still resolve (`xrelay.lowering.NNBufferize`)."""


def __getattr__(name: str):
    name = _FORMER_NAMES.get(name, name)
    if name in _CLASSES:
        return _loader(name)()
    raise AttributeError(f"module 'xrelay.lowering' has no attribute {name!r}")


def pipeline(to: str, start: str = "nn"):
    """The `transform.Sequential` (named `lower-to-<level>`) that lowers a module at level `start`
    (an nn module, or one already part-way down) to level `to`."""
    from xrelay.transform import Sequential

    for level in (to, start):
        if level not in LEVEL_PASSES and level != "nn":
            raise ValueError(f"lower: unknown level {level!r}; expected one of {', '.join(LEVEL_PASSES)}")
    done = len(LEVEL_PASSES.get(start, ()))
    return Sequential([_loader(name)()() for name in LEVEL_PASSES[to][done:]], name=f"lower-to-{to}")


def lower(module: ModuleOp, to: str = "linalg", start: str = "nn") -> ModuleOp:
    """Lower `module` from level `start` (default nn) to `to` ("linalg", "memref" or "loops"); returns a
    new module."""
    return pipeline(to, start)(module)
