"""xrelay.passes: Relay's graph passes over the nn dialect, as xDSL ModulePasses.

`InferType()`, `FoldConstant()`, `SimplifyInference()`, `BackwardFoldScaleAxis()`,
`ForwardFoldScaleAxis()`, `CanonicalizeOps()`, `DeadCodeElimination()`, `ConcatFirst()`, `MaxPoolFirst()`, `PoolAfterPointwiseConv()`, `ShuffleIntoConv()`, `PreActivationShift()`,
`ScaleIntoConvWeight()` and
`ConvertLayout(desired_layouts)` build passes; `FoldScaleAxis()` runs as Relay's Sequential of
the two FoldScaleAxis halves and FoldConstant. Each is a pass class, and a pass is callable,
`pass_(mod) -> mod`, running under the current PassContext.

Every pass registers itself with `@register_xrelay_pass` (`xrelay/pass_base.py`) and is listed in
`PASS_MODULES` (pipeline name -> its module), as xDSL's `get_all_passes` lists its passes: `-p NAME`
imports that one module, so a tool starts without importing every pass. `load_all_passes()` imports
every module of `xrelay.passes` and `xrelay.lowering` (what `transform.get_pass` falls back to, through
`xrelay.plugins.load_plugins`); `xrelay.passes.<ClassName>` does too.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

from xdsl.passes import ModulePass

PASS_MODULES: dict[str, str] = {
    "backward-fold-scale-axis": "xrelay.passes.fold_scale_axis",
    "build": "xrelay.passes.build",
    "canonicalize-inits": "xrelay.passes.kernels.canonicalize_inits",
    "canonicalize-ops": "xrelay.passes.canonicalize_ops",
    "channels-last": "xrelay.passes.kernels.channels_last",
    "choose-conv-algorithm": "xrelay.passes.kernels.choose_conv_algorithm",
    "concat-first": "xrelay.passes.concat_first",
    "conv-space-to-depth": "xrelay.lowering.conv_space_to_depth",
    "conv-to-matmul": "xrelay.lowering.conv_as_matmul",
    "convert-layout": "xrelay.passes.convert_layout",
    "convert-nn-to-linalg": "xrelay.lowering.nn_to_linalg",
    "dead-code-elimination": "xrelay.passes.dead_code_elimination",
    "drop-unit-dims": "xrelay.passes.kernels.drop_unit_dims",
    "expand-through-collapse": "xrelay.passes.kernels.expand_through_collapse",
    "fold-constant": "xrelay.passes.fold_constant",
    "fold-scale-axis": "xrelay.passes.fold_scale_axis",
    "form-kernels": "xrelay.passes.kernels.form_kernels",
    "forward-fold-scale-axis": "xrelay.passes.fold_scale_axis",
    "fuse-multiply-add": "xrelay.passes.fuse_multiply_add",
    "infer-type": "xrelay.passes.infer_type",
    "iree-conv-tiles": "xrelay.lowering.iree_conv_tiles",
    "linalg-bufferize": "xrelay.lowering.bufferize",
    "linalg-to-loops": "xrelay.lowering.linalg_to_loops",
    "matmul-weights-k-major": "xrelay.passes.kernels.matmul_weights_k_major",
    "max-pool-before-monotonic": "xrelay.passes.kernels.max_pool_before_monotonic",
    "max-pool-first": "xrelay.passes.max_pool_first",
    "plan-buffers": "xrelay.passes.plan_buffers",
    "plan-memory": "xrelay.passes.kernels.plan_memory",
    "pool-after-pointwise-conv": "xrelay.passes.pool_after_pointwise_conv",
    "pool-as-window-slices": "xrelay.lowering.pool_as_window_slices",
    "preactivation-shift": "xrelay.passes.preactivation_shift",
    "scale-into-conv-weight": "xrelay.passes.scale_into_conv_weight",
    "select-to-minmax": "xrelay.passes.kernels.select_to_minmax",
    "shuffle-into-conv": "xrelay.passes.shuffle_into_conv",
    "simplify-inference": "xrelay.passes.simplify_inference",
    "sink-reduction-loops": "xrelay.passes.sink_reduction_loops",
    "split-elementwise-bodies": "xrelay.passes.kernels.split_elementwise_bodies",
    "split-kernels": "xrelay.passes.kernels.split_kernels",
    "tile-loops": "xrelay.passes.tile_loops",
    "unroll-jam-loops": "xrelay.passes.unroll_jam_loops",
    "whole-window-as-reduction": "xrelay.passes.kernels.whole_window_as_reduction",
    "winograd-conv": "xrelay.passes.winograd_conv",
}
"""Pipeline name -> the module whose `@register_xrelay_pass` registers it, for every pass of xrelay
(tests/test_pass_registry.py checks it against the registrations). The names avoid xDSL's own
(`dce`, `canonicalize`)."""


def _class_loader(name: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        from xrelay.pass_base import XRELAY_PASSES

        importlib.import_module(PASS_MODULES[name])
        return XRELAY_PASSES[name]

    return load


ALL_PASSES: dict[str, Callable[[], type[ModulePass]]] = {name: _class_loader(name) for name in PASS_MODULES}
"""Pipeline name -> callable returning that pass's ModulePass class (importing its module), for every
pass of xrelay itself (the convention of xDSL's `get_all_passes`, for `xrelay-opt -p` and the stock
`xdsl-opt` through `xrelay.universe`). A plugin's passes, even registered with `@register_xrelay_pass`,
are its own universe's: two universes naming one pass would break the stock `xdsl-opt`."""

_all_loaded = False


def load_all_passes() -> None:
    """Import every module of `xrelay.passes` and `xrelay.lowering` (and their subpackages), once: every
    pass, lowering and backend lowering registers itself, and the shared xDSL context is built (loading
    its dialects takes ~0.1 s) now rather than inside the first pass that runs, whose timing should
    show its own work."""
    global _all_loaded
    if _all_loaded:
        return
    _all_loaded = True
    for package_name in ("xrelay.passes", "xrelay.lowering"):
        package = importlib.import_module(package_name)
        for module in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}."):
            importlib.import_module(module.name)
    from xrelay.instrument.xdsl_pass import xdsl_context

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


_FORMER_NAMES = {"FoldScaleAxisPass": "FoldScaleAxis"}
"""Class names of an earlier release that still resolve (`xrelay.passes.FoldScaleAxisPass`)."""


def __getattr__(name: str) -> Any:
    # Every pass is `xrelay.passes.<ClassName>`, looked up once and then kept as a module attribute.
    if not name[:1].isupper():  # a submodule not imported yet, `__path__`, ...: no pass class
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from xrelay.pass_base import XRELAY_PASSES

    load_all_passes()
    wanted = _FORMER_NAMES.get(name, name)
    for cls in XRELAY_PASSES.values():
        if cls.__name__ == wanted and cls.__module__.startswith("xrelay."):
            globals()[name] = cls
            return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
