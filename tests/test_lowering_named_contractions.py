"""Upstream's named contractions in xrelay's lowering and executors: `linalg.matmul` with
`indexing_maps` (nn.dense's x * w^T) and `linalg.batch_matmul` (dialects/upstream_contractions.py)
parse from upstream's text, run at the linalg level against numpy, and take the executor's BLAS
contraction path as the generic they replaced did."""

from __future__ import annotations

import numpy as np
import pytest
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


@pytest.mark.parametrize("dtype, element", [(np.float32, "f32"), (np.int32, "i32")])
def test_contractions_no_matmul_plan_takes_sum_their_product(dtype, element):
    """out[i, j] += a[i, k] * b[i, m] (k and m each read by one operand only: no batched matmul) runs as
    the product summed over the loop space; an integer matmul runs planned, wrapping as arith does."""
    from xdsl.parser import Parser

    from xrelay.runtime.executor.linalg_exec import run_linalg

    add, mul = ("arith.addf", "arith.mulf") if element == "f32" else ("arith.addi", "arith.muli")
    text = f"""
    func.func @main(%a: tensor<3x4x{element}>, %b: tensor<3x5x{element}>, %w: tensor<4x2x{element}>,
                    %o: tensor<3x2x{element}>, %p: tensor<3x2x{element}>) -> (tensor<3x2x{element}>, tensor<3x2x{element}>) {{
      %r = linalg.generic {{indexing_maps = [affine_map<(i, j, k, m) -> (i, k)>, affine_map<(i, j, k, m) -> (i, m)>,
                                            affine_map<(i, j, k, m) -> (i, j)>],
                           iterator_types = ["parallel", "parallel", "reduction", "reduction"]}}
          ins(%a, %b : tensor<3x4x{element}>, tensor<3x5x{element}>) outs(%o : tensor<3x2x{element}>) {{
      ^bb0(%x: {element}, %y: {element}, %acc: {element}):
        %t = {mul} %x, %y : {element}
        %s = {add} %acc, %t : {element}
        linalg.yield %s : {element}
      }} -> tensor<3x2x{element}>
      %q = linalg.matmul ins(%a, %w : tensor<3x4x{element}>, tensor<4x2x{element}>)
                         outs(%p : tensor<3x2x{element}>) -> tensor<3x2x{element}>
      func.return %r, %q : tensor<3x2x{element}>, tensor<3x2x{element}>
    }}
    """
    rng = np.random.default_rng(8)
    a, b, w, o, p = (rng.integers(-9, 9, shape).astype(dtype) for shape in ((3, 4), (3, 5), (4, 2), (3, 2), (3, 2)))
    if dtype == np.int32:
        a[0, 0] = w[0, 0] = 1 << 20  # (1 << 40) wraps to 0 in 32 bits
    got_r, got_q = run_linalg(Parser(make_context(), text).parse_module(), {"a": a, "b": b, "w": w, "o": o, "p": p})
    wide = [x.astype(np.int64 if dtype == np.int32 else np.float64) for x in (a, b, w, o, p)]
    want_r = wide[3] + (wide[0].sum(axis=1) * wide[1].sum(axis=1))[:, None]
    want_q = wide[4] + wide[0] @ wide[2]
    np.testing.assert_allclose(got_r, want_r.astype(dtype), rtol=1e-5)
    np.testing.assert_allclose(got_q, want_q.astype(dtype), rtol=1e-5)  # (int32: wrapped, as arith.muli/addi)
