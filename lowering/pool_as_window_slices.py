"""`pool-as-window-slices`: a named pooling op as an elementwise combine of its strided windows.

A `linalg.pooling_{nchw,nhwc}_{max,sum}` on tensors with a window of KH x KW taps becomes one
`tensor.extract_slice` per tap (i, j), starting at row i*dh, column j*dw of the input with the
pooling's strides, and one elementwise `linalg.generic` over the output that folds the taps into
the init in upstream's loop order (kh outer, kw inner), `out = combine(out, tap)`:

    out[n, oh, ow, c] = combine(... combine(init[n, oh, ow, c], X[n, sh*oh, sw*ow, c]) ...,
                                X[n, sh*oh + (KH-1)*dh, sw*ow + (KW-1)*dw, c])

Why (`runtime/iree/backend.py` runs this pass before compiling): IREE's data tiling of
convolutions (`--iree-dispatch-creation-experimental-set-data-tiling-ops=convolution`) takes a
pooling op for a convolution and sets an encoding on its input, which resolves to the identity
layout and leaves a copy of the whole padded input in a dispatch of one workgroup: after ResNet's
stem, 114x114x64 floats, 0.55 ms on one thread (per-dispatch profile) that the second thread cannot
share. The elementwise form has no reduction loop for the data tiling to take, and IREE fuses the
slices and the padding into one dispatch (ResNet's max pool: 0.16 ms against 0.28 + 0.55 ms).
Windows of more than `max_taps` taps stay named ops (one slice per tap would grow the program).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import tensor
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from xrelay.dialects.upstream_linalg import UpstreamPooling
from xrelay.lowering.builders import PARALLEL, Emitter, affine_map, dims
from xrelay.pass_base import REWRITES, XRelayPass, register_xrelay_pass, rewrite_module

_COMBINE = {"max": "max", "sum": "add"}
"""An upstream pooling op's COMBINE → the BodyBuilder.binary kind that computes it."""


class PoolAsSlices(RewritePattern):
    """A named pooling op on tensors with at most `max_taps` window taps → strided window slices
    folded by one elementwise `linalg.generic`."""

    def __init__(self, max_taps: int):
        self.max_taps = max_taps

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, UpstreamPooling):
            return
        data, window = op.inputs
        (init,) = op.outputs
        if not all(isinstance(v.type, TensorType) for v in (data, window, init)):
            return
        kh, kw = window.type.get_shape()
        if kh * kw > self.max_taps:
            return
        sh, sw = (int(v) for v in op.strides.get_values())
        dh, dw = (int(v) for v in op.dilations.get_values())
        h_axis, w_axis = (2, 3) if op.LAYOUT == "NCHW" else (1, 2)
        out_shape = list(init.type.get_shape())
        e = Emitter()
        taps = []
        for i in range(kh):
            for j in range(kw):
                offsets, strides = [0, 0, 0, 0], [1, 1, 1, 1]
                offsets[h_axis], offsets[w_axis] = i * dh, j * dw
                strides[h_axis], strides[w_axis] = sh, sw
                taps.append(e.add(tensor.ExtractSliceOp.from_static_parameters(data, offsets, out_shape, strides)))
        kind = _COMBINE[op.COMBINE]

        def fold(b, args):
            acc = args[-1]
            for tap in args[:-1]:
                acc = b.binary(kind, acc, tap)
            return acc

        identity = affine_map(4, dims(4))
        e.generic(taps, init, [identity] * (len(taps) + 1), [PARALLEL] * 4, fold)
        rewriter.replace(op, e.ops, [e.ops[-1].results[0]])
        if isinstance(window.owner, tensor.EmptyOp) and not window.uses:  # it only gave the window's shape
            rewriter.erase(window.owner)


@register_xrelay_pass("pool-as-window-slices", statistics=(REWRITES,))
@dataclass(frozen=True)
class PoolAsWindowSlices(XRelayPass):
    """Rewrite named pooling ops (max and sum, NCHW and NHWC) with at most `max_taps` window taps
    as an elementwise combine of their strided window slices (linalg on tensors)."""

    max_taps: int = 16

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_module(PoolAsSlices(self.max_taps), op)
