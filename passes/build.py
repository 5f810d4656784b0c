"""`build`: the whole pipeline from the nn graph to what the executor runs (`xrelay.build`'s passes).

    Build
      optimize         graph passes, each filtered by the context's opt level as usual (TVM's
                       tutorials build under PassContext(opt_level=3): the fastest pipeline)
      lower-to-linalg  convert-nn-to-linalg
      kernels          canonicalize-inits, channels-last, matmul-weights-k-major, select-to-minmax,
                       max-pool-before-monotonic (opt level 3), whole-window-as-reduction, drop-unit-dims,
                       expand-through-collapse, split-elementwise-bodies, form-kernels,
                       choose-conv-algorithm, split-kernels, plan-memory (target "cpu");
                       conv-space-to-depth, conv-to-matmul, pool-as-window-slices, iree-conv-tiles
                       (target "iree")

On a module already at the linalg level (what upstream tools write) only `kernels` runs. For "cpu"
every function ends marked `kernel.formed`: the executor then fuses only what `kernel.dispatch` ops
say, so with a kernel pass skipped (`--opt-bisect-limit`, `disabled_pass`) the module runs op by op.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, UnitAttr

from xrelay.dialects.kernel import FORMED
from xrelay.dialects.levels import module_level
from xrelay.pass_base import XRelayPass, register_xrelay_pass

TARGETS = ("cpu", "iree")
DESIRED_LAYOUTS = {"nn.conv2d": ["NHWC", "HWIO"]}
"""The layout `build` converts convolutions to: what the CPU executor's GEMMs and IREE run fastest."""


def graph_passes() -> list[XRelayPass]:
    """The graph passes `build` runs, in order."""
    from xrelay import passes

    return [
        passes.SimplifyInference(), passes.FoldScaleAxis(), passes.FoldConstant(), passes.ConcatFirst(),
        passes.MaxPoolFirst(), passes.PoolAfterPointwiseConv(), passes.ShuffleIntoConv(),
        passes.PreActivationShift(), passes.ConvertLayout(DESIRED_LAYOUTS), passes.ScaleIntoConvWeight(),
        passes.FoldConstant(),
    ]


def kernel_passes(target: str = "cpu") -> list[XRelayPass]:
    """The passes after lowering that shape the linalg for `target`."""
    if target == "iree":
        from xrelay.lowering.conv_as_matmul import ConvToMatmul
        from xrelay.lowering.conv_space_to_depth import ConvSpaceToDepth
        from xrelay.lowering.iree_conv_tiles import IreeConvTiles
        from xrelay.lowering.pool_as_window_slices import PoolAsWindowSlices

        return [ConvSpaceToDepth(), ConvToMatmul(), PoolAsWindowSlices(), IreeConvTiles()]
    from xrelay.passes.kernels.canonicalize_inits import CanonicalizeInits
    from xrelay.passes.kernels.channels_last import ChannelsLast
    from xrelay.passes.kernels.choose_conv_algorithm import ChooseConvAlgorithm
    from xrelay.passes.kernels.drop_unit_dims import DropUnitDims
    from xrelay.passes.kernels.expand_through_collapse import ExpandThroughCollapseShape
    from xrelay.passes.kernels.form_kernels import FormKernels
    from xrelay.passes.kernels.matmul_weights_k_major import MatmulWeightsKMajor
    from xrelay.passes.kernels.max_pool_before_monotonic import MaxPoolBeforeMonotonic
    from xrelay.passes.kernels.plan_memory import PlanMemory
    from xrelay.passes.kernels.select_to_minmax import SelectToMinMax
    from xrelay.passes.kernels.split_elementwise_bodies import SplitElementwiseBodies
    from xrelay.passes.kernels.split_kernels import SplitKernels
    from xrelay.passes.kernels.whole_window_as_reduction import WholeWindowAsReduction

    return [CanonicalizeInits(), ChannelsLast(), MatmulWeightsKMajor(), SelectToMinMax(), MaxPoolBeforeMonotonic(),
            WholeWindowAsReduction(), DropUnitDims(), ExpandThroughCollapseShape(), SplitElementwiseBodies(), FormKernels(),
            ChooseConvAlgorithm(), SplitKernels(), PlanMemory()]


def phases(module: ModuleOp, target: str) -> list:
    """The Sequentials `build` runs on `module` for `target`."""
    from xrelay import lowering
    from xrelay.transform import Sequential

    if target not in TARGETS:
        raise ValueError(f"build: unknown target {target!r}; expected one of {', '.join(TARGETS)}")
    found = []
    if module_level(module) == "nn":
        found += [Sequential(graph_passes(), name="optimize"), lowering.pipeline("linalg")]
    return [*found, Sequential(kernel_passes(target), name="kernels")]


@register_xrelay_pass("build", opt_level=0)
@dataclass(frozen=True)
class Build(XRelayPass):
    """nn (or linalg on tensors) to the linalg the `target`'s executor runs: the graph passes,
    lowering and kernel formation (see the module docstring)."""

    target: str = "cpu"

    def transform_module(self, mod: ModuleOp, pass_ctx) -> ModuleOp:
        from xrelay.instrument.pass_manager import run_pass

        for phase in phases(mod, self.target):
            mod = run_pass(phase, mod, pass_ctx)
        if self.target == "cpu":  # what the executor fuses is decided, even if a kernel pass was skipped
            for function in mod.walk():
                if isinstance(function, func.FuncOp):
                    function.attributes[FORMED] = UnitAttr()
        return mod

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """In place, for the stock `xdsl-opt` (the current PassContext's instruments still see it)."""
        from xrelay.instrument.pass_context import PassContext

        built = self.transform_module(op, PassContext.current())
        if built is not op:
            for block in list(op.body.blocks):
                op.body.detach_block(block).erase()
            op.body.add_block(built.body.detach_block(built.body.block))
