"""Upstream's named contractions in xrelay's lowering and executors: `linalg.matmul` with
`indexing_maps` (nn.dense's x * w^T) and `linalg.batch_matmul` (dialects/upstream_contractions.py)
parse from upstream's text, run at the linalg level against numpy, and take the executor's BLAS
contraction path as the generic they replaced did."""

from __future__ import annotations

import numpy as np
from op_levels import single_op_module

from xrelay.dialects import make_context
from xrelay.lowering import lower
from xrelay.runtime import run
from xrelay.runtime.kernels.linalg_structured import contraction_pair

UPSTREAM = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>, %x: tensor<5x3x2xf32>, %y: tensor<5x3x4xf32>)
    -> (tensor<2x4xf32>, tensor<5x2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %0 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %b : tensor<2x3xf32>, tensor<4x3xf32>) outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
  %f = tensor.empty() : tensor<5x2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%f : tensor<5x2x4xf32>) -> tensor<5x2x4xf32>
  %1 = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%x, %y : tensor<5x3x2xf32>, tensor<5x3x4xf32>) outs(%z : tensor<5x2x4xf32>) -> tensor<5x2x4xf32>
  func.return %0, %1 : tensor<2x4xf32>, tensor<5x2x4xf32>
}
"""


def test_upstream_contractions_with_indexing_maps_run_as_upstream_defines_them():
    from xdsl.parser import Parser

    module = Parser(make_context(), UPSTREAM).parse_module()
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)
    x, y = rng.standard_normal((5, 3, 2)).astype(np.float32), rng.standard_normal((5, 3, 4)).astype(np.float32)
    got_mm, got_bmm = run(module, {"a": a, "b": b, "x": x, "y": y})
    np.testing.assert_allclose(got_mm, a @ b.T, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_bmm, np.einsum("bkm,bkn->bmn", x, y), rtol=1e-5, atol=1e-6)
    assert "indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>" in str(module)


def test_dense_and_batch_matmul_lower_to_named_ops_on_the_blas_path():
    for op_name, shapes in (("nn.dense", [(2, 6), (5, 6)]), ("nn.batch_matmul", [(3, 2, 6), (3, 5, 6)])):
        lowered = lower(single_op_module(op_name, shapes, {}), to="linalg")
        (named,) = [op for op in lowered.walk() if op.name in ("linalg.matmul", "linalg.batch_matmul")]
        assert not any(op.name == "linalg.generic" for op in lowered.walk())
        assert contraction_pair(named, 0) == (0, 1)


def test_general_contraction_with_and_without_einsums_path_finder(monkeypatch):
    """`contract` (the general contraction path) gives x @ w on einsum's own loop (at most
    MAX_DIRECT_EINSUM_POINTS loop points) and through its BLAS path finder (above)."""
    from xdsl.ir.affine import AffineMap

    from xrelay.runtime.kernels import linalg_structured

    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((1, 96)).astype(np.float32), rng.standard_normal((96, 4)).astype(np.float32)
    # loops (m, n, k): x (m, k), w (k, n), out (m, n); operands as loop-space views
    maps = [AffineMap.from_callable(f) for f in (lambda m, n, k: (m, k), lambda m, n, k: (k, n), lambda m, n, k: (m, n))]
    for limit in (0, 1 << 16):
        monkeypatch.setattr(linalg_structured, "MAX_DIRECT_EINSUM_POINTS", limit)
        product = linalg_structured.contract(x[:, None, :], w.T[None, :, :], *maps, (1, 4, 96))
        np.testing.assert_allclose(product.reshape(1, 4), x @ w, rtol=1e-5, atol=1e-5)
