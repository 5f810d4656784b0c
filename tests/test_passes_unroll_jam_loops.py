"""unroll-jam-loops: a matmul's and a strided, padded convolution's nests, as lowered and after
tile-loops, unrolled and jammed compute what numpy written here does, and bit for bit what the nests
did before (each output element's updates keep their order), natively and on the numpy loops
executor; the jammed convolution still runs its output loop across threads; with a remainder, loops
the factor does not divide are jammed and keep every iteration. The IR, and the nests the pass must
leave alone: tests/filecheck/passes/unroll_jam_loops*.mlir."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.utils.exceptions import PassFailedException

from op_levels import assert_loop_pass_kept_results, conv2d_reference, single_op_module
from xrelay.dialects import make_context
from xrelay.lowering import lower
from xrelay.passes.tile_loops import TileLoops
from xrelay.passes.unroll_jam_loops import UnrollJamLoops
from xdsl.parser import Parser

pytestmark = pytest.mark.usefixtures("native_cache")
RNG = np.random.default_rng(34)
A, B = RNG.standard_normal((64, 96), np.float32), RNG.standard_normal((48, 96), np.float32)
X, W = RNG.standard_normal((1, 8, 21, 21), np.float32), RNG.standard_normal((32, 8, 3, 3), np.float32)
CASES = [("nn.dense", [A, B], {}), ("nn.conv2d", [X, W], {"padding": (1, 1, 1, 1), "strides": (2, 2)})]


def reference(name: str) -> np.ndarray:
    """The op in numpy, float64."""
    return A.astype(np.float64) @ B.T if name == "nn.dense" else conv2d_reference(X, W, padding=1, stride=2)


def stores(module) -> int:
    return sum(op.name == "memref.store" for op in module.walk())


@pytest.mark.parametrize("tiled", [False, True], ids=["as-lowered", "tiled"])
@pytest.mark.parametrize("name, args, attrs", CASES, ids=[case[0] for case in CASES])
def test_jammed_nests_compute_what_the_nests_did(name, args, attrs, tiled):
    loops = lower(single_op_module(name, args, attrs), to="loops")
    if tiled:
        loops = TileLoops(tile=4)(loops)
    jammed = UnrollJamLoops(factor=2)(loops)
    assert stores(jammed) == stores(loops) + 1  # the accumulation's store, twice
    program = assert_loop_pass_kept_results(loops, jammed, args, reference(name))
    assert program.parallel_loops >= 1


def test_a_factor_below_one_is_refused():
    loops = lower(single_op_module("nn.relu", [(2, 2)], {}), to="loops")
    with pytest.raises(PassFailedException, match="unroll-jam-loops: factor must be at least 1, got 0"):
        UnrollJamLoops(factor=0)(loops)


def test_with_a_remainder_a_loop_the_factor_does_not_divide_is_jammed_and_its_rest_runs_after():
    # The NHWC convolution's width, 10, in tiles of 4: the points of a tile (4, 4, then 2) are
    # unrolled by 4 and jammed; the iterations after the last whole group run in a copy of the loop.
    x, w = RNG.standard_normal((1, 9, 10, 6), np.float32), RNG.standard_normal((3, 3, 6, 16), np.float32)
    attrs = {"padding": (1, 1, 1, 1), "data_layout": "NHWC", "kernel_layout": "HWIO"}
    loops = TileLoops(tile=4, inner_tile=64)(lower(single_op_module("nn.conv2d", [x, w], attrs), to="loops"))
    assert str(UnrollJamLoops(factor=4)(loops)) == str(loops)  # no trip count 4 divides
    jammed = UnrollJamLoops(factor=4, remainder=True)(loops)
    assert stores(jammed) == stores(loops) + 4  # four copies in the jammed loop, one in the remainder's
    nchw = conv2d_reference(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), padding=1)
    program = assert_loop_pass_kept_results(loops, jammed, [x, w], nchw.transpose(0, 2, 3, 1))
    assert program._checks == []  # every jammed index is bounded by the loop's upper bound alone


def test_with_a_remainder_a_strided_loop_keeps_every_iteration():
    # 63 rows stepped by 3 (21 iterations) jammed by 4: 20 in five groups, the last one after them.
    module = Parser(make_context(), STRIDED_ROWS).parse_module()
    jammed = UnrollJamLoops(factor=4, remainder=True)(module)
    assert stores(jammed) == stores(module) + 4
    a, b = RNG.standard_normal((63, 2), np.float32), RNG.standard_normal((2, 5), np.float32)
    expected = np.zeros((63, 5))
    expected[0:63:3] = a[0:63:3].astype(np.float64) @ b
    assert_loop_pass_kept_results(module, jammed, [a, b], expected, tolerance=1e-6)


STRIDED_ROWS = """
func.func @main(%a: memref<63x2xf32>, %b: memref<2x5xf32>) -> memref<63x5xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c63 = arith.constant 63 : index
  %out = memref.alloc() : memref<63x5xf32>
  scf.for %i = %c0 to %c63 step %c3 {
    scf.for %j = %c0 to %c5 step %c1 {
      scf.for %k = %c0 to %c2 step %c1 {
        %x = memref.load %a[%i, %k] : memref<63x2xf32>
        %y = memref.load %b[%k, %j] : memref<2x5xf32>
        %acc = memref.load %out[%i, %j] : memref<63x5xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %acc, %p : f32
        memref.store %s, %out[%i, %j] : memref<63x5xf32>
      }
    }
  }
  func.return %out : memref<63x5xf32>
}
"""
