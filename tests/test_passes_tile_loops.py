"""tile-loops: the tiled nests of a convolution, a matmul and a pool (and an NHWC convolution tiled
along its width alone, `inner_tile`) compute what the nests as lowered do, natively (element for element: each output element's updates keep their order) and on
the numpy loops executor; nests it must not reorder stay as they are (tests/filecheck/passes)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.utils.exceptions import PassFailedException

from op_levels import assert_loop_pass_kept_results, conv2d_reference, max_pool2d_reference, single_op_module
from xrelay.lowering import lower
from xrelay.passes.tile_loops import TileLoops

pytestmark = pytest.mark.usefixtures("native_cache")
RNG = np.random.default_rng(32)
X = RNG.standard_normal((1, 6, 20, 20), np.float32)
CASES = [
    ("nn.conv2d", [X, RNG.standard_normal((8, 6, 3, 3), np.float32)], {"padding": (1, 1, 1, 1)}),
    ("nn.dense", [RNG.standard_normal((50, 30), np.float32), RNG.standard_normal((70, 30), np.float32)], {}),
    ("nn.max_pool2d", [X], {"pool_size": (3, 3), "strides": (2, 2)}),
]


def reference(name: str, args: list[np.ndarray]) -> np.ndarray:
    """The op in numpy, float64."""
    if name == "nn.dense":
        return args[0].astype(np.float64) @ args[1].T
    if name == "nn.max_pool2d":
        return max_pool2d_reference(args[0], size=3, stride=2)
    return conv2d_reference(*args, padding=1)


@pytest.mark.parametrize("name, args, attrs", CASES, ids=[case[0] for case in CASES])
def test_tiled_nests_compute_what_the_nests_as_lowered_do(name, args, attrs):
    loops = lower(single_op_module(name, args, attrs), to="loops")
    tiled = TileLoops(tile=8)(loops)
    assert sum(op.name == "arith.minsi" for op in tiled.walk()) >= 1  # some loop was split into tiles
    assert_loop_pass_kept_results(loops, tiled, args, reference(name, args))


def test_a_tile_below_one_is_refused():
    loops = lower(single_op_module("nn.relu", [(2, 2)], {}), to="loops")
    with pytest.raises(PassFailedException, match="tile-loops: tile must be at least 1 and inner_tile at least 0, got 0 and 0"):
        TileLoops(tile=0)(loops)


@pytest.mark.slow  # seven worker processes: ResNet-18 compiled six times (~8 s each) and at the linalg level
def test_the_tiling_benchmark_prints_every_contender_and_their_ratios():
    root = Path(__file__).parent.parent
    done = subprocess.run([sys.executable, str(root / "benchmarks" / "loops_tiling.py"), "--model", "resnet18",
                           "--size", "32", "--linalg", "--rounds", "1", "--block", "1", "--tile", "16", "--jam", "2",
                           "--width-tile", "2", "--winograd", "2"],
                          capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    labels = ["as lowered", "tile-loops{tile=16}", "+ sink, jam{2}, fma", "NHWC, width tile 2",
              "+ winograd-conv{tile=2 min_tiles=40}", "+ plan-buffers", "linalg level"]
    for line, label in zip(lines, labels, strict=False):
        assert line.startswith(f"resnet18 {label:>37}: median ")
    assert all("max error" in line and "e-0" in line for line in lines[:7])
    assert lines[7].startswith("as lowered / tiled: ") and "tiled / jammed: " in lines[7]
    assert "jammed / NHWC: " in lines[7] and "NHWC / Winograd: " in lines[7] and "Winograd / planned: " in lines[7]
    assert "planned / linalg: " in lines[7]


def test_an_nhwc_convolution_tiled_along_its_width_alone_computes_what_it_did():
    # inner_tile at least the output channels' count: only the width is cut (into tiles of 4, the last
    # one partial), and the channels run whole below the reductions.
    x, w = RNG.standard_normal((1, 9, 10, 6), np.float32), RNG.standard_normal((3, 3, 6, 16), np.float32)
    attrs = {"padding": (1, 1, 1, 1), "data_layout": "NHWC", "kernel_layout": "HWIO"}
    loops = lower(single_op_module("nn.conv2d", [x, w], attrs), to="loops")
    tiled = TileLoops(tile=4, inner_tile=64)(loops)
    steps = sorted(op.value.value.data for op in tiled.walk() if op.name == "arith.constant"
                   and op.result.uses and any(use.operation.name == "scf.for" and use.index == 2
                                              for use in op.result.uses))
    assert 4 in steps and 64 not in steps and sum(op.name == "arith.minsi" for op in tiled.walk()) == 1
    nchw = conv2d_reference(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), padding=1)
    assert_loop_pass_kept_results(loops, tiled, [x, w], nchw.transpose(0, 2, 3, 1))
