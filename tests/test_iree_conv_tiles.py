"""Whole-row workgroup tiles for IREE's data-tiled convolutions with few output rows: the decision
of `iree-conv-tiles` (lowering/iree_conv_tiles.py) on each convolution, and the rewrite of the
configured text to those tiles (runtime/iree/conv_tiles.py), on hand-written dispatches and on what
IREE itself configures, and the compiled convolution's values against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from test_conv_as_matmul import conv_module, conv_nhwc

from xrelay.lowering import lower
from xrelay.lowering.iree_conv_tiles import IreeConvTiles
from xrelay.runtime.iree import backend as iree_backend
from xrelay.runtime.iree.conv_tiles import CONFIGURED_PHASE, conv_tiles, whole_row_convs

ROW_TILES = "distribution = [0, 4, 1, 0, 0, 0, 0, 0, 0]"
VECTOR = "vector_common_parallel = [1, 1, 1, 16, 0, 0, 0, 16, 0]"


def dispatch(name: str, distribution: str) -> str:
    """A configured dispatch as iree-compile prints it at CONFIGURED_PHASE, cut to what the rewrite reads."""
    return (f"  hal.executable private @{name.rsplit('_conv', 1)[0]} {{\n"
            f"    func.func @{name}() attributes {{translation_info = #pipeline}} {{\n"
            f"      %8 = linalg.fill {{lowering_config = #iree_cpu.lowering_config<{VECTOR}>}}\n"
            f"      %9 = linalg.generic {{lowering_config = #iree_cpu.lowering_config<{distribution}, {VECTOR}>}}\n"
            f"    }}\n  }}\n")


def tiles_of(n, h, c, f, k=3, **options) -> dict:
    """The tiles `iree-conv-tiles` writes for a k x k same-padded NHWC convolution (lowered to linalg)."""
    return conv_tiles(IreeConvTiles(**options)(lower(conv_module(n, h, h, c, f, k, 1, 1, k // 2), to="linalg")))


def test_convolutions_of_at_most_seven_rows_get_tiles_of_whole_rows():
    assert tiles_of(1, 7, 512, 512) == {"7x7x512x3x3x512": (2, 7)}  # 32 blocks: 2 per workgroup
    assert tiles_of(1, 7, 256, 64) == {"7x7x64x3x3x256": (1, 7)}  # 4 blocks: at least 1
    assert tiles_of(1, 14, 256, 256) == {}  # 14 rows: kept
    assert tiles_of(1, 14, 256, 256, max_rows=14) == {"14x14x256x3x3x256": (1, 14)}
    assert tiles_of(1, 7, 512, 512, max_rows=6) == {}
    assert tiles_of(1, 7, 512, 512, target_workgroups=4) == {"7x7x512x3x3x512": (8, 7)}
    assert tiles_of(1, 7, 64, 40) == {}  # not whole 16-channel blocks


def test_the_configured_text_gets_the_tiles_of_its_convolutions_shapes():
    text = "".join([
        dispatch("main_dispatch_31_conv_7x7x512x3x3x512_f32", ROW_TILES),
        dispatch("main_dispatch_28_conv_7x7x64x3x3x256_f32", ROW_TILES),
        dispatch("main_dispatch_26_conv_14x14x256x3x3x256_f32", ROW_TILES),  # no tiles: kept
        dispatch("main_dispatch_30_conv_7x7x512x3x3x512_f32", "distribution = [0, 4, 7, 0, 0, 0, 0, 0, 0]"),
        dispatch("main_dispatch_36_matmul_1x1000x512_f32", "distribution = [1, 7, 0, 0, 0, 0]"),
    ])
    tiles = {"7x7x512x3x3x512": (2, 7), "7x7x64x3x3x256": (1, 7)}
    rewritten, count = whole_row_convs(text, tiles)
    assert count == 2
    blocks = rewritten.split("hal.executable")[1:]
    assert "distribution = [0, 2, 7, 0, 0, 0, 0, 0, 0]" in blocks[0]
    assert "distribution = [0, 1, 7, 0, 0, 0, 0, 0, 0]" in blocks[1]
    assert [ROW_TILES in b for b in blocks[2:4]] == [True, False]
    assert rewritten.replace("[0, 2, 7,", "[0, 4, 1,").replace("[0, 1, 7,", "[0, 4, 1,") == text
    assert whole_row_convs(text, tiles | {"14x14x256x3x3x256": (1, 14)})[1] == 3
    assert whole_row_convs(text, {}) == (text, 0)


def test_the_tiles_of_the_next_dispatch_are_not_taken_for_a_convolution_without_them():
    text = (dispatch("main_dispatch_1_conv_7x7x64x3x3x64_f32", "distribution = [0, 1, 7, 64, 0, 0, 0]")
            + dispatch("main_dispatch_2_conv_56x56x64x3x3x64_f32", ROW_TILES))
    assert whole_row_convs(text, {"7x7x64x3x3x64": (1, 7)}) == (text, 0)


@pytest.mark.skipif(not iree_backend.available(), reason="IREE is not installed (the 'iree' extra)")
def test_iree_configures_a_7x7_convolution_by_rows_and_the_retiled_one_matches_numpy(tmp_path, monkeypatch):
    import iree.compiler

    monkeypatch.setenv("XRELAY_IREE_CACHE", str(tmp_path))
    module = IreeConvTiles()(lower(conv_module(1, 7, 7, 256, 256, 3, 1, 1, 1), to="linalg"))
    text, tiles = str(module), conv_tiles(module)
    flags = [*iree_backend.TARGET_FLAGS, "--iree-llvmcpu-target-cpu=host", *iree_backend.DEFAULT_FLAGS]
    configured = iree.compiler.compile_str(text, extra_args=[*flags, f"--compile-to={CONFIGURED_PHASE}"]).decode()
    rewritten, count = whole_row_convs(configured, tiles)
    assert count == 1 and "distribution = [0, 1, 7, 0, 0, 0, 0, 0, 0]" in rewritten

    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 7, 7, 256)).astype(np.float32)
    weight = rng.standard_normal((3, 3, 256, 256)).astype(np.float32)
    got = iree_backend.compile_text(text, tiles=tiles)(x, weight)[0]  # DEFAULT_FLAGS: in two phases
    np.testing.assert_allclose(got, conv_nhwc(x, weight, 1, 1, 1), rtol=1e-5, atol=1e-3)
    # IREE's own tiles are another cached module; each output keeps its order of additions.
    as_configured = iree_backend.compile_text(text)
    assert len(list(tmp_path.glob("*.vmfb"))) == 2
    np.testing.assert_array_equal(as_configured(x, weight)[0], got)
