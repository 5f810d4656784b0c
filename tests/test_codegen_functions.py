"""codegen's C functions: every top-level loop nest, and every chunk of a parallel loop, is a static
function taking the buffers it uses as `restrict` parameters; a parallel loop's chunks cover its
iterations exactly once whatever the thread count, also from a start other than 0 with a step other
than 1 and a trip count the chunks do not divide."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.codegen import c_source
from xrelay.codegen.program import NativeProgram
from xrelay.dialects import make_context

pytestmark = [pytest.mark.skipif(os.environ.get("XRELAY_NATIVE") == "0", reason="native executor disabled"),
              pytest.mark.usefixtures("native_cache")]

STRIDED = """
func.func @main(%x: memref<40xf32>) -> memref<40xf32> {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c40 = arith.constant 40 : index
  %two = arith.constant 2.0 : f32
  %out = memref.alloc() : memref<40xf32>
  scf.for %i = %c1 to %c40 step %c3 {
    %v = memref.load %x[%i] : memref<40xf32>
    %w = arith.mulf %v, %two : f32
    %s = arith.addf %w, %v : f32
    memref.store %s, %out[%i] : memref<40xf32>
  }
  func.return %out : memref<40xf32>
}
"""


def test_a_parallel_loops_chunks_cover_its_iterations_once(monkeypatch):
    monkeypatch.setattr(c_source, "PARALLEL_WORK", 1)  # split even this small loop
    program = NativeProgram(Parser(make_context(), STRIDED).parse_module())
    assert program.parallel_loops == 1
    assert re.search(r"static int xr_f\d+\(float \*restrict a0, float \*restrict b\d+, int64_t xr_threads, "
                     r"int64_t xr_lo, int64_t xr_hi\)", program.source)
    x = np.arange(40, dtype=np.float32) - 7
    expected = np.zeros(40, np.float32)
    expected[1:40:3] = x[1:40:3] * 2 + x[1:40:3]
    for threads in (1, 2, 3, 5):
        np.testing.assert_array_equal(program(x, threads=threads)[0], expected)


def test_a_top_level_nest_is_a_function_of_its_buffers():
    program = NativeProgram(Parser(make_context(), STRIDED).parse_module())
    assert program.parallel_loops == 0
    (signature,) = re.findall(r"static int xr_f\d+\((.*)\) \{", program.source)
    assert signature == "float *restrict a0, float *restrict b1, int64_t xr_threads"
    x = np.linspace(-1, 1, 40, dtype=np.float32)
    got = program(x)[0][1:40:3]
    np.testing.assert_array_equal(got, x[1:40:3] * np.float32(2) + x[1:40:3])


TILE_POINTS = """
func.func @main(%x: memref<40xf32>) -> memref<40xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c40 = arith.constant 40 : index
  %out = memref.alloc() : memref<40xf32>
  scf.for %i = %c0 to %c40 step %c4 {
    %end = arith.addi %i, %c4 : index
    scf.for %j = %i to %end step %c4 {
      %j3 = arith.addi %j, %c3 : index
      %v = memref.load %x[%j3] : memref<40xf32>
      memref.store %v, %out[%j] : memref<40xf32>
    }
    scf.for %k = %i to %end step %c1 {
      %w = memref.load %x[%k] : memref<40xf32>
      %o = memref.load %out[%k] : memref<40xf32>
      %d = arith.addf %w, %o : f32
      memref.store %d, %out[%k] : memref<40xf32>
    }
  }
  func.return %out : memref<40xf32>
}
"""


def test_a_tiles_points_count_from_zero_and_their_indices_need_no_check():
    # %j takes 0, 4, .., 36 (one iteration per tile), so %j + 3 stays inside the 40 elements: no check.
    # Each loop from %i to %i + 4 is a counter from 0 to its known trip count, which gcc can count.
    program = NativeProgram(Parser(make_context(), TILE_POINTS).parse_module())
    assert program._checks == []
    counters = re.findall(r"for \(int64_t (v\d+)_t = 0; \1_t < (\d+); \1_t\+\+\) \{\n\s*int64_t \1 = (v\d+) \+ \1_t \* ",
                          program.source)
    assert [trips for _, trips, _ in counters] == ["1", "4"]
    x = np.arange(40, dtype=np.float32)
    expected = x.copy()
    expected[0:40:4] += x[3:40:4]
    np.testing.assert_array_equal(program(x)[0], expected)
