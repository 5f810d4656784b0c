"""`convert-nn-to-linalg`: every nn op becomes linalg on tensors (plus arith/math/tensor).

Elementwise ops, broadcasts, bias_add, batch_norm, softmax and the reductions are
`linalg.generic`s (broadcast operands index size-1 axes with the constant 0); dense (2-D) and
batch_matmul (equal batches) are upstream's `linalg.matmul` / `linalg.batch_matmul` with
transposed operands in `indexing_maps` (`dialects/upstream_contractions.py`); transpose and
layout_transform are `linalg.transpose`; reshapes are `tensor.collapse_shape` /
`tensor.expand_shape`; constants are `arith.constant dense<...>`; windowed ops are in
`to_linalg/window.py`. Every result keeps its type, so `func.func` signatures do not change.
The lowerings themselves are in `lowering/to_linalg/` (one module per op family), keyed by op class.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.utils.exceptions import VerifyException

from xrelay.dialects.op_base import NNOp
from xrelay.lowering.builders import Emitter
from xrelay.lowering.to_linalg import LOWERINGS
from xrelay.pass_base import PatternPass, register_xrelay_pass


class LowerNNOp(RewritePattern):
    """Replace one nn op by the ops its entry in LOWERINGS emits."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        lower = LOWERINGS.get(type(op))
        if lower is None:
            if isinstance(op, NNOp) and op.NO_LOWERING:
                raise NotImplementedError(f"convert-nn-to-linalg: {op.name} has no lowering: {op.NO_LOWERING}")
            if op.name.startswith("nn."):
                raise NotImplementedError(f"convert-nn-to-linalg: no lowering for {op.name}")
            return
        emitter = Emitter()
        try:
            # The lowerings build from the op's attributes and types as the verifier accepts them;
            # unverified input (--disable-verify) is rejected here rather than lowered to malformed IR.
            op.verify()
            values = lower(op, emitter)
        except (VerifyException, ValueError) as err:
            raise ValueError(f"convert-nn-to-linalg: cannot lower {op.name}: {str(err).removeprefix(op.name + ': ')}") from None
        rewriter.replace(op, emitter.ops, values)


@register_xrelay_pass("convert-nn-to-linalg")
@dataclass(frozen=True)
class ConvertNNToLinalg(PatternPass):
    """Lower every nn op to linalg on tensors (see the module docstring)."""

    pattern = LowerNNOp
