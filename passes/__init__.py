"""xrelay.passes: Relay's graph passes over the nn dialect, as xDSL ModulePasses.

`InferType()`, `FoldConstant()`, `SimplifyInference()`, `BackwardFoldScaleAxis()`,
`ForwardFoldScaleAxis()`, `CanonicalizeOps()`, `DeadCodeElimination()` and
`ConvertLayout(desired_layouts)` build passes; `FoldScaleAxis()` builds Relay's Sequential of
the two FoldScaleAxis halves and FoldConstant. A pass is callable, `pass_(mod) -> mod`, and
runs under the current PassContext. Importing this package registers every pass under its
TVM name and its pipeline name (for `required` and `transform.get_pass`).

`ALL_PASSES` maps each pipeline name (`fold-constant`, ...) to a loader returning its
ModulePass class, for `xrelay-opt` and the stock `xdsl-opt` (through `xrelay.universe`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from xdsl.passes import ModulePass

from xrelay.instrument.xdsl_pass import xdsl_context
from xrelay.passes.canonicalize_ops import CanonicalizeOps
from xrelay.passes.dead_code_elimination import DeadCodeElimination
from xrelay.passes.fold_constant import FoldConstant
from xrelay.passes.fold_scale_axis import (
    BackwardFoldScaleAxis,
    FoldScaleAxis,
    FoldScaleAxisPass,
    ForwardFoldScaleAxis,
)
from xrelay.passes.infer_type import InferType
from xrelay.passes.simplify_inference import SimplifyInference

_OWN_PASSES: tuple[type[ModulePass], ...] = (
    InferType,
    FoldConstant,
    SimplifyInference,
    BackwardFoldScaleAxis,
    ForwardFoldScaleAxis,
    FoldScaleAxisPass,
    CanonicalizeOps,
    DeadCodeElimination,
)


def _load_convert_layout() -> type[ModulePass]:
    return importlib.import_module("xrelay.passes.convert_layout").ConvertLayout


def _class_loader(cls: type[ModulePass]) -> Callable[[], type[ModulePass]]:
    return lambda: cls


ALL_PASSES: dict[str, Callable[[], type[ModulePass]]] = {cls.name: _class_loader(cls) for cls in _OWN_PASSES}
"""Pipeline name (`fold-constant`, ...) -> callable returning that pass's ModulePass class.
The names avoid xDSL's own (`dce`, `canonicalize`)."""

ALL_PASSES["convert-layout"] = _load_convert_layout

# The lowering passes (convert-nn-to-linalg, nn-bufferize, linalg-to-loops), loaded lazily too.
from xrelay.lowering import LOWERING_PASSES  # noqa: E402

ALL_PASSES.update(LOWERING_PASSES)

# Build the shared xDSL context (loading its dialects takes ~0.1 s) now, when passes are imported,
# rather than inside the first pass that runs: that pass's timing should show its own work.
xdsl_context()

__all__ = [
    "ALL_PASSES",
    "BackwardFoldScaleAxis",
    "CanonicalizeOps",
    "ConvertLayout",
    "DeadCodeElimination",
    "FoldConstant",
    "FoldScaleAxis",
    "ForwardFoldScaleAxis",
    "InferType",
    "SimplifyInference",
]


def __getattr__(name: str) -> Any:
    # ConvertLayout is loaded on first use, so a problem there cannot break the other passes.
    if name == "ConvertLayout":
        return _load_convert_layout()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
