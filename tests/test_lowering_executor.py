"""The vectorised linalg executor on hand-written linalg IR, against numpy written here."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.lowering import LinalgToLoops, NNBufferize
from xrelay.runtime.linalg_exec import ExecutionError, run_linalg
from xrelay.runtime.loops_exec import run_loops


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def run_all_levels(text: str, inputs: dict) -> list[list[np.ndarray]]:
    """Outputs at the tensor level, after nn-bufferize, and after linalg-to-loops."""
    module = parse(text)
    memref = NNBufferize()(module)
    return [run_linalg(module, inputs), run_linalg(memref, inputs), run_loops(LinalgToLoops()(memref), inputs)]


def test_zero_init_shared_with_another_user_is_not_skipped():
    text = """
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<2x2xf32>
      %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
      %m = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>,
          affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%a, %b : tensor<2x3xf32>, tensor<3x2xf32>) outs(%f : tensor<2x2xf32>) {
      ^bb0(%x: f32, %y: f32, %acc: f32):
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32
      } -> tensor<2x2xf32>
      func.return %m, %f : tensor<2x2xf32>, tensor<2x2xf32>
    }
    """
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(6, dtype=np.float32).reshape(3, 2) - 2
    for product, zeros in run_all_levels(text, {"a": a, "b": b}):
        np.testing.assert_allclose(product, a @ b)
        np.testing.assert_array_equal(zeros, np.zeros((2, 2)))


def test_nonzero_init_accumulates():
    text = """
    func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<f32> {
      %one = arith.constant 1.5 : f32
      %e = tensor.empty() : tensor<f32>
      %f = linalg.fill ins(%one : f32) outs(%e : tensor<f32>) -> tensor<f32>
      %d = linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> (k)>, affine_map<(k) -> ()>],
          iterator_types = ["reduction"]} ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%f : tensor<f32>) {
      ^bb0(%x: f32, %y: f32, %acc: f32):
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %p, %acc : f32
        linalg.yield %s : f32
      } -> tensor<f32>
      func.return %d : tensor<f32>
    }
    """
    a = np.array([1, 2, 3, 4], np.float32)
    b = np.array([0.5, -1, 2, 1], np.float32)
    for (dot,) in run_all_levels(text, {"a": a, "b": b}):
        np.testing.assert_allclose(dot, 1.5 + a @ b)


def test_floordiv_maps_index_and_product_reduction():
    # out[i] = prod_j (x[i floordiv 2, j] + index i), over a map with floordiv (fancy-indexing path).
    text = """
    func.func @main(%x: tensor<2x3xf32>) -> tensor<4xf32> {
      %one = arith.constant 1.0 : f32
      %e = tensor.empty() : tensor<4xf32>
      %f = linalg.fill ins(%one : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i floordiv 2, j)>, affine_map<(i, j) -> (i)>],
          iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x3xf32>) outs(%f : tensor<4xf32>) {
      ^bb0(%v: f32, %acc: f32):
        %i = linalg.index 0 : index
        %ii = arith.index_cast %i : index to i64
        %fi = arith.sitofp %ii : i64 to f32
        %t = arith.addf %v, %fi : f32
        %p = arith.mulf %acc, %t : f32
        linalg.yield %p : f32
      } -> tensor<4xf32>
      func.return %r : tensor<4xf32>
    }
    """
    x = np.array([[1, 2, 3], [0.5, 1, -1]], np.float32)
    expected = np.array([np.prod(x[i // 2] + i) for i in range(4)], np.float32)
    (out,) = run_linalg(parse(text), {"x": x})
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_unsupported_body_is_named():
    text = """
    func.func @main(%x: tensor<4xf32>) -> tensor<f32> {
      %e = tensor.empty() : tensor<f32>
      %r = linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> ()>],
          iterator_types = ["reduction"]} ins(%x : tensor<4xf32>) outs(%e : tensor<f32>) {
      ^bb0(%v: f32, %acc: f32):
        linalg.yield %v : f32
      } -> tensor<f32>
      func.return %r : tensor<f32>
    }
    """
    with pytest.raises(ExecutionError, match="linalg.generic: reduction body must yield combine"):
        run_linalg(parse(text), {"x": np.zeros(4, np.float32)})
