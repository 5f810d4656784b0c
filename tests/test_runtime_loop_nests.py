"""The loops executor runs a nest over whole arrays only when that computes what the scalar loops do.

Nests that are the loops of a structured op (what convert-linalg-to-loops writes) are raised back to
one and run on numpy; nests whose meaning depends on the loop order (reading an element another
iteration wrote, writing an element twice) stay scalar. Each case is checked against numpy written
here, and raised against scalar translation of the same IR.
"""

from __future__ import annotations

import numpy as np
from xdsl.parser import Parser

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


def test_a_nest_reading_what_an_earlier_iteration_wrote_stays_scalar():
    x = np.arange(1, 7, dtype=np.float32)
    raised, scalar = programs(PREFIX_SUM)
    assert raised.scalar_nests == 1 and raised.raised_nests == 0
    expected = np.concatenate([[0], np.cumsum(x)]).astype(np.float32)
    np.testing.assert_array_equal(raised(x)[0], expected)
    np.testing.assert_array_equal(scalar(x)[0], expected)


def test_a_nest_storing_an_element_twice_stays_scalar():
    a, b = np.array([1, 2, 3], np.float32), np.array([1, -1, 2, 5], np.float32)
    raised, _ = programs(POLYNOMIAL_PRODUCT)
    assert raised.scalar_nests == 1
    np.testing.assert_array_equal(raised(a, b)[0], np.convolve(a, b))


def test_a_load_of_the_stored_buffer_through_a_view_stays_scalar():
    buf = np.arange(6, dtype=np.float32).reshape(2, 3)
    raised, scalar = programs(MIRROR_THROUGH_A_VIEW)
    assert raised.scalar_nests == 1
    # In loop order: the first half is mirrored in, then the second half copies the new first half.
    expected = np.array([5, 4, 3, 3, 4, 5], np.float32).reshape(2, 3)
    np.testing.assert_array_equal(raised(buf)[0], expected)
    np.testing.assert_array_equal(scalar(buf)[0], expected)
    np.testing.assert_array_equal(buf, np.arange(6).reshape(2, 3))  # the caller's array is untouched


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


def test_a_copy_into_a_view_inside_a_scalar_nest():
    # The buffers are lists inside a scalar nest; the copy indexed them with a numpy array (a
    # TypeError, found by make fuzz FUZZ_SECONDS=1800 FUZZ_SEED=310507).
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    expected = np.zeros((4, 5), np.float32)
    expected[1:3, 2:5] = x
    for program in programs(COPY_INTO_VIEW_IN_A_NEST):
        assert program.scalar_nests == 1
        np.testing.assert_array_equal(program(x)[0], expected)
