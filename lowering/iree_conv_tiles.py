"""`iree-conv-tiles`: workgroup tiles of whole output rows for IREE's convolutions with few rows.

IREE 3.13 tiles a data-tiled convolution with few output rows one output row per workgroup, so every
row reads all the weights of its channel blocks again (ResNet's 7x7 stage: 9.4 MB of weights streamed
seven times per convolution, from L3). Tiles of whole rows read each weight once and reuse it from
L2: the 7x7 stage's convolutions take 14-17% less time on 2 threads (benchmarks/iree_profile.py),
with identical results (each output keeps its reduction order).

The pass writes the decision on each f32 `linalg.conv_2d_nhwc_hwcf` on tensors with at most
`max_rows` output rows and whole 16-channel blocks of filters, as `WORKGROUP_TILES =
array<i64: channel_blocks, rows>`: each workgroup computes `rows` output rows (all of them) of
`channel_blocks` blocks of 16 output channels, enough blocks per workgroup for about
`target_workgroups` workgroups. `runtime/iree/backend.py` reads the attribute and sets those tiles
in IREE's configuration of the convolution (`runtime/iree/conv_tiles.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, f32, i64
from xdsl.dialects.linalg import ops as linalg

from xrelay.dialects.kernel import WORKGROUP_TILES
from xrelay.lowering.builders import conv_on_tensors
from xrelay.pass_base import XRelayPass, register_xrelay_pass


@register_xrelay_pass("iree-conv-tiles")
@dataclass(frozen=True)
class IreeConvTiles(XRelayPass):
    """Set `WORKGROUP_TILES` on the NHWC/HWCF f32 convolutions with at most `max_rows` output rows and
    a multiple of 16 filters, for about `target_workgroups` workgroups each."""

    max_rows: int = 7
    target_workgroups: int = 16

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for conv in op.walk():
            if not isinstance(conv, linalg.Conv2DNhwc_HwcfOp) or conv_on_tensors(conv) is None:
                continue
            out = conv.outputs[0].type
            _, rows, _, filters = out.get_shape()
            if out.get_element_type() != f32 or rows > self.max_rows or filters % 16:
                continue
            blocks = max(1, filters // 16 // self.target_workgroups)
            conv.attributes[WORKGROUP_TILES] = DenseArrayBase.from_list(i64, (blocks, rows))
