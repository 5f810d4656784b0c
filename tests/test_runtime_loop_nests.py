"""The loops executor runs a nest over whole arrays only when that computes what the scalar loops do.

Nests that are the loops of a structured op (what convert-linalg-to-loops writes) are raised back to
one and run on numpy; nests whose meaning depends on the loop order (reading an element another
iteration wrote, writing an element twice, loading through a view of the buffer stored) stay scalar,
and the native executor splits none of their loops that carry the order. Each case is checked
against numpy written here, and raised against scalar translation of the same IR.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.codegen import c_source
from xrelay.codegen.program import NativeProgram
from xrelay.dialects import make_context
from xrelay.runtime.reference.loops_exec import compile_loops

PREFIX_SUM = """
func.func @main(%x: memref<6xf32>) -> memref<7xf32> {
  %out = memref.alloc() : memref<7xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %out[%c0] : memref<7xf32>
  scf.for %i = %c0 to %c6 step %c1 {
    %prev = memref.load %out[%i] : memref<7xf32>
    %v = memref.load %x[%i] : memref<6xf32>
    %s = arith.addf %prev, %v : f32
    %j = affine.apply affine_map<(d0) -> (d0 + 1)>(%i)
    memref.store %s, %out[%j] : memref<7xf32>
  }
  func.return %out : memref<7xf32>
}
"""

POLYNOMIAL_PRODUCT = """
func.func @main(%a: memref<3xf32>, %b: memref<4xf32>) -> memref<6xf32> {
  %out = memref.alloc() : memref<6xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c3 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %k = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%i, %j)
      %acc = memref.load %out[%k] : memref<6xf32>
      %x = memref.load %a[%i] : memref<3xf32>
      %y = memref.load %b[%j] : memref<4xf32>
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %p : f32
      memref.store %s, %out[%k] : memref<6xf32>
    }
  }
  func.return %out : memref<6xf32>
}
"""

MIRROR_THROUGH_A_VIEW = """
func.func @main(%buf: memref<2x3xf32>) -> memref<2x3xf32> {
  %flat = memref.collapse_shape %buf [[0, 1]] : memref<2x3xf32> into memref<6xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c3 step %c1 {
      %k = affine.apply affine_map<(d0, d1) -> (5 - d0 * 3 - d1)>(%i, %j)
      %v = memref.load %flat[%k] : memref<6xf32>
      memref.store %v, %buf[%i, %j] : memref<2x3xf32>
    }
  }
  func.return %buf : memref<2x3xf32>
}
"""

# The buffers are lists inside a scalar nest; the copy indexed them with a numpy array (a TypeError,
# found by make fuzz FUZZ_SECONDS=1800 FUZZ_SEED=310507).
COPY_INTO_VIEW_IN_A_NEST = """
func.func @main(%x: memref<2x3xf32>) -> memref<4x5xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  %out = memref.alloc() : memref<4x5xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c5 step %c1 {
      memref.store %zero, %out[%i, %j] : memref<4x5xf32>
    }
    %view = memref.subview %out[1, 2] [2, 3] [1, 1] : memref<4x5xf32> to memref<2x3xf32, strided<[5, 1], offset: 7>>
    memref.copy %x, %view : memref<2x3xf32> to memref<2x3xf32, strided<[5, 1], offset: 7>>
  }
  func.return %out : memref<4x5xf32>
}
"""

MATMUL_RELU = """
func.func @main(%a: memref<3x5xf32>, %b: memref<5x4xf32>) -> memref<3x4xf32> {
  %out = memref.alloc() : memref<3x4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c3 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      memref.store %zero, %out[%i, %j] : memref<3x4xf32>
    }
  }
  scf.for %i = %c0 to %c3 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      scf.for %k = %c0 to %c5 step %c1 {
        %acc = memref.load %out[%i, %j] : memref<3x4xf32>
        %x = memref.load %a[%i, %k] : memref<3x5xf32>
        %y = memref.load %b[%k, %j] : memref<5x4xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %acc, %p : f32
        memref.store %s, %out[%i, %j] : memref<3x4xf32>
      }
    }
  }
  scf.for %i = %c0 to %c3 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %out[%i, %j] : memref<3x4xf32>
      %r = arith.maximumf %v, %zero : f32
      memref.store %r, %out[%i, %j] : memref<3x4xf32>
    }
  }
  func.return %out : memref<3x4xf32>
}
"""


def programs(source: str):
    module = Parser(make_context(), source).parse_module()
    return compile_loops(module), compile_loops(module, vectorize=False)


def order_dependent_cases() -> dict[str, tuple[str, list[np.ndarray], np.ndarray, int]]:
    """(program, arguments, numpy's result, how many of its loops are free to run in parallel) by what
    makes the nest depend on the loop order."""
    x = np.arange(1, 7, dtype=np.float32)
    a, b = np.array([1, 2, 3], np.float32), np.array([1, -1, 2, 5], np.float32)
    buf = np.arange(6, dtype=np.float32).reshape(2, 3)
    # In loop order: the first half is mirrored in, then the second half copies the new first half.
    mirrored = np.array([5, 4, 3, 3, 4, 5], np.float32).reshape(2, 3)
    block = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    copied = np.zeros((4, 5), np.float32)
    copied[1:3, 2:5] = block
    return {
        "reads-what-an-earlier-iteration-wrote": (PREFIX_SUM, [x], np.concatenate([[0], np.cumsum(x)]), 0),
        "stores-an-element-twice": (POLYNOMIAL_PRODUCT, [a, b], np.convolve(a, b), 0),
        "loads-the-stored-buffer-through-a-view": (MIRROR_THROUGH_A_VIEW, [buf], mirrored, 0),
        # The inner loop zeroing one row is free; the outer one, copying over earlier rows, is not.
        "copies-into-a-view-of-the-stored-buffer": (COPY_INTO_VIEW_IN_A_NEST, [block], copied, 1),
    }


ORDER_DEPENDENT = order_dependent_cases()


@pytest.mark.parametrize("case", list(ORDER_DEPENDENT))
def test_a_nest_whose_meaning_depends_on_the_loop_order_stays_scalar(case):
    source, args, expected, _ = ORDER_DEPENDENT[case]
    given = [arg.copy() for arg in args]
    for program in programs(source):
        assert (program.raised_nests, program.scalar_nests) == (0, 1)
        np.testing.assert_array_equal(program(*args)[0], expected)
    for arg, before in zip(args, given):
        np.testing.assert_array_equal(arg, before)  # the caller's arrays are untouched


@pytest.mark.skipif(os.environ.get("XRELAY_NATIVE") == "0", reason="native executor disabled")
@pytest.mark.usefixtures("native_cache")
@pytest.mark.parametrize("case", list(ORDER_DEPENDENT))
def test_the_native_executor_splits_no_loop_that_carries_the_order(case, monkeypatch):
    monkeypatch.setattr(c_source, "PARALLEL_WORK", 1)  # however small, a loop free to split is split
    source, args, expected, free_loops = ORDER_DEPENDENT[case]
    program = NativeProgram(Parser(make_context(), source).parse_module())
    assert program.parallel_loops == free_loops
    np.testing.assert_array_equal(program(*args, threads=4)[0], expected)


def test_structured_nests_run_over_whole_arrays():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 5)).astype(np.float32), rng.standard_normal((5, 4)).astype(np.float32)
    raised, scalar = programs(MATMUL_RELU)
    assert (raised.raised_nests, raised.scalar_nests) == (3, 0)
    assert (scalar.raised_nests, scalar.scalar_nests) == (0, 3)
    expected = np.maximum(a @ b, 0)
    np.testing.assert_allclose(raised(a, b)[0], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(scalar(a, b)[0], expected, rtol=1e-5, atol=1e-6)


def test_lowered_network_raised_and_scalar_agree_with_the_nn_level():
    from xrelay.frontend import tiny
    from xrelay.lowering import lower
    from xrelay.runtime.reference.interpreter import run as run_nn

    module, params = tiny.get_workload(batch_size=1, image_shape=(3, 6, 6), channels=4)
    data = np.random.default_rng(3).standard_normal((1, 3, 6, 6)).astype(np.float32)
    expected = run_nn(module, {"data": data}, params)
    loops = lower(module, to="loops")
    raised = compile_loops(loops)
    scalar = compile_loops(loops, vectorize=False)
    assert raised.scalar_nests == 0 and scalar.raised_nests == 0 and scalar.scalar_nests == raised.raised_nests
    args = [params[name] if name in params else data for name in raised.arg_names]
    for program in (raised, scalar):
        np.testing.assert_allclose(program(*args)[0], expected, rtol=1e-4, atol=1e-6)
