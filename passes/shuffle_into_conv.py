"""ShuffleIntoConv: a channel shuffle after a grouped convolution becomes the order of a dense
convolution's filters.

ShuffleNet's units start with a grouped 1x1 convolution, its bias and ReLU, and a channel shuffle
(`reshape` splitting the channels into (G, C/G), `transpose` swapping the two, `reshape` back). The
shuffle is a permutation of the channels, and a copy of the whole activation with a stride-G inner
loop: at 56x56x112 several times the cost of a plain copy. A convolution whose filters are permuted
computes the permuted channels directly; biases and ReLUs act per channel, so they follow the
permutation. A grouped convolution's filters read only their group's input channels: as a dense
(groups = 1) convolution whose weight is zero outside those blocks, it does `groups` times the
multiply-adds, which pays only when a group reads few channels: the rewrite is done when each group
reads at most `max_group_channels` input channels (ShuffleNet's first unit reads 6 per group; its
later units 34 and more, where the dense product costs more than the shuffle it saves).

Matched: `reshape(transpose(reshape(f(conv2d(x, w)))))` where the reshapes split and merge back the
channel axis of the convolution's data layout, the transpose swaps the two split axes, w is a
constant, and f is a chain of ReLUs and per-channel constant adds (bias_add, add), every value in it
used once. The convolution becomes dense with its filters permuted, the constants of f are permuted,
and the shuffle goes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from xrelay.dialects import nn
from xrelay.passes.concat_first import added_vector
from xrelay.passes.fold_constant import constant_value, erase_if_dead_constant
from xrelay.passes.fold_scale_axis import along
from xrelay.pass_base import PatternPass, register_xrelay_pass

MAX_GROUP_CHANNELS = 8
"""Default `max_group_channels`: measured on ShuffleNet (see the module docstring)."""


def channel_permutation(split: nn.ReshapeOp, transpose: nn.TransposeOp, merge: nn.ReshapeOp,
                        axis: int) -> np.ndarray | None:
    """`perm` with shuffled[..., s] = original[..., perm[s]] along `axis`, when `split` splits that axis
    of its input into two, `transpose` swaps those two and `merge` merges them back; else None."""
    before = tuple(split.operands[0].type.get_shape())
    middle = tuple(split.results[0].type.get_shape())
    if tuple(merge.results[0].type.get_shape()) != before or len(middle) != len(before) + 1:
        return None
    if middle[:axis] != before[:axis] or middle[axis + 2:] != before[axis + 1:]:
        return None
    axes = list(transpose.attrs()["axes"])
    swapped = list(range(len(middle)))
    swapped[axis], swapped[axis + 1] = axis + 1, axis
    if axes != swapped:
        return None
    groups, size = middle[axis], middle[axis + 1]
    return np.arange(groups * size).reshape(groups, size).T.reshape(-1)


def elementwise_chain(value: SSAValue, axis: int) -> tuple[list[Operation], Operation] | None:
    """(ReLUs and per-channel constant adds from the convolution up to `value`, the convolution)
    when every value on the way is used once; else None."""
    chain = []
    while True:
        if not value.has_one_use():
            return None
        owner = value.owner
        if isinstance(owner, nn.Conv2DOp):
            return chain[::-1], owner
        if isinstance(owner, nn.ReluOp):
            chain.append(owner)
            value = owner.operands[0]
            continue
        added = added_vector(owner, axis) if isinstance(owner, Operation) else None
        if added is None:
            return None
        chain.append(owner)
        value = added[0]


def dense_weight(weight: np.ndarray, layout: str, groups: int, perm: np.ndarray) -> np.ndarray:
    """The weight (in `layout`, e.g. HWIO) of the dense convolution equal to the grouped one, its
    output channels (O) in the order `perm`."""
    oihw = weight.transpose([layout.index(a) for a in "OIHW"])
    out_channels, group_inputs = oihw.shape[:2]
    per_group = out_channels // groups
    dense = np.zeros((out_channels, group_inputs * groups, *oihw.shape[2:]), weight.dtype)
    for g in range(groups):
        rows = slice(g * per_group, (g + 1) * per_group)
        dense[rows, g * group_inputs:(g + 1) * group_inputs] = oihw[rows]
    return np.ascontiguousarray(dense[perm].transpose(["OIHW".index(a) for a in layout]))


class ShuffleIntoFilters(RewritePattern):
    """Folds a channel shuffle into the grouped convolution in front of it (module docstring)."""

    def __init__(self, max_group_channels: int):
        self.max_group_channels = max_group_channels

    @op_type_rewrite_pattern
    def match_and_rewrite(self, transpose: nn.TransposeOp, rewriter: PatternRewriter) -> None:
        split, uses = transpose.operands[0].owner, list(transpose.results[0].uses)
        if not (isinstance(split, nn.ReshapeOp) and len(uses) == 1 and isinstance(uses[0].operation, nn.ReshapeOp)
                and transpose.operands[0].has_one_use()):
            return
        merge = uses[0].operation
        source = split.operands[0]
        producer = source.owner
        while isinstance(producer, Operation) and not isinstance(producer, nn.Conv2DOp) and producer.operands:
            producer = producer.operands[0].owner  # to find the layout; `elementwise_chain` checks the way
        if not isinstance(producer, nn.Conv2DOp):
            return
        attrs = producer.attrs()
        axis = attrs["data_layout"].index("C")
        found = elementwise_chain(source, axis)
        perm = channel_permutation(split, transpose, merge, axis)
        weight = constant_value(producer.operands[1])
        if found is None or perm is None or weight is None or attrs["groups"] == 1:
            return
        chain, conv = found
        layout = attrs["kernel_layout"]
        if weight.shape[layout.index("I")] > self.max_group_channels:
            return
        new_weight = nn.ConstantOp(dense_weight(weight, layout, attrs["groups"], perm))
        dense = nn.make("nn.conv2d", [conv.operands[0], new_weight.results[0]], **{**attrs, "groups": 1})
        rewriter.insert([new_weight, dense], InsertPoint.before(conv))
        value = dense.results[0]
        ndim = value.type.get_num_dims()
        for f in chain:
            if isinstance(f, nn.ReluOp):
                moved = nn.make("nn.relu", [value])
                rewriter.insert(moved, InsertPoint.before(f))
            else:
                _, const, vector = added_vector(f, axis)
                dtype = constant_value(const).dtype
                permuted = nn.ConstantOp(along(np.ascontiguousarray(vector[perm]).astype(dtype), axis, ndim))
                moved = nn.make("nn.add", [value, permuted.results[0]])
                rewriter.insert([permuted, moved], InsertPoint.before(f))
            value = moved.results[0]
        rewriter.replace_all_uses_with(merge.results[0], value)
        for op in (merge, transpose, split, *chain[::-1], conv):
            consts = [v for v in op.operands if constant_value(v) is not None]
            rewriter.erase(op)
            for const in consts:
                erase_if_dead_constant(const, rewriter)


@register_xrelay_pass("shuffle-into-conv", opt_level=3, required=("InferType",), infer_type_after=True)
@dataclass(frozen=True)
class ShuffleIntoConv(PatternPass):
    """Folds a channel shuffle after a grouped convolution whose groups read at most
    `max_group_channels` channels each into a dense convolution's filter order (see the module docstring)."""

    max_group_channels: int = MAX_GROUP_CHANNELS

    def pattern(self) -> RewritePattern:
        return ShuffleIntoFilters(self.max_group_channels)
