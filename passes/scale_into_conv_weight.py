"""ScaleIntoConvWeight: `conv2d(multiply(x, s), w)` becomes `conv2d(x, multiply(w, s'))` for a scale
s computed at run time, one value per input channel.

A squeeze-excitation block (EfficientNet, MobileNet v3) ends by scaling each channel of an activation
by a gate computed from that activation, and a convolution reads the result. The convolution is
linear in each input channel, so the gate can scale the weight's input channels instead:
sum_c (x[c] * s[c]) * w[o, c] = sum_c x[c] * (w[o, c] * s[c]). That is a pass over the weight
instead of over the activation; it is done when the weight has at most `max_weight_ratio` times as
many elements as the activation (56x56x144 activations against a 144x24 weight: 3,528 times
fewer values to scale; at 7x7x1152 against 1152x192 the activation is the smaller).

Matched: an `nn.multiply` of x and s used only as the data of a dense (groups = 1) `nn.conv2d`,
where x has the product's shape and s, not a constant (FoldScaleAxis folds those), broadcasts
along the channel axis of the convolution's data layout alone (so one batch image). s is reshaped
to lie along the kernel layout's input-channel axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from xrelay.dialects import nn
from xrelay.passes.fold_constant import constant_value
from xrelay.pass_base import PatternPass, register_xrelay_pass

MAX_WEIGHT_RATIO = 1.0
"""Default `max_weight_ratio`: scale the weight when it has no more elements than the activation."""


def channel_scale(scale: SSAValue, shape: tuple[int, ...], axis: int) -> bool:
    """Whether `scale`, broadcast against a value of `shape`, varies along `axis` alone."""
    scale_shape = tuple(scale.type.get_shape())
    if len(scale_shape) > len(shape):
        return False
    padded = (1,) * (len(shape) - len(scale_shape)) + scale_shape
    return all(size == 1 for i, size in enumerate(padded) if i != axis) and padded[axis] in (1, shape[axis])


class GateIntoWeight(RewritePattern):
    """Moves a run-time per-channel scale of a convolution's data onto its weight (module docstring)."""

    def __init__(self, max_weight_ratio: float):
        self.max_weight_ratio = max_weight_ratio

    @op_type_rewrite_pattern
    def match_and_rewrite(self, conv: nn.Conv2DOp, rewriter: PatternRewriter) -> None:
        multiply = conv.operands[0].owner
        if not isinstance(multiply, nn.MultiplyOp) or not multiply.results[0].has_one_use():
            return
        attrs = conv.attrs()
        if attrs["groups"] != 1:
            return
        shape = tuple(multiply.results[0].type.get_shape())
        axis = attrs["data_layout"].index("C")
        weight = conv.operands[1]
        found = None
        for x, s in (multiply.operands, multiply.operands[::-1]):
            if (x.type == multiply.results[0].type and s.type.get_element_type() == x.type.get_element_type()
                    and constant_value(s) is None and channel_scale(s, shape, axis)):
                found = x, s
                break
        weight_size = int(np.prod(weight.type.get_shape()))
        if found is None or weight_size > self.max_weight_ratio * int(np.prod(shape)):
            return
        x, s = found
        kernel_layout = attrs["kernel_layout"]
        along = [1] * len(kernel_layout)
        along[kernel_layout.index("I")] = shape[axis]
        inserted = []
        if tuple(s.type.get_shape()) != tuple(along):
            reshape = nn.make("nn.reshape", [s], newshape=tuple(along))
            inserted.append(reshape)
            s = reshape.results[0]
        scaled = nn.make("nn.multiply", [weight, s])
        rewriter.insert([*inserted, scaled], InsertPoint.before(conv))
        conv.operands[0], conv.operands[1] = x, scaled.results[0]
        rewriter.notify_op_modified(conv)
        rewriter.erase(multiply)


@register_xrelay_pass("scale-into-conv-weight", opt_level=3, required=("InferType",), infer_type_after=True)
@dataclass(frozen=True)
class ScaleIntoConvWeight(PatternPass):
    """Scales a convolution's weight instead of its data by a run-time per-channel gate when the
    weight has at most `max_weight_ratio` times the data's elements (see the module docstring)."""

    max_weight_ratio: float = MAX_WEIGHT_RATIO

    def pattern(self) -> RewritePattern:
        return GateIntoWeight(self.max_weight_ratio)
