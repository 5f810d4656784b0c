"""`whole-window-as-reduction` on upstream's global pools (torch-mlir's `pooling_nchw_sum` over the whole
image, then a division; a max pool as `channels-last` writes it, batch 2) and on windows that stay
(part of the image, dilated): the rewritten and built modules equal numpy written here, the global
pools become reductions over bare loops, and the built program runs them as reduction kernels."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.linalg import ops as linalg
from xdsl.parser import Parser

import xrelay
from xrelay.dialects import make_context
from xrelay.dialects.kernel import DispatchOp
from xrelay.passes.kernels.whole_window_as_reduction import WholeWindowAsReduction
from xrelay.runtime import run

MODEL = """
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @main(%x: tensor<1x2x3x5xf32>, %y: tensor<2x4x4x3xf32>, %z: tensor<1x2x5x5xf32>)
    -> (tensor<1x2x1x1xf32>, tensor<2x1x1x3xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %count = arith.constant 15.0 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %window = tensor.empty() : tensor<3x5xf32>
  %sum = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %window : tensor<1x2x3x5xf32>, tensor<3x5xf32>) outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %de = tensor.empty() : tensor<1x2x1x1xf32>
  %mean = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sum : tensor<1x2x1x1xf32>) outs(%de : tensor<1x2x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %q = arith.divf %in, %count : f32
    linalg.yield %q : f32
  } -> tensor<1x2x1x1xf32>
  %me = tensor.empty() : tensor<2x1x1x3xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%me : tensor<2x1x1x3xf32>) -> tensor<2x1x1x3xf32>
  %mwindow = tensor.empty() : tensor<4x4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2 * 2 + d4, d3 * 2 + d5, d1)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d1)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%y, %mwindow : tensor<2x4x4x3xf32>, tensor<4x4xf32>) outs(%minit : tensor<2x1x1x3xf32>) {
  ^bb0(%in: f32, %w: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  } -> tensor<2x1x1x3xf32>
  %pe = tensor.empty() : tensor<1x2x1x1xf32>
  %pinit = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %w2 = tensor.empty() : tensor<2x2xf32>
  %part = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%x, %w2 : tensor<1x2x3x5xf32>, tensor<2x2xf32>) outs(%pinit : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %w3 = tensor.empty() : tensor<3x3xf32>
  %dinit = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %dilated = linalg.pooling_nchw_sum {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%z, %w3 : tensor<1x2x5x5xf32>, tensor<3x3xf32>) outs(%dinit : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  func.return %mean, %max, %part, %dilated : tensor<1x2x1x1xf32>, tensor<2x1x1x3xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>
}
"""


def reference(x, y, z) -> list[np.ndarray]:
    """MODEL in numpy (float64)."""
    x, y, z = (a.astype(np.float64) for a in (x, y, z))
    return [x.mean(axis=(2, 3), keepdims=True), y.max(axis=(1, 2), keepdims=True),
            x[:, :, :2, :2].sum(axis=(2, 3), keepdims=True), z[:, :, ::2, ::2].sum(axis=(2, 3), keepdims=True)]


def inputs(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for shape in ((1, 2, 3, 5), (2, 4, 4, 3), (1, 2, 5, 5))]


def parse():
    return Parser(make_context(), MODEL).parse_module()


def structured(module) -> dict:
    return {op.results[0].name_hint: op for op in module.walk()
            if op.name.startswith("linalg.") and op.results and op.results[0].name_hint}


def test_whole_windows_become_reductions_over_bare_loops():
    module = WholeWindowAsReduction()(parse())
    module.verify()
    ops = structured(module)
    for name in ("sum", "max"):
        op = ops[name]
        assert isinstance(op, linalg.GenericOp) and len(op.inputs) == 1
        assert [str(e) for e in op.get_indexing_maps().data[0].data.results] == ["d0", "d1", "d2", "d3"]
    assert [str(it.data) for it in ops["sum"].get_iterator_types()] == ["parallel", "parallel", "reduction", "reduction"]
    assert [str(it.data) for it in ops["max"].get_iterator_types()] == ["parallel", "reduction", "reduction", "parallel"]
    assert ops["part"].name == ops["dilated"].name == "linalg.pooling_nchw_sum"


@pytest.mark.parametrize("seed", [0, 1])
def test_rewritten_and_built_modules_equal_numpy(seed):
    arrays = inputs(seed)
    expected = reference(*arrays)
    for module in (parse(), WholeWindowAsReduction()(parse())):
        for got, want in zip(run(module, arrays), expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    executable = xrelay.build(parse())
    for _ in range(2):  # planned buffers are reused from run to run
        for got, want in zip(executable(*arrays), expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    roots = sorted(op.root.data for op in executable.module.walk() if isinstance(op, DispatchOp))
    assert roots.count("reduce") == 2 and roots.count("pool") == 2, roots
