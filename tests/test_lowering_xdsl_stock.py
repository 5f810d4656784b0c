"""Why xrelay owns its conv/pool kernels and lowering patterns: xDSL 0.75's stock pieces are wrong.

- The interpreter's `linalg.conv_2d_nchw_fchw` and `linalg.pooling_nchw_max` implementations
  only compute channel 0 (the rest of the output stays zero) and ignore batch.
- `linalg.pooling_nchw_max`'s region yields `max(x, window)`, not `max(x, acc)`, so once it is
  generalized to loops it forgets the running maximum.
xrelay's executor runs the same named ops from their indexing maps and gets numpy's answer.
"""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.linalg import LinalgFunctions
from xdsl.interpreters.memref import MemRefFunctions
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import TypedPtr
from xdsl.parser import Parser
from xdsl.transforms.linalg_generalize_named_ops import LinalgGeneralizeNamedOpsPass

from xrelay.dialects import make_context
from xrelay.lowering.linalg_to_loops import LinalgToLoops
from xrelay.runtime.executor.linalg_exec import run_linalg
from xrelay.runtime.reference.loops_exec import run_loops

X = (np.arange(32, dtype=np.float32) - 40).reshape(1, 2, 4, 4)  # all negative
W = np.stack([np.ones((2, 3, 3), np.float32), 2 * np.ones((2, 3, 3), np.float32)])


def numpy_conv(x, w):
    out = np.zeros((1, 2, 2, 2), np.float32)
    for i in range(2):
        for j in range(2):
            out[0, :, i, j] = np.einsum("chw,fchw->f", x[0, :, i:i + 3, j:j + 3], w)
    return out


def numpy_max_pool(x):
    return x.reshape(1, 2, 2, 2, 2, 2).max(axis=(3, 5))


MEMREF_IR = """
func.func @main(%x: memref<1x2x4x4xf32>, %w: memref<2x2x3x3xf32>, %conv: memref<1x2x2x2xf32>,
                %win: memref<2x2xf32>, %pool: memref<1x2x2x2xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x2x4x4xf32>, memref<2x2x3x3xf32>) outs(%conv : memref<1x2x2x2xf32>)
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %win : memref<1x2x4x4xf32>, memref<2x2xf32>) outs(%pool : memref<1x2x2x2xf32>)
  func.return
}
"""

TENSOR_IR = """
func.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<1x2x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) outs(%init : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %e1 = tensor.empty() : tensor<1x2x2x2xf32>
  %pinit = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %pool = linalg.generic {indexing_maps = [affine_map<(n, c, h, w, kh, kw) -> (n, c, h * 2 + kh, w * 2 + kw)>,
      affine_map<(n, c, h, w, kh, kw) -> (kh, kw)>, affine_map<(n, c, h, w, kh, kw) -> (n, c, h, w)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %win : tensor<1x2x4x4xf32>, tensor<2x2xf32>) outs(%pinit : tensor<1x2x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<1x2x2x2xf32>
  func.return %conv, %pool : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}
"""


def shaped(array: np.ndarray) -> ShapedArray:
    return ShapedArray(TypedPtr.new_float32(array.ravel().tolist()), list(array.shape))


def stock_context():
    """xDSL's own dialects, its linalg.pooling_nchw_max included (make_context has upstream's instead)."""
    from xdsl.context import Context
    from xdsl.dialects.arith import Arith
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func
    from xdsl.dialects.linalg import Linalg
    from xdsl.dialects.memref import MemRef
    from xdsl.dialects.tensor import Tensor

    ctx = Context()
    for dialect in (Builtin, Func, Arith, MemRef, Linalg, Tensor):
        ctx.load_dialect(dialect)
    return ctx


def test_stock_interpreter_conv_and_pool_are_wrong_for_two_channels():
    module = Parser(stock_context(), MEMREF_IR).parse_module()
    interpreter = Interpreter(module)
    for functions in (LinalgFunctions(), ArithFunctions(), FuncFunctions(), MemRefFunctions()):
        interpreter.register_implementations(functions)
    conv, pool = shaped(np.zeros((1, 2, 2, 2), np.float32)), shaped(np.zeros((1, 2, 2, 2), np.float32))
    interpreter.call_op("main", (shaped(X), shaped(W), conv, shaped(np.zeros((2, 2), np.float32)), pool))
    stock_conv = np.array(conv.data, np.float32).reshape(1, 2, 2, 2)
    stock_pool = np.array(pool.data, np.float32).reshape(1, 2, 2, 2)
    # Output channel 1 is never written, and channel 0 only sums input channel 0.
    np.testing.assert_array_equal(stock_conv[0, 1], 0)
    np.testing.assert_array_equal(stock_conv[0, 0], numpy_conv(X[:, :1], W[:1, :1])[0, 0])
    assert not np.allclose(stock_conv, numpy_conv(X, W))
    np.testing.assert_array_equal(stock_pool[0, 1], 0)
    np.testing.assert_array_equal(stock_pool[0, 0], numpy_max_pool(X)[0, 0])
    assert not np.allclose(stock_pool, numpy_max_pool(X))


def test_stock_pooling_region_ignores_the_accumulator():
    module = Parser(stock_context(), MEMREF_IR).parse_module()
    LinalgGeneralizeNamedOpsPass().apply(stock_context(), module)
    LinalgToLoops().apply(stock_context(), module)
    # Wrap @main so the loops executor can return the written buffers.
    pool = run_stock_pool_through_loops(module)
    # Each tap overwrites the output with max(x, window element = 0): the last tap's value, clamped at 0.
    np.testing.assert_array_equal(pool, np.zeros((1, 2, 2, 2), np.float32))
    assert not np.array_equal(pool, numpy_max_pool(X))


def run_stock_pool_through_loops(module) -> np.ndarray:
    from xrelay.runtime.reference.loops_exec import LoopsCompiler

    compiler = LoopsCompiler(module)
    namespace = compiler.globals
    exec(compile(compiler.source, "<test>", "exec"), namespace)  # noqa: S102
    # Memrefs are flat numpy arrays of their element type.
    buffers = [X.ravel().copy(), W.ravel().copy(), np.zeros(8, np.float32), np.zeros(4, np.float32),
               np.zeros(8, np.float32)]
    namespace["main"](*buffers)
    return buffers[4].reshape(1, 2, 2, 2)


def test_xrelay_executors_get_numpy_answers_on_the_same_ops():
    module = Parser(make_context(), TENSOR_IR).parse_module()
    conv, pool = run_linalg(module, {"x": X, "w": W})
    np.testing.assert_allclose(conv, numpy_conv(X, W), rtol=1e-6)
    np.testing.assert_array_equal(pool, numpy_max_pool(X))
    from xrelay.lowering import LinalgBufferize

    bufferized = LinalgBufferize()(module)
    loops = LinalgToLoops()(bufferized)
    conv, pool = run_loops(loops, {"x": X, "w": W})
    np.testing.assert_allclose(conv, numpy_conv(X, W), rtol=1e-6)
    np.testing.assert_array_equal(pool, numpy_max_pool(X))


def test_loops_executor_agrees_with_the_stock_interpreter():
    """Same loop IR, same answer (how much faster is measured by benchmarks/execution.py)."""
    from xdsl.interpreters.affine import AffineFunctions
    from xdsl.interpreters.builtin import BuiltinFunctions
    from xdsl.interpreters.math import MathFunctions
    from xdsl.interpreters.scf import ScfFunctions

    from xrelay.runtime.reference.loops_exec import compile_loops

    module = Parser(make_context(), TENSOR_IR).parse_module()
    from xrelay.lowering import LinalgBufferize

    loops = LinalgToLoops()(LinalgBufferize()(module))
    interpreter = Interpreter(loops)
    for functions in (FuncFunctions(), ArithFunctions(), MemRefFunctions(), ScfFunctions(), AffineFunctions(),
                      MathFunctions(), BuiltinFunctions()):
        interpreter.register_implementations(functions)
    stock_conv, stock_pool = interpreter.call_op("main", (shaped(X), shaped(W)))
    conv, pool = compile_loops(loops)(X, W)
    np.testing.assert_allclose(np.array(stock_conv.data, np.float32).reshape(1, 2, 2, 2), conv, rtol=1e-6)
    np.testing.assert_array_equal(np.array(stock_pool.data, np.float32).reshape(1, 2, 2, 2), pool)
