"""Whole-row workgroup tiles, as `iree-conv-tiles` decided them, set in IREE's convolution configuration.

IREE gives a data-tiled convolution with few output rows workgroup tiles of one row; the
`iree-conv-tiles` pass (lowering/iree_conv_tiles.py) writes whole-row tiles on the convolutions it
chooses (`kernel.workgroup_tiles`, read by `conv_tiles`). IREE's tuning specs apply before the
data-tiled convolution exists, so `runtime/iree/backend.py` compiles in two phases: up to
`executable-configurations`, then `whole_row_convs` rewrites the tiles in that text and the compile
resumes from it."""

from __future__ import annotations

import re
from collections.abc import Mapping

from xdsl.dialects.builtin import DenseArrayBase, ModuleOp
from xdsl.dialects.linalg import ops as linalg

from xrelay.dialects.kernel import WORKGROUP_TILES

CONFIGURED_PHASE = "executable-configurations"
"""The iree-compile phase (`--compile-to` / `--compile-from`) whose output `whole_row_convs` rewrites."""

Tiles = Mapping[str, tuple[int, int]]
"""Per convolution shape as IREE names its dispatch (`7x7x512x3x3x512`: output rows, columns and
channels, kernel rows, columns and input channels), its (channel blocks, rows) per workgroup."""

_CONV = re.compile(r"func\.func @\w+?_conv_(\d+x\d+x\d+x\d+x\d+x\d+)_f32\(")
"""A data-tiled convolution's dispatch function, named by IREE after its shape."""

_ROW_TILES = re.compile(r"distribution = \[0, (\d+), 1, 0, 0, 0, 0, 0, 0\]")
"""Workgroup tiles of one output row over a data-tiled convolution's nine loops."""


def conv_tiles(module: ModuleOp) -> dict[str, tuple[int, int]]:
    """The workgroup tiles `iree-conv-tiles` wrote on the convolutions of `module`, by shape."""
    tiles = {}
    for op in module.walk():
        attr = op.attributes.get(WORKGROUP_TILES)
        if isinstance(op, linalg.Conv2DNhwc_HwcfOp) and isinstance(attr, DenseArrayBase):
            _, rows, columns, filters = op.outputs[0].type.get_shape()
            kh, kw, channels, _ = op.inputs[1].type.get_shape()
            blocks, tile_rows = attr.get_values()
            tiles[f"{rows}x{columns}x{filters}x{kh}x{kw}x{channels}"] = (blocks, tile_rows)
    return tiles


def whole_row_convs(configured: str, tiles: Tiles) -> tuple[str, int]:
    """`configured` (iree-compile's output at `CONFIGURED_PHASE`) with every data-tiled f32
    convolution of a shape in `tiles` that IREE tiled one row per workgroup given those tiles;
    and how many were rewritten."""
    pieces, done, rewritten = [], 0, 0
    for conv in _CONV.finditer(configured):
        end = configured.find("func.func @", conv.end())
        one_row = _ROW_TILES.search(configured, conv.end(), end if end >= 0 else len(configured))
        if conv[1] not in tiles or one_row is None:
            continue
        blocks, rows = tiles[conv[1]]
        pieces += [configured[done:one_row.start()], f"distribution = [0, {blocks}, {rows}, 0, 0, 0, 0, 0, 0]"]
        done = one_row.end()
        rewritten += 1
    return "".join([*pieces, configured[done:]]), rewritten
