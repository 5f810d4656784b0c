"""xrelay.passes: Relay's graph passes over the nn dialect, as xDSL ModulePasses.

`InferType()`, `FoldConstant()`, `SimplifyInference()`, `BackwardFoldScaleAxis()`,
`ForwardFoldScaleAxis()`, `CanonicalizeOps()`, `DeadCodeElimination()`, `ConcatFirst()`, `MaxPoolFirst()`, `PoolAfterPointwiseConv()`, `ShuffleIntoConv()`, `PreActivationShift()`,
`ScaleIntoConvWeight()` and
`ConvertLayout(desired_layouts)` build passes; `FoldScaleAxis()` runs as Relay's Sequential of
the two FoldScaleAxis halves and FoldConstant. Each is a pass class, and a pass is callable,
`pass_(mod) -> mod`, running under the current PassContext.

Every pass registers itself with `@register_xrelay_pass` (`xrelay/pass_base.py`); importing
this package imports every module of `xrelay.passes` and `xrelay.lowering`, so that one
registration is all a pass needs: `ALL_PASSES` (pipeline name -> loader of the class, the
convention of xDSL's `get_all_passes`, for `xrelay-opt` and the stock `xdsl-opt` through
`xrelay.universe`), `transform.get_pass` and `xrelay.passes.<ClassName>` all come from it.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

from xdsl.passes import ModulePass

from xrelay.instrument.xdsl_pass import xdsl_context
from xrelay.pass_base import XRELAY_PASSES
from xrelay.passes.canonicalize_ops import CanonicalizeOps
from xrelay.passes.concat_first import ConcatFirst
from xrelay.passes.convert_layout import ConvertLayout
from xrelay.passes.dead_code_elimination import DeadCodeElimination
from xrelay.passes.fold_constant import FoldConstant
from xrelay.passes.fold_scale_axis import (
    BackwardFoldScaleAxis,
    FoldScaleAxis,
    ForwardFoldScaleAxis,
)
from xrelay.passes.infer_type import InferType
from xrelay.passes.max_pool_first import MaxPoolFirst
from xrelay.passes.pool_after_pointwise_conv import PoolAfterPointwiseConv
from xrelay.passes.preactivation_shift import PreActivationShift
from xrelay.passes.scale_into_conv_weight import ScaleIntoConvWeight
from xrelay.passes.shuffle_into_conv import ShuffleIntoConv
from xrelay.passes.simplify_inference import SimplifyInference


def _import_pass_modules(package_name: str) -> None:
    """Import every module of a package (and its subpackages) so their passes register."""
    package = importlib.import_module(package_name)
    for module in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}."):
        importlib.import_module(module.name)


for _package in ("xrelay.passes", "xrelay.lowering"):
    _import_pass_modules(_package)


def _class_loader(cls: type[ModulePass]) -> Callable[[], type[ModulePass]]:
    return lambda: cls


ALL_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    name: _class_loader(cls) for name, cls in XRELAY_PASSES.items() if cls.__module__.startswith("xrelay.")
}
"""Pipeline name (`fold-constant`, ...) -> callable returning that pass's ModulePass class, for every
pass of xrelay itself (a plugin's passes, even registered with `@register_xrelay_pass` and imported
first, are its own universe's: two universes naming one pass would break the stock `xdsl-opt`).
The names avoid xDSL's own (`dce`, `canonicalize`)."""

# Build the shared xDSL context (loading its dialects takes ~0.1 s) now, when passes are imported,
# rather than inside the first pass that runs: that pass's timing should show its own work.
xdsl_context()

__all__ = [
    "ALL_PASSES",
    "BackwardFoldScaleAxis",
    "CanonicalizeOps",
    "ConcatFirst",
    "ConvertLayout",
    "DeadCodeElimination",
    "FoldConstant",
    "FoldScaleAxis",
    "ForwardFoldScaleAxis",
    "InferType",
    "MaxPoolFirst",
    "PoolAfterPointwiseConv",
    "PreActivationShift",
    "ScaleIntoConvWeight",
    "ShuffleIntoConv",
    "SimplifyInference",
]


_FORMER_NAMES = {"FoldScaleAxisPass": FoldScaleAxis}
"""Class names of an earlier release that still resolve (`xrelay.passes.FoldScaleAxisPass`)."""


def __getattr__(name: str) -> Any:
    if name in _FORMER_NAMES:
        return _FORMER_NAMES[name]
    # A pass registered in a module of its own is `xrelay.passes.<ClassName>` without an import here.
    for cls in XRELAY_PASSES.values():
        if cls.__name__ == name:
            return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
