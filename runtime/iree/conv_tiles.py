"""Workgroup tiles of whole output rows for IREE's data-tiled convolutions with few output rows.

IREE 3.13 gives a data-tiled convolution (`--iree-dispatch-creation-experimental-set-data-tiling-ops=
convolution`) the workgroup tiles `distribution = [0, OCB, 1, 0, ...]` over its loops (batch, output-
channel blocks of 16, output rows, output columns, input-channel blocks, kernel rows, kernel columns,
output channels in the block, input channels in the block) when the output has few rows: each
workgroup computes one output row of OCB channel blocks, so every row reads all the weights of its
channel blocks again. On ResNet's 7x7 stage (3x3x512x512 weights, 9.4 MB) that streams the weights
seven times per convolution, from L3 rather than L2. Tiles of whole rows read each weight once and
reuse it from L2 across the rows: the 7x7 stage's convolutions take 14-17% less time on 2 threads
(benchmarks/iree_profile.py), with identical results (each output keeps its reduction order).

IREE's tuning specs cannot set this: they apply before the data-tiled convolution exists (the
encoding is materialized after user configurations are read). So `runtime/iree/backend.py` compiles
in two phases: up to IREE's `executable-configurations` phase, where every dispatch carries the
lowering configuration IREE chose, then `whole_row_convs` rewrites the convolutions' workgroup tiles
in that text, and the compile resumes from it.
"""

from __future__ import annotations

import re

CONFIGURED_PHASE = "executable-configurations"
"""The iree-compile phase (`--compile-to` / `--compile-from`) whose output `whole_row_convs` rewrites."""

MAX_ROWS = 7
"""Convolutions with at most this many output rows get whole-row workgroup tiles."""

TARGET_WORKGROUPS = 16
"""About this many workgroups per rewritten convolution (enough to balance 2-8 threads)."""

_CONV = re.compile(r"func\.func @\w+?_conv_(\d+)x(\d+)x(\d+)x\d+x\d+x\d+_f32\(")
"""A data-tiled convolution's dispatch function, named by IREE after its output rows, columns and
channels, then kernel rows, columns and input channels."""

_ROW_TILES = re.compile(r"distribution = \[0, (\d+), 1, 0, 0, 0, 0, 0, 0\]")
"""Workgroup tiles of one output row over a data-tiled convolution's nine loops."""


def whole_row_convs(configured: str, max_rows: int = MAX_ROWS) -> tuple[str, int]:
    """`configured` (iree-compile's output at `CONFIGURED_PHASE`) with every data-tiled f32
    convolution of at most `max_rows` output rows, tiled one row per workgroup, tiled by whole rows
    (and output-channel blocks for about `TARGET_WORKGROUPS` workgroups); and how many were rewritten."""
    pieces, done, rewritten = [], 0, 0
    for conv in _CONV.finditer(configured):
        rows, channels = int(conv[1]), int(conv[3])
        end = configured.find("func.func @", conv.end())
        tiles = _ROW_TILES.search(configured, conv.end(), end if end >= 0 else len(configured))
        if rows > max_rows or tiles is None or channels % 16:
            continue
        blocks = max(1, channels // 16 // TARGET_WORKGROUPS)
        pieces += [configured[done:tiles.start()], f"distribution = [0, {blocks}, {rows}, 0, 0, 0, 0, 0, 0]"]
        done = tiles.end()
        rewritten += 1
    return "".join([*pieces, configured[done:]]), rewritten
