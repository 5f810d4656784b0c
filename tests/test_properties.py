"""Property-based tests (Hypothesis): random small nn graphs keep their outputs through every graph pass,
and the nn, linalg, memref and loops levels give the same answers.

The graphs mix random ops (elementwise unary ops, broadcasting binary ops against constants of lower rank,
convolutions in NCHW or NHWC with their kernel layouts, pools in either layout, batch_norm, bias_add,
transpose, reshape, expand_dims, softmax, reductions, prelu, log_softmax, lrn, a dense head) and branching
steps (Inception-style concatenations, DenseNet blocks, residual units, ShuffleNet's channel shuffle),
random shapes and random constants. The reference is the nn-level run of the unchanged graph. Every graph
pass of `xrelay.passes` is checked (a test fails when one is missing), and branching graphs also run as the
benchmarks run them: opt level 3 + NHWC, compiled once into a memory-planned linalg program, run on
several inputs. `make test` runs the `ci` profile (derandomised, a few examples each);
`HYPOTHESIS_PROFILE=long` runs many more.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from module_builder import RandomGraph

from xrelay.dialects import nn
from xrelay.frontend.builder import shape_of
from xrelay.instrument import PassContext
from xrelay.transform import Sequential
from xrelay.lowering import lower
from xrelay.lowering import pipeline as lowering_pipeline
from xrelay.pass_base import XRELAY_PASSES
from xrelay.passes.build import Build
from xrelay.passes.kernels.canonicalize_inits import CanonicalizeInits
from xrelay.passes.kernels.channels_last import ChannelsLast
from xrelay.passes.kernels.choose_conv_algorithm import ChooseConvAlgorithm
from xrelay.passes.kernels.max_pool_before_monotonic import MaxPoolBeforeMonotonic
from xrelay.passes.kernels.drop_unit_dims import DropUnitDims
from xrelay.passes.kernels.expand_through_collapse import ExpandThroughCollapseShape
from xrelay.passes.kernels.matmul_weights_k_major import MatmulWeightsKMajor
from xrelay.passes.kernels.select_to_minmax import SelectToMinMax
from xrelay.passes.kernels.whole_window_as_reduction import WholeWindowAsReduction
from xrelay.passes.kernels.split_elementwise_bodies import SplitElementwiseBodies
from xrelay.passes.kernels.split_kernels import SplitKernels
from xrelay.passes.kernels.form_kernels import FormKernels
from xrelay.passes.kernels.plan_memory import PlanMemory
from xrelay.passes.plan_buffers import PlanBuffers
from xrelay.passes.fuse_multiply_add import FuseMultiplyAdd
from xrelay.passes.sink_reduction_loops import SinkReductionLoops
from xrelay.passes.tile_loops import TileLoops
from xrelay.passes.unroll_jam_loops import UnrollJamLoops
from xrelay.passes import (
    BackwardFoldScaleAxis,
    CanonicalizeOps,
    ConcatFirst,
    ConvertLayout,
    DeadCodeElimination,
    FoldConstant,
    FoldScaleAxis,
    ForwardFoldScaleAxis,
    InferType,
    MaxPoolFirst,
    PoolAfterPointwiseConv,
    PreActivationShift,
    ScaleIntoConvWeight,
    ShuffleIntoConv,
    SimplifyInference,
    load_all_passes,
)
from xrelay.passes.winograd_conv import WinogradConv
from xrelay.runtime import run
from xrelay.runtime.executor.linalg_exec import compile_linalg

# x/x at a zero input and softmax of inf are NaN on purpose: the levels must agree on them.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

_COMMON = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", max_examples=8, derandomize=True, **_COMMON)
settings.register_profile("long", max_examples=300, **_COMMON)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")

TO_LAYOUT = {"NCHW": (0, 1, 2, 3), "NHWC": (0, 2, 3, 1)}


class Graph(RandomGraph):
    """Draws one graph op by op; activations are 4-D in `layout` until a head flattens them."""

    def __init__(self, draw):
        self.draw = draw
        self.layout = "NCHW"
        shape = (1, draw(st.integers(1, 3)), draw(st.integers(2, 5)), draw(st.integers(2, 5)))
        super().__init__(shape, np.random.default_rng(draw(st.integers(0, 2**32 - 1))))

    def channels(self, x):
        return shape_of(x)[self.layout.index("C")]

    def step(self, x):
        draw = self.draw
        c = self.channels(x)
        kind = draw(st.sampled_from(["unary", "unary", "binary", "conv", "bn", "bias", "pool", "layout", "shape",
                                     "softmax", "reduce", "channel", "concat", "dense_block", "residual",
                                     "shuffle"]))
        if kind in ("concat", "dense_block", "residual", "shuffle"):
            return getattr(self, kind)(x)
        if kind == "unary":
            name = draw(st.sampled_from(["nn.relu", "nn.negative", "nn.sigmoid", "nn.tanh", "nn.erf", "nn.abs",
                                         "nn.exp", "sqrt", "log", "leaky_relu", "clip"]))
            if name == "sqrt":
                return self.op("nn.sqrt", self.op("nn.relu", x))
            if name == "log":
                return self.op("nn.log", self.op("nn.add", self.op("nn.abs", x), self.const((), 0.5, 1.0)))
            if name == "leaky_relu":
                return self.op("nn.leaky_relu", x, alpha=draw(st.sampled_from([0.01, 0.2, 1.5])))
            if name == "clip":
                low = draw(st.sampled_from([-1.0, -0.25, 0.0]))
                return self.op("nn.clip", x, a_min=low, a_max=low + draw(st.sampled_from([0.5, 1.0, 2.0])))
            return self.op(name, x)
        if kind == "binary":
            name = draw(st.sampled_from(["nn.add", "nn.subtract", "nn.multiply", "nn.divide", "nn.maximum",
                                         "nn.minimum", "nn.power"]))
            shape = shape_of(x)
            other_shape = draw(st.sampled_from([(), (shape[-1],), shape[-2:], shape, self._channel_shape(c)]))
            other = self.const(other_shape, 0.5, 1.5)
            if draw(st.integers(0, 4)) == 0:  # with itself: x/x is NaN where x is 0 (inputs hold zeros)
                return self.op(name, x, x)
            if name == "nn.power":  # a positive base: a negative one with a fractional exponent is NaN
                return self.op(name, self.op("nn.add", self.op("nn.abs", x), self.const((), 0.5, 1.0)), other)
            return self.op(name, other, x) if name != "nn.divide" and draw(st.booleans()) else self.op(name, x, other)
        if kind == "reduce":  # over H and/or W, keeping the rank so later ops still see 4-D data
            name = draw(st.sampled_from(["nn.sum", "nn.mean", "nn.max"]))
            axes = draw(st.sampled_from(["H", "W", "HW"]))
            return self.op(name, x, axis=tuple(self.layout.index(d) for d in axes), keepdims=True)
        if kind == "channel":  # ops along the channel axis
            choice = draw(st.sampled_from(["prelu", "log_softmax", "lrn"]))
            axis = self.layout.index("C")
            if choice == "prelu":
                return self.op("nn.prelu", x, self.const((c,), 0.0, 0.5), axis=axis)
            if choice == "lrn":
                return self.op("nn.lrn", x, size=3, axis=axis)
            return self.op("nn.log_softmax", x, axis=axis)
        if kind == "conv":
            out, k = draw(st.integers(1, 3)), draw(st.sampled_from([1, 3]))
            stride, dilation = draw(st.sampled_from([1, 2])), draw(st.sampled_from([1, 1, 2]))
            groups = c if c > 1 and draw(st.booleans()) else 1  # depthwise
            out = c if groups > 1 else out
            kernel_layout = "OIHW" if self.layout == "NCHW" else draw(st.sampled_from(["HWIO", "OHWI"]))
            dims = {"O": out, "I": c // groups, "H": k, "W": k}
            weight = self.const(tuple(dims[d] for d in kernel_layout))
            pad = dilation * (k // 2)
            return self.op("nn.conv2d", x, weight, strides=(stride, stride), padding=(pad,) * 4, channels=out,
                           kernel_size=(k, k), dilation=(dilation, dilation), groups=groups,
                           data_layout=self.layout, kernel_layout=kernel_layout)
        if kind == "bn":
            stats = [self.const((c,)), self.const((c,)), self.const((c,)), self.const((c,), 0.5, 2.0)]
            return self.b.op(nn.BatchNormOp, x, *stats, axis=self.layout.index("C"), epsilon=1e-3).results[0]
        if kind == "bias":
            return self.op("nn.bias_add", x, self.const((c,)), axis=self.layout.index("C"))
        if kind == "pool":
            h, w = (shape_of(x)[self.layout.index(d)] for d in "HW")
            choice = draw(st.sampled_from(["global", "max", "avg"]))
            if choice == "global" or min(h, w) < 2:
                return self.op("nn.global_avg_pool2d", x, layout=self.layout)
            stride, pad = draw(st.sampled_from([1, 2])), draw(st.sampled_from([0, 1]))
            attrs = dict(pool_size=(2, 2), strides=(stride, stride), padding=(pad,) * 4, layout=self.layout,
                         ceil_mode=draw(st.booleans()))
            if choice == "max":
                return self.op("nn.max_pool2d", x, **attrs)
            return self.op("nn.avg_pool2d", x, count_include_pad=draw(st.booleans()), **attrs)
        if kind == "layout":
            target = "NHWC" if self.layout == "NCHW" else "NCHW"
            y = self.op("nn.layout_transform", x, src_layout=self.layout, dst_layout=target)
            self.layout = target
            return y
        if kind == "shape":
            choice = draw(st.sampled_from(["transpose", "reshape", "expand"]))
            n, a, b_, d = shape_of(x)
            if choice == "transpose":
                return self.op("nn.transpose", x, axes=(0, 1, 3, 2))
            if choice == "reshape":
                return self.op("nn.reshape", x, newshape=(0, a, d, b_))  # keeps C where the layout has it
            squeezed = self.op("nn.expand_dims", x, axis=draw(st.integers(0, 4)))
            return self.op("nn.reshape", squeezed, newshape=(n, a, b_, d))
        return self.op("nn.softmax", x, axis=self.layout.index("C"))

    # Branching steps: the shapes of Inception, DenseNet, ResNet and ShuffleNet, which the opt-level-3
    # passes rewrite and the executor's memory plan lays out (a concatenation's inputs in its slices).

    def branch(self, x):
        """A same-spatial-size feature of `x`: x itself, relu(x + b), a 1x1 or 3x3 conv, or a 3x3 max pool
        (of x or of relu(x + b))."""
        c, axis = self.channels(x), self.layout.index("C")
        choice = self.draw(st.sampled_from(["same", "relu_shift", "conv1", "preact_conv1", "conv3", "max_pool",
                                            "relu_shift_max_pool"]))
        if choice == "same":
            return x
        if choice == "relu_shift_max_pool":
            x, choice = self.op("nn.relu", self.op("nn.add", x, self.const(self._channel_shape(c)))), "max_pool"
        if choice in ("relu_shift", "preact_conv1"):
            x = self.op("nn.relu", self.op("nn.add", x, self.const(self._channel_shape(c))))
            if choice == "relu_shift":
                return x
        if choice == "max_pool":
            return self.op("nn.max_pool2d", x, pool_size=(3, 3), strides=(1, 1), padding=(1,) * 4, layout=self.layout)
        k = 3 if choice == "conv3" else 1
        out = self.draw(st.integers(1, 3))
        kernel_layout = "OIHW" if self.layout == "NCHW" else "HWIO"
        dims = {"O": out, "I": c, "H": k, "W": k}
        weight = self.const(tuple(dims[d] for d in kernel_layout))
        y = self.op("nn.conv2d", x, weight, padding=(k // 2,) * 4, channels=out, kernel_size=(k, k),
                    data_layout=self.layout, kernel_layout=kernel_layout)
        return self.op("nn.relu", self.op("nn.bias_add", y, self.const((out,)), axis=axis)) if self.draw(
            st.booleans()) else y

    def concat(self, x):
        """Inception: 2-3 branches of `x` concatenated along the channels (a branch may repeat)."""
        axis = self.layout.index("C")
        branches = [self.branch(x) for _ in range(self.draw(st.integers(2, 3)))]
        if self.draw(st.integers(0, 2)) == 0:  # SqueezeNet's fire module: every branch ends in bias + ReLU
            branches = [self.op("nn.relu", self.op("nn.bias_add", b, self.const((self.channels(b),)), axis=axis))
                        for b in branches]
        if self.draw(st.integers(0, 3)) == 0:
            branches.append(branches[0])  # one value twice in a concatenation
        return self.op("nn.concatenate", *branches, axis=axis)

    def dense_block(self, x):
        """DenseNet: each layer's new feature concatenated to everything before it; the block's input
        sometimes also read after the block."""
        axis, first = self.layout.index("C"), x
        for _ in range(self.draw(st.integers(1, 3))):
            x = self.op("nn.concatenate", x, self.branch(x), axis=axis)
        if self.draw(st.booleans()):
            x = self.op("nn.concatenate", x, self.op("nn.relu", first), axis=axis)
        return x

    def residual(self, x):
        """ResNet: x + f(x) with f keeping the shape, then a ReLU."""
        c, axis = self.channels(x), self.layout.index("C")
        kernel_layout = "OIHW" if self.layout == "NCHW" else "HWIO"
        k = self.draw(st.sampled_from([1, 3]))
        dims = {"O": c, "I": c, "H": k, "W": k}
        y = self.op("nn.conv2d", x, self.const(tuple(dims[d] for d in kernel_layout)), padding=(k // 2,) * 4,
                    channels=c, kernel_size=(k, k), data_layout=self.layout, kernel_layout=kernel_layout)
        y = self.op("nn.relu", self.op("nn.bias_add", y, self.const((c,)), axis=axis))
        return self.op("nn.relu", self.op("nn.add", x, y))

    def shuffle(self, x):
        """ShuffleNet (NCHW, as ONNX has it): a 2-group 1x1 conv, bias and ReLU, then a channel shuffle."""
        if self.layout != "NCHW":
            return x
        n, c, h, w = shape_of(x)
        if c % 2:
            x = self.op("nn.concatenate", x, x, axis=1)
            c *= 2
        out = 2 * self.draw(st.integers(1, 2))
        y = self.op("nn.conv2d", x, self.const((out, c // 2, 1, 1)), channels=out, kernel_size=(1, 1), groups=2)
        y = self.op("nn.relu", self.op("nn.bias_add", y, self.const((out,)), axis=1))
        y = self.op("nn.reshape", y, newshape=(n, 2, out // 2, h, w))
        y = self.op("nn.transpose", y, axes=(0, 2, 1, 3, 4))
        return self.op("nn.reshape", y, newshape=(n, out, h, w))

    def _channel_shape(self, c):
        return (c, 1, 1) if self.layout == "NCHW" else (c,)

    def build(self):
        x = self.b.input
        for _ in range(self.draw(st.integers(1, 5))):
            x = self.step(x)
        if self.draw(st.booleans()):  # a classifier head
            flat = self.op("nn.batch_flatten", self.op("nn.global_avg_pool2d", x, layout=self.layout))
            units = self.draw(st.integers(1, 4))
            dense = self.op("nn.dense", flat, self.const((units, shape_of(flat)[1])), units=units)
            x = self.op("nn.softmax", self.op("nn.add", dense, self.const((units,))))
        return self.b.finish(x)


    def input_data(self):
        data = self.rng.uniform(-1, 1, self.input_shape).astype("float32")
        data[self.rng.random(self.input_shape) < 0.2] = 0.0  # exact zeros: 0/0, log 0, sqrt -0
        return data


def built(graph) -> tuple:
    """The drawn graph's verified module and a random input for it (drawn after the graph)."""
    module = graph.build()
    module.verify()
    return module, {"data": graph.input_data()}


@st.composite
def graphs(draw):
    return built(Graph(draw))


def assert_close(actual, expected, what):
    scale = float(np.nanmax(np.abs(expected))) if expected.size and np.isfinite(expected).any() else 1.0
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5 * max(scale, 1.0), err_msg=what)


PASSES = {
    "InferType": InferType,
    "FoldConstant": FoldConstant,
    "SimplifyInference": SimplifyInference,
    "FoldScaleAxis": FoldScaleAxis,
    "CanonicalizeOps": CanonicalizeOps,
    "DeadCodeElimination": DeadCodeElimination,
    "ForwardFoldScaleAxis": ForwardFoldScaleAxis,
    "BackwardFoldScaleAxis": BackwardFoldScaleAxis,
    "ConcatFirst": ConcatFirst,
    "MaxPoolFirst": MaxPoolFirst,
    "PoolAfterPointwiseConv": PoolAfterPointwiseConv,
    "ShuffleIntoConv": ShuffleIntoConv,
    "PreActivationShift": PreActivationShift,
    "ScaleIntoConvWeight": ScaleIntoConvWeight,
    "WinogradConv": WinogradConv,
    "WinogradConv(tile=4)": lambda: WinogradConv(tile=4),
    "WinogradConv(tile=4, min_tiles=4)": lambda: WinogradConv(tile=4, min_tiles=4),
    "ConvertLayout(NHWC)": lambda: ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}),
    "ConvertLayout(NCHW)": lambda: ConvertLayout({"nn.conv2d": ["NCHW", "OIHW"]}),
    "Build": Build,  # graph passes, lowering and kernel formation: the built program runs as its kernels say
    "FormKernels": FormKernels,  # on nn: nothing to form
    "ChooseConvAlgorithm": ChooseConvAlgorithm,
    "SelectToMinMax": SelectToMinMax,  # on nn: no bodies
    "MatmulWeightsKMajor": MatmulWeightsKMajor,  # on nn: no matmuls
    "DropUnitDims": DropUnitDims,  # on nn: no generics
    "ExpandThroughCollapseShape": ExpandThroughCollapseShape,  # on nn: no generics
    "SplitElementwiseBodies": SplitElementwiseBodies,  # on nn: no bodies
    "CanonicalizeInits": CanonicalizeInits,  # on nn: no inits
    "ChannelsLast": ChannelsLast,  # on nn: no linalg
    "MaxPoolBeforeMonotonic": MaxPoolBeforeMonotonic,  # on nn: no linalg
    "WholeWindowAsReduction": WholeWindowAsReduction,  # on nn: no linalg
    "SplitKernels": SplitKernels,  # on nn: no kernels to split
    "PlanMemory": PlanMemory,  # on nn: nothing to place
    "kernels(lowered)": lambda: Sequential(
        [lowering_pipeline("linalg"), CanonicalizeInits(), ChannelsLast(), MatmulWeightsKMajor(min_rows=1),
         SelectToMinMax(), MaxPoolBeforeMonotonic(),
         WholeWindowAsReduction(), DropUnitDims(), ExpandThroughCollapseShape(), SplitElementwiseBodies(), FormKernels(),
         ChooseConvAlgorithm(winograd=False),
         SplitKernels(threads=2, min_points=0), PlanMemory()],
        name="kernels"),
    "TileLoops": TileLoops,  # on nn: no loops to tile
    "tile-loops(lowered)": lambda: Sequential([lowering_pipeline("loops"), TileLoops(tile=2)], name="tiled-loops"),
    "SinkReductionLoops": SinkReductionLoops,  # on nn: no loops
    "UnrollJamLoops": UnrollJamLoops,  # on nn: no loops
    "FuseMultiplyAdd": FuseMultiplyAdd,  # on nn: no scalar bodies
    "PlanBuffers": PlanBuffers,  # on nn: no buffers
    "loop-passes(lowered)": lambda: Sequential(
        [lowering_pipeline("loops"), TileLoops(tile=2), SinkReductionLoops(), UnrollJamLoops(factor=2),
         FuseMultiplyAdd(), PlanBuffers()],
        name="jammed-loops"),
}


@settings(settings.get_profile(PROFILE))
@given(graphs())
def test_every_pass_preserves_outputs(graph):
    module, inputs = graph
    expected = run(module, inputs)
    with PassContext(opt_level=3):
        assert_every_pass_preserves(module, inputs, expected)
        # And the opt-level-3 pipeline as a whole, as benchmarks/execution.py runs it.
        assert_close(run(opt_level_3(module), inputs), expected, "opt-level-3 pipeline")


def assert_every_pass_preserves(module, inputs, expected) -> None:
    """Each of `PASSES` on a copy of `module` gives a valid module that computes `expected`."""
    for name, make in PASSES.items():
        transformed = make()(module.clone())
        transformed.verify()
        assert_close(run(transformed, inputs), expected, name)


OPT_LEVEL_3 = (SimplifyInference, FoldScaleAxis, FoldConstant, ConcatFirst, MaxPoolFirst, PoolAfterPointwiseConv, ShuffleIntoConv,
               PreActivationShift, PASSES["ConvertLayout(NHWC)"], ScaleIntoConvWeight, FoldConstant)


def opt_level_3(module):
    """`module` through benchmarks/execution.py's opt-level-3 + NHWC pipeline (run inside a PassContext)."""
    optimised = module.clone()
    for make in OPT_LEVEL_3:
        optimised = make()(optimised)
    return optimised


def test_every_graph_pass_is_checked():
    """A graph pass (registered by a module of xrelay.passes) missing from PASSES would go unchecked."""
    checked = {make.__name__ for make in PASSES.values() if isinstance(make, type)} | {"ConvertLayout"}
    load_all_passes()
    graph_passes = {cls.__name__ for cls in XRELAY_PASSES.values() if cls.__module__.startswith("xrelay.passes.")}
    assert graph_passes <= checked, f"add to PASSES: {sorted(graph_passes - checked)}"


@settings(settings.get_profile(PROFILE))
@given(graphs())
def test_levels_agree(graph):
    module, inputs = graph
    expected = run(module, inputs)
    for level in ("linalg", "memref", "loops"):
        lowered = lower(module.clone(), to=level)
        lowered.verify()
        assert_close(run(lowered, inputs), expected, f"{level} level")


class IntegerGraph(RandomGraph):
    """A random int32 graph of the ops defined on integers (Relay's integer semantics: division
    truncates toward zero), so the levels must agree on exact values."""

    def __init__(self, draw):
        self.draw = draw
        shape = (1, draw(st.integers(1, 3)), draw(st.integers(2, 4)), draw(st.integers(2, 4)))
        super().__init__(shape, np.random.default_rng(draw(st.integers(0, 2**32 - 1))), dtype="int32")

    def const(self, shape, nonzero=False):
        value = self.rng.integers(-4, 5, size=shape).astype("int32")
        if nonzero:
            value[value == 0] = 3
        return self.b.op(nn.ConstantOp, value).results[0]

    def build(self):
        draw, x = self.draw, self.b.input
        for _ in range(draw(st.integers(1, 5))):
            shape = shape_of(x)
            kind = draw(st.sampled_from(["nn.relu", "nn.negative", "nn.abs", "nn.add", "nn.subtract", "nn.multiply",
                                         "nn.divide", "nn.maximum", "nn.minimum", "nn.max_pool2d", "nn.transpose",
                                         "nn.sum", "nn.max", "nn.expand_dims"]))
            if kind in ("nn.relu", "nn.negative", "nn.abs"):
                x = self.op(kind, x)
            elif kind in ("nn.add", "nn.subtract", "nn.multiply", "nn.divide", "nn.maximum", "nn.minimum"):
                other = self.const(draw(st.sampled_from([(), (shape[-1],), shape[-2:], shape])), kind == "nn.divide")
                x = self.op(kind, x, other) if kind == "nn.divide" or draw(st.booleans()) else self.op(kind, other, x)
            elif kind == "nn.max_pool2d" and min(shape[2:]) >= 2:
                x = self.op(kind, x, pool_size=(2, 2), strides=(1, 1), padding=(draw(st.sampled_from([0, 1])),) * 4)
            elif kind == "nn.transpose":
                x = self.op(kind, x, axes=(0, 1, 3, 2))
            elif kind in ("nn.sum", "nn.max"):
                x = self.op(kind, x, axis=(draw(st.sampled_from([2, 3])),), keepdims=True)
            elif kind == "nn.expand_dims":
                x = self.op("nn.reshape", self.op(kind, x, axis=draw(st.integers(0, 4))), newshape=shape)
        return self.b.finish(x)

    def input_data(self):
        return self.rng.integers(-9, 10, self.input_shape).astype("int32")


@st.composite
def integer_graphs(draw):
    return built(IntegerGraph(draw))


@settings(settings.get_profile(PROFILE))
@given(integer_graphs())
def test_integer_graphs_exact_at_every_level_and_through_passes(graph):
    module, inputs = graph
    expected = run(module, inputs)
    assert expected.dtype == np.int32
    with PassContext(opt_level=3):
        for name in ("FoldConstant", "CanonicalizeOps", "DeadCodeElimination", "ConvertLayout(NHWC)"):
            np.testing.assert_array_equal(run(PASSES[name]()(module.clone()), inputs), expected, err_msg=name)
    for level in ("linalg", "memref", "loops"):
        np.testing.assert_array_equal(run(lower(module.clone(), to=level), inputs), expected, err_msg=level)


class BranchingGraph(Graph):
    """A `Graph` whose first step is a concatenation, a DenseNet block, a residual unit or a channel shuffle."""

    def build(self):
        x = getattr(self, self.draw(st.sampled_from(["concat", "dense_block", "residual", "shuffle"])))(self.b.input)
        for _ in range(self.draw(st.integers(0, 3))):
            x = self.step(x)
        return self.b.finish(x)


@st.composite
def branching_graphs(draw):
    graph = BranchingGraph(draw)
    module, inputs = built(graph)
    return module, inputs, {"data": graph.input_data()}


@settings(settings.get_profile(PROFILE))
@given(branching_graphs())
def test_branching_graphs_through_passes_and_planned_memory(graph):
    """Through every graph pass, and as the benchmark runs them (opt level 3, NHWC, lowered to linalg and
    compiled once into a memory-planned program run twice on different inputs: the second run must not
    see anything the first left in the planned buffers or the views kept between runs)."""
    module, inputs, second = graph
    with PassContext(opt_level=3):
        assert_every_pass_preserves(module, inputs, run(module, inputs))
        optimised = opt_level_3(module)
    for what, variant in (("as built", module), ("opt-level-3 + NHWC", optimised)):
        program = compile_linalg(lower(variant.clone(), to="linalg"))
        for data in (inputs, second, inputs):
            reference = run(module, data)
            reference = reference[0] if isinstance(reference, list) else reference
            assert_close(program(data["data"])[0], reference, f"{what}, planned linalg program")
