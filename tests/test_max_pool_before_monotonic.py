"""`max-pool-before-monotonic` on upstream's forms (torch-mlir's 1x1 convolution from a broadcast bias,
its ReLU as select(cmpf ugt), a -inf pad and a 3x3/2 max pool) and on a channels-last min pool: the
rewritten and the built modules equal numpy written here, the ops in front of the pool run after it,
and the built program runs the convolution alone and the bias and ReLU in the pool's kernel, as
xrelay's own lowering does after `max-pool-first`."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects import tensor
from xdsl.dialects.linalg import ops as linalg
from xdsl.parser import Parser

import xrelay
from xrelay import transform
from xrelay.dialects import make_context
from xrelay.dialects.kernel import DispatchOp
from xrelay.passes.kernels.canonicalize_inits import CanonicalizeInits
from xrelay.passes.kernels.max_pool_before_monotonic import MaxPoolBeforeMonotonic
from xrelay.passes.kernels.select_to_minmax import SelectToMinMax
from xrelay.runtime import run

RNG = np.random.default_rng(29)
W = RNG.standard_normal((4, 3)).astype(np.float32)
B = RNG.standard_normal(4).astype(np.float32)
SCALE = np.array([0.5, 0.0, 2.0], np.float32)


def dense(array: np.ndarray) -> str:
    return "dense<" + np.array2string(array, separator=", ", threshold=10**9, floatmode="unique").replace("\n", "") + ">"


def t(*shape: int) -> str:
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


PARALLEL4 = '["parallel", "parallel", "parallel", "parallel"]'
# Upstream's 1x1 convolution + bias + ReLU + 3x3/2 max pool padded by 1 (NCHW named ops), and a
# channels-last 2x2/2 min pool of exp(scale * x), a per-channel scale >= 0 (a generic pool, no pad).
MODEL = f"""
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#last = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @main(%x: {t(1, 3, 7, 6)}, %y: {t(1, 4, 6, 3)}) -> ({t(1, 4, 4, 3)}, {t(1, 2, 3, 3)}) {{
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %pinf = arith.constant 0x7F800000 : f32
  %w = arith.constant {dense(W.reshape(4, 3, 1, 1))} : {t(4, 3, 1, 1)}
  %b = arith.constant {dense(B)} : {t(4)}
  %scale = arith.constant {dense(SCALE)} : {t(3)}
  %e = tensor.empty() : {t(1, 4, 7, 6)}
  %bc = linalg.broadcast ins(%b : {t(4)}) outs(%e : {t(1, 4, 7, 6)}) dimensions = [0, 2, 3]
  %c = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}} ins(%x, %w : {t(1, 3, 7, 6)}, {t(4, 3, 1, 1)}) outs(%bc : {t(1, 4, 7, 6)}) -> {t(1, 4, 7, 6)}
  %r = linalg.generic {{indexing_maps = [#id, #id], iterator_types = {PARALLEL4}}} ins(%c : {t(1, 4, 7, 6)}) outs(%e : {t(1, 4, 7, 6)}) {{
  ^bb0(%in: f32, %out: f32):
    %p = arith.cmpf ugt, %in, %zero : f32
    %s = arith.select %p, %in, %zero : f32
    linalg.yield %s : f32
  }} -> {t(1, 4, 7, 6)}
  %padded = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {{
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %ninf : f32
  }} : {t(1, 4, 7, 6)} to {t(1, 4, 9, 8)}
  %pe = tensor.empty() : {t(1, 4, 4, 3)}
  %init = linalg.fill ins(%ninf : f32) outs(%pe : {t(1, 4, 4, 3)}) -> {t(1, 4, 4, 3)}
  %window = tensor.empty() : {t(3, 3)}
  %pool = linalg.pooling_nchw_max {{dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}} ins(%padded, %window : {t(1, 4, 9, 8)}, {t(3, 3)}) outs(%init : {t(1, 4, 4, 3)}) -> {t(1, 4, 4, 3)}
  %ye = tensor.empty() : {t(1, 4, 6, 3)}
  %scaled = linalg.generic {{indexing_maps = [#id, #last, #id], iterator_types = {PARALLEL4}}} ins(%y, %scale : {t(1, 4, 6, 3)}, {t(3)}) outs(%ye : {t(1, 4, 6, 3)}) {{
  ^bb0(%in: f32, %k: f32, %out: f32):
    %v = arith.mulf %in, %k : f32
    %ex = math.exp %v : f32
    linalg.yield %ex : f32
  }} -> {t(1, 4, 6, 3)}
  %me = tensor.empty() : {t(1, 2, 3, 3)}
  %minit = linalg.fill ins(%pinf : f32) outs(%me : {t(1, 2, 3, 3)}) -> {t(1, 2, 3, 3)}
  %mwindow = tensor.empty() : {t(2, 2)}
  %minpool = linalg.generic {{indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2 * 2 + d4, d3 * 2 + d5, d1)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d1)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}} ins(%scaled, %mwindow : {t(1, 4, 6, 3)}, {t(2, 2)}) outs(%minit : {t(1, 2, 3, 3)}) {{
  ^bb0(%in: f32, %unused: f32, %acc: f32):
    %m = arith.minimumf %acc, %in : f32
    linalg.yield %m : f32
  }} -> {t(1, 2, 3, 3)}
  func.return %pool, %minpool : {t(1, 4, 4, 3)}, {t(1, 2, 3, 3)}
}}
"""


def reference(x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """MODEL in numpy (float64), in the order it is written: bias and ReLU before the max pool, scale
    and exp before the min pool."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    conv = np.einsum("nchw,fc->nfhw", x, W) + B[None, :, None, None]
    padded = np.pad(np.maximum(conv, 0), ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    pooled = sliding_window_view(padded, (3, 3), axis=(2, 3))[:, :, ::2, ::2].max(axis=(4, 5))
    scaled = np.exp(y * SCALE)
    min_pooled = scaled.reshape(1, 2, 2, 3, 2, 3).min(axis=(2, 4))
    return [pooled, min_pooled]


def parse():
    return Parser(make_context(), MODEL).parse_module()


def inputs(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((1, 3, 7, 6)).astype(np.float32), rng.standard_normal((1, 4, 6, 3)).astype(np.float32)]


def rewritten():
    with transform.PassContext(opt_level=3):
        return MaxPoolBeforeMonotonic()(SelectToMinMax()(CanonicalizeInits()(parse())))


def test_ops_move_behind_the_pools():
    module = rewritten()
    module.verify()
    ops = [op for op in module.walk() if op.parent_op() is not None and op.parent_op().name == "func.func"]
    names = [op.name for op in ops if not op.name.startswith(("arith.constant", "tensor.empty"))]
    assert names == ["linalg.fill", "linalg.conv_2d_nchw_fchw", "tensor.pad", "linalg.fill", "linalg.pooling_nchw_max",
                     "linalg.generic", "linalg.generic", "linalg.fill", "linalg.generic", "linalg.generic", "func.return"]
    pad = next(op for op in ops if isinstance(op, tensor.PadOp))
    assert isinstance(pad.source.owner, linalg.Conv2DNchwFchwOp)
    bias, relu, min_pool, exp = (op for op in ops if isinstance(op, linalg.GenericOp))
    assert bias.inputs[0].owner.name == "linalg.pooling_nchw_max" and relu.inputs[0] is bias.results[0]
    assert exp.inputs[0] is min_pool.results[0] and exp.results[0].type.get_shape() == (1, 2, 3, 3)
    assert min_pool.inputs[0] is module.body.block.first_op.body.block.args[1]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rewritten_and_built_modules_equal_numpy(seed):
    x, y = inputs(seed)
    expected = reference(x, y)
    for module in (parse(), rewritten()):
        for got, want in zip(run(module, [x, y]), expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(parse())
    for got, want in zip(executable(x, y), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_built_convolution_runs_alone_and_the_pool_kernel_takes_bias_and_relu():
    with transform.PassContext(opt_level=3):
        built = xrelay.build(parse()).module
    roots = {}
    for dispatch in built.walk():
        if isinstance(dispatch, DispatchOp):
            bodies = [op for op in dispatch.body.block.ops if isinstance(op, linalg.GenericOp)]
            roots.setdefault(dispatch.root.data, []).append(
                sorted({inner.name for op in bodies for inner in op.body.block.ops} - {"linalg.yield", "arith.constant"}))
    conv_bodies, pool_bodies = roots["conv"], roots["pool"]
    assert conv_bodies == [["arith.addf", "arith.mulf"]]  # the convolution's own generic only
    assert ["arith.addf", "arith.maximumf"] in pool_bodies
