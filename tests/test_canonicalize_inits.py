"""`canonicalize-inits` on upstream's forms (torch-mlir's convolution, depthwise convolution and max pool
accumulating into a broadcast bias, one tensor.empty shared by several ops): the module it rewrites and
the built one equal numpy written here on random inputs, and the built program runs the kernels xrelay's
own lowering reaches (a convolution step with its epilogue, the depthwise step, planned memory)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects.linalg import ops as linalg
from xdsl.parser import Parser

import xrelay
from xrelay import transform
from xrelay.dialects import make_context
from xrelay.dialects.kernel import ARENA_BYTES
from xrelay.passes.kernels.canonicalize_inits import CanonicalizeInits
from xrelay.runtime import run
from xrelay.runtime.kernels.conv_epilogue import ConvStep

RNG = np.random.default_rng(29)
W = RNG.standard_normal((6, 3, 3, 3)).astype(np.float32)
B = RNG.standard_normal(6).astype(np.float32)
WD = RNG.standard_normal((6, 3, 3)).astype(np.float32)
BD = RNG.standard_normal(6).astype(np.float32)
FLOOR = RNG.standard_normal(6).astype(np.float32)


def dense(array: np.ndarray) -> str:
    return "dense<" + np.array2string(array, separator=", ", threshold=10**9, floatmode="unique").replace("\n", "") + ">"


def t(*shape: int) -> str:
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


# conv 3x3 + bias, ReLU (both results' empty shared, as upstream's CSE leaves it), depthwise 3x3 + bias
# (padded by the caller's tensor.pad), max pool 2x2/2 from a broadcast floor: upstream's op forms.
MODEL = f"""
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%x: {t(1, 3, 10, 12)}) -> {t(1, 6, 4, 5)} {{
  %zero = arith.constant 0.0 : f32
  %w = arith.constant {dense(W)} : {t(*W.shape)}
  %b = arith.constant {dense(B)} : {t(6)}
  %wd = arith.constant {dense(WD)} : {t(*WD.shape)}
  %bd = arith.constant {dense(BD)} : {t(6)}
  %floor = arith.constant {dense(FLOOR)} : {t(6)}
  %e = tensor.empty() : {t(1, 6, 8, 10)}
  %bc = linalg.broadcast ins(%b : {t(6)}) outs(%e : {t(1, 6, 8, 10)}) dimensions = [0, 2, 3]
  %c = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}} ins(%x, %w : {t(1, 3, 10, 12)}, {t(*W.shape)}) outs(%bc : {t(1, 6, 8, 10)}) -> {t(1, 6, 8, 10)}
  %r = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%c : {t(1, 6, 8, 10)}) outs(%e : {t(1, 6, 8, 10)}) {{
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  }} -> {t(1, 6, 8, 10)}
  %p = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  }} : {t(1, 6, 8, 10)} to {t(1, 6, 10, 12)}
  %bd_b = linalg.broadcast ins(%bd : {t(6)}) outs(%e : {t(1, 6, 8, 10)}) dimensions = [0, 2, 3]
  %d = linalg.depthwise_conv_2d_nchw_chw {{dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}} ins(%p, %wd : {t(1, 6, 10, 12)}, {t(*WD.shape)}) outs(%bd_b : {t(1, 6, 8, 10)}) -> {t(1, 6, 8, 10)}
  %pe = tensor.empty() : {t(1, 6, 4, 5)}
  %floor_b = linalg.broadcast ins(%floor : {t(6)}) outs(%pe : {t(1, 6, 4, 5)}) dimensions = [0, 2, 3]
  %window = tensor.empty() : {t(2, 2)}
  %pool = linalg.pooling_nchw_max {{dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}} ins(%d, %window : {t(1, 6, 8, 10)}, {t(2, 2)}) outs(%floor_b : {t(1, 6, 4, 5)}) -> {t(1, 6, 4, 5)}
  func.return %pool : {t(1, 6, 4, 5)}
}}
"""


def reference(x: np.ndarray) -> np.ndarray:
    """MODEL in numpy (float64)."""
    x = x.astype(np.float64)
    conv = np.einsum("nchwij,fcij->nfhw", sliding_window_view(x, (3, 3), axis=(2, 3)), W) + B[None, :, None, None]
    padded = np.pad(np.maximum(conv, 0), ((0, 0), (0, 0), (1, 1), (1, 1)))
    depthwise = np.einsum("nchwij,cij->nchw", sliding_window_view(padded, (3, 3), axis=(2, 3)), WD)
    depthwise += BD[None, :, None, None]
    pooled = depthwise.reshape(1, 6, 4, 2, 5, 2).max(axis=(3, 5))
    return np.maximum(pooled, FLOOR[None, :, None, None])


def parse():
    return Parser(make_context(), MODEL).parse_module()


@pytest.mark.parametrize("seed", [0, 1])
def test_rewritten_module_equals_numpy(seed):
    x = np.random.default_rng(seed).standard_normal((1, 3, 10, 12)).astype(np.float32)
    expected = reference(x)
    original = parse()
    rewritten = CanonicalizeInits()(parse())
    rewritten.verify()
    assert not any(isinstance(op, linalg.BroadcastOp) for op in rewritten.walk())
    for module in (original, rewritten):
        np.testing.assert_allclose(run(module, [x]), expected, rtol=1e-5, atol=1e-5)


def test_built_module_reaches_the_kernels_of_xrelays_own_lowering():
    x = RNG.standard_normal((1, 3, 10, 12)).astype(np.float32)
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(parse())
    program = executable.program
    assert ARENA_BYTES in program.func.attributes  # planned: no untracked broadcast left
    convs = [step for step in program.steps if isinstance(step, ConvStep)]
    assert [step.geometry.depthwise for step in convs] == [False, True]  # upstream's (C, KH, KW) weight too
    assert convs[0].tail is not None and convs[0].pad is not None
    for _ in range(2):  # a planned program's buffers are reused from run to run
        np.testing.assert_allclose(executable(x), reference(x), rtol=1e-5, atol=1e-5)
