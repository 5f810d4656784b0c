"""ResNet-18 at the loops level, compiled by gcc (codegen/), as lowered and after tile-loops,
equals the nn level (1e-4); slow: each compiles a ~2300-line C file (7-12 s on the shared machine).
The speed figures come from benchmarks/loops_tiling.py (docs/architecture.md)."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay.frontend import bind_params_by_name, resnet
from xrelay.lowering import lower
from xrelay.passes.tile_loops import TileLoops
from xrelay.runtime import run
from xrelay.codegen.program import NativeProgram

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def resnet18():
    module, params = resnet.get_workload(num_layers=18, image_shape=(3, 64, 64))
    bound = bind_params_by_name(module, params)
    data = np.random.default_rng(18).standard_normal((1, 3, 64, 64)).astype(np.float32)
    return bound, data, run(bound, {"data": data})


@pytest.mark.parametrize("tile", [0, 32])
def test_resnet18_loops_natively_equal_the_nn_level(resnet18, tile):
    bound, data, expected = resnet18
    loops = lower(bound, to="loops")
    program = NativeProgram(TileLoops(tile=tile)(loops) if tile else loops)
    assert program.parallel_loops > 50  # the nests over channels run across threads
    (got,) = program(data)
    assert expected.std() > 1e-5
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
