"""PreActivationShift: `conv2d(relu(add(x, b)), w)` becomes `add(conv2d(maximum(x, -b), w), w·b)`.

For an unpadded 1x1 convolution with a constant kernel w and b constant per input channel.
relu(x + b) = maximum(x, -b) + b, exactly in floating point: where x > -b both are the rounded x + b
(which is then positive), elsewhere both are 0 (-b + b is exactly 0). The `+ b` then moves through
the linear 1x1 convolution as c[o] = sum_i w[o, i] * b[i] (`FoldBiasThroughPointwiseConv`) and joins
a constant add after the convolution, its bias, if there is one (`MergeConstantAdds`).

A pre-activation network (DenseNet: batch norm, folded to a per-channel add, and ReLU over the
growing concatenation, then a 1x1 convolution) then passes once over the convolution's data
(a maximum with a per-channel constant) instead of twice, and the shift costs nothing at run time.
The add and the ReLU must be used only by the next op (the ReLU by the convolution).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from xrelay.dialects import nn
from xrelay.passes.fold_constant import constant_value, erase_if_dead_constant
from xrelay.passes.fold_scale_axis import (
    FoldBiasThroughPointwiseConv,
    MergeConstantAdds,
    _constant_operand,
    _single_user,
    channel_vector,
)
from xrelay.pass_base import PatternPass, register_xrelay_pass


class ShiftPreActivation(RewritePattern):
    """Rewrites a ReLU of a constant add feeding a 1x1 convolution (see the module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, relu: nn.ReluOp, rewriter: PatternRewriter) -> None:
        add, conv = relu.operands[0].owner, _single_user(relu.results[0])
        if not (isinstance(add, nn.AddOp) and isinstance(conv, nn.Conv2DOp) and _single_user(add.results[0]) is relu
                and conv.operands[0] is relu.results[0]):
            return
        found = _constant_operand(add)
        attrs = conv.attrs()
        if found is None or constant_value(conv.operands[1]) is None or any(attrs["padding"]):
            return
        kernel_layout, data_layout = attrs["kernel_layout"], attrs["data_layout"]
        weight_shape = conv.operands[1].type.get_shape()
        shape = tuple(add.results[0].type.get_shape())
        if (tuple(weight_shape[kernel_layout.index(a)] for a in "HW") != (1, 1)
                or tuple(found[0].type.get_shape()) != shape
                or channel_vector(found[2], shape, data_layout.index("C")) is None):
            return
        x, shift, array = found
        negated = nn.ConstantOp(-array)
        clamped = nn.make("nn.maximum", [x, negated.results[0]])
        shifted = nn.make("nn.add", [clamped.results[0], shift])
        rewriter.insert([negated, clamped, shifted], InsertPoint.before(relu))
        conv.operands[0] = shifted.results[0]
        rewriter.notify_op_modified(conv)
        rewriter.erase(relu)
        rewriter.erase(add)
        FoldBiasThroughPointwiseConv().match_and_rewrite(conv, rewriter)
        moved = _single_user(conv.results[0])  # add(conv, c), whose user may be the conv's bias add
        bias_add = moved and _single_user(moved.results[0])
        if isinstance(bias_add, nn.AddOp):
            MergeConstantAdds().match_and_rewrite(bias_add, rewriter)
        erase_if_dead_constant(shift, rewriter)


@register_xrelay_pass("preactivation-shift", opt_level=3, required=("InferType",), infer_type_after=True)
@dataclass(frozen=True)
class PreActivationShift(PatternPass):
    """Turns each ReLU of a per-channel constant add in front of an unpadded 1x1 convolution into a
    maximum with a constant, the add folded into the convolution's bias (see the module docstring)."""

    pattern = ShiftPreActivation
