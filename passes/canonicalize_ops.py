"""CanonicalizeOps: rewrite `nn.bias_add` into `nn.add` with the bias broadcast along its axis."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from xrelay.dialects import nn
from xrelay.passes.fold_constant import constant_value, erase_if_dead_constant
from xrelay.passes.simplify_inference import per_channel_shape
from xrelay.pass_base import PatternPass, register_xrelay_pass


class BiasAddToAdd(RewritePattern):
    """`bias_add(x, b, axis)` becomes `add(x, b')`, where b' broadcasts along `axis`: b itself
    for the last axis; otherwise a constant bias is stored reshaped to (C, 1, ..., 1) and any
    other bias goes through `expand_dims(b, axis=1, num_newaxis=ndim-1-axis)` as in Relay."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.BiasAddOp, rewriter: PatternRewriter) -> None:
        data, bias = op.operands
        ndim = data.type.get_num_dims()
        axis = int(op.attrs()["axis"]) % ndim
        new_axes = ndim - 1 - axis
        if new_axes:
            array = constant_value(bias)
            if array is not None:
                reshaped = nn.ConstantOp(array.reshape(per_channel_shape(array.shape[0], axis, ndim)))
            else:
                reshaped = nn.make("nn.expand_dims", [bias], axis=1, num_newaxis=new_axes)
            # Inserted on its own so it does not inherit the bias_add result's name.
            rewriter.insert(reshaped, InsertPoint.before(op))
            bias_value = reshaped.results[0]
        else:
            bias_value = bias
        add = nn.make("nn.add", [data, bias_value])
        rewriter.replace(op, add)
        erase_if_dead_constant(bias, rewriter)


@register_xrelay_pass("canonicalize-ops", opt_level=3, required=("InferType",), infer_type_after=True)
@dataclass(frozen=True)
class CanonicalizeOps(PatternPass):
    """Rewrites `nn.bias_add` into `nn.add` with a broadcastable bias (Relay's CanonicalizeOps)."""

    pattern = BiasAddToAdd
