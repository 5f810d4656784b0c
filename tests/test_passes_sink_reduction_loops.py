"""sink-reduction-loops: a strided, padded convolution's and a max pool's nests after tile-loops, with
their short reduction loop moved below the points (and then unrolled and jammed), compute what numpy
written here does, and bit for bit what the tiled nests did, natively and on the numpy loops
executor; a matmul's nest (its reduction loop too long) stays as it was (the IR:
tests/filecheck/passes/sink_reduction_loops.mlir)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.utils.exceptions import PassFailedException

from op_levels import assert_loop_pass_kept_results, conv2d_reference, max_pool2d_reference, single_op_module
from xrelay.lowering import lower
from xrelay.passes.sink_reduction_loops import SinkReductionLoops
from xrelay.passes.tile_loops import TileLoops
from xrelay.passes.unroll_jam_loops import UnrollJamLoops

pytestmark = pytest.mark.usefixtures("native_cache")
RNG = np.random.default_rng(35)
X, W = RNG.standard_normal((1, 8, 21, 21), np.float32), RNG.standard_normal((32, 8, 3, 3), np.float32)
CASES = [("nn.conv2d", [X, W], {"padding": (1, 1, 1, 1), "strides": (2, 2)}),
         ("nn.max_pool2d", [X], {"pool_size": (3, 3), "strides": (2, 2)})]


def reference(name: str) -> np.ndarray:
    """The op in numpy, float64."""
    if name == "nn.max_pool2d":
        return max_pool2d_reference(X, size=3, stride=2)
    return conv2d_reference(X, W, padding=1, stride=2)


def innermost_trips(module) -> list[int]:
    """The constant trip counts of the innermost loops that hold a store."""
    found = []
    for op in module.walk():
        if op.name == "scf.for" and not any(inner.name == "scf.for" for inner in op.body.block.ops) \
                and any(inner.name == "memref.store" for inner in op.body.block.ops):
            found.append(op.ub.owner.value.value.data if op.ub.owner.name == "arith.constant" else -1)
    return found


@pytest.mark.parametrize("name, args, attrs", CASES, ids=[case[0] for case in CASES])
def test_sunk_nests_compute_what_the_tiled_nests_did(name, args, attrs):
    tiled = TileLoops(tile=4)(lower(single_op_module(name, args, attrs), to="loops"))
    sunk = SinkReductionLoops(max_trips=4)(tiled)
    assert 3 in innermost_trips(sunk) and 3 not in innermost_trips(tiled)  # the window's last loop
    for module in (sunk, UnrollJamLoops(factor=2)(sunk)):
        assert_loop_pass_kept_results(tiled, module, args, reference(name))


def test_a_matmuls_long_reduction_stays_where_it_is():
    tiled = TileLoops(tile=4)(lower(single_op_module("nn.dense", [(8, 6), (5, 6)], {}), to="loops"))
    assert str(SinkReductionLoops(max_trips=4)(tiled)) == str(tiled)


def test_max_trips_below_one_is_refused():
    loops = lower(single_op_module("nn.relu", [(2, 2)], {}), to="loops")
    with pytest.raises(PassFailedException, match="sink-reduction-loops: max_trips must be at least 1, got 0"):
        SinkReductionLoops(max_trips=0)(loops)
