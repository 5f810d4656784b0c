"""FoldScaleAxis: fold per-channel constant multiplies into conv2d/dense weights.

BackwardFoldScaleAxis folds a scale applied to a conv2d's (or dense's) output into the weight's
output-channel axis; ForwardFoldScaleAxis folds a scale applied to a conv2d's input (possibly
through a per-channel constant add and a relu) into the weight's input-channel axis. Both leave
`multiply(weight, scale)` on the weight, which the FoldConstant at the end of FoldScaleAxis
evaluates when the weight is bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from xrelay.dialects import nn
from xrelay.dialects.constant import dtype_of
from xrelay.passes.fold_constant import FoldConstantOp, constant_value, erase_if_dead_constant
from xrelay.pass_base import PatternPass, XRelayPass, register_xrelay_pass


def channel_vector(scale: np.ndarray, value_shape: tuple[int, ...], axis: int) -> np.ndarray | None:
    """The (C,) vector of `scale` when, broadcast against a value of `value_shape`, it varies
    only along `axis` (C = value_shape[axis]) and does not change the value's shape; else None."""
    ndim = len(value_shape)
    if scale.ndim > ndim:
        return None
    padded = (1,) * (ndim - scale.ndim) + scale.shape
    if any(size != 1 for i, size in enumerate(padded) if i != axis):
        return None
    if padded[axis] not in (1, value_shape[axis]):
        return None
    return np.broadcast_to(scale.reshape(padded[axis]), (value_shape[axis],))


def along(vector: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """`vector` reshaped to broadcast along `axis` of an `ndim`-D array (ones elsewhere)."""
    shape = [1] * ndim
    shape[axis] = vector.shape[0]
    return np.ascontiguousarray(vector).reshape(shape)


def _constant_operand(op: Operation) -> tuple[SSAValue, SSAValue, np.ndarray] | None:
    """(other operand, constant operand, its array) of a binary op with one constant operand."""
    lhs, rhs = op.operands
    for value, const in ((lhs, rhs), (rhs, lhs)):
        array = constant_value(const)
        if array is not None and constant_value(value) is None:
            return value, const, array
    return None


def _single_user(value: SSAValue) -> Operation | None:
    """The op using `value` when it has exactly one use, else None."""
    uses = iter(value.uses)
    first, second = next(uses, None), next(uses, None)
    return first.operation if first is not None and second is None else None


def _scale_weight(consumer: Operation, vector: np.ndarray, kernel_axis: int, rewriter: PatternRewriter) -> None:
    """Replace `consumer`'s weight w by `multiply(w, vector along kernel_axis)`."""
    weight = consumer.operands[1]
    ndim = weight.type.get_num_dims()
    dtype = dtype_of(weight.type.get_element_type())
    scale = nn.ConstantOp(along(vector.astype(dtype), kernel_axis, ndim))
    scaled = nn.make("nn.multiply", [weight, scale])
    rewriter.insert([scale, scaled], InsertPoint.before(consumer))
    consumer.operands[1] = scaled.results[0]
    rewriter.notify_op_modified(consumer)


class _FoldScaleMultiply(RewritePattern):
    """The base of both folds: matches `multiply(value, constant scale)`; when `fold` has moved
    the scale into weights (it returns True), the multiply goes and so does its constant once unused."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.MultiplyOp, rewriter: PatternRewriter) -> None:
        found = _constant_operand(op)
        if found is None:
            return
        value, const, scale = found
        if self.fold(op, value, scale, rewriter):
            rewriter.replace_all_uses_with(op.results[0], value)
            rewriter.erase(op)
            erase_if_dead_constant(const, rewriter)

    def fold(self, op: nn.MultiplyOp, value: SSAValue, scale: np.ndarray, rewriter: PatternRewriter) -> bool:
        raise NotImplementedError


class FoldScaleIntoProducer(_FoldScaleMultiply):
    """`multiply(conv2d(x, w), s)` with s constant per output channel becomes
    `conv2d(x, multiply(w, s'))`, s' laid along the kernel's O axis; likewise for `nn.dense`
    with s along the last axis. Only when the conv/dense result has no other user.

    As TVM's backward fold, the scale also crosses constant adds between producer and multiply
    (a conv's bias, a batch norm's shift): `(conv(x, w) + b) * s` becomes `conv(x, w * s) + b * s`.
    A per-channel constant multiply is a producer too, whose constant absorbs s: the scale/shift
    pairs of two batch norms in a row (DenseNet's BN + Scale after each concat) become one
    `x * (s1 * s2) + b1 * s2` (`MergeConstantAdds` then joins that add with the next)."""

    def fold(self, op: nn.MultiplyOp, value: SSAValue, scale: np.ndarray, rewriter: PatternRewriter) -> bool:
        shape = tuple(value.type.get_shape())
        if tuple(op.results[0].type.get_shape()) != shape:
            return False
        # The constant adds from the multiply back to the producer, each with its constant scaled.
        replacements: list[tuple[Operation, SSAValue, np.ndarray]] = []
        tip, user = value, op
        while isinstance(tip.owner, nn.AddOp | nn.BiasAddOp) and _single_user(tip) is user:
            add = tip.owner
            if isinstance(add, nn.BiasAddOp):
                bias = constant_value(add.bias)
                vector = channel_vector(scale, shape, add.attrs()["axis"] % len(shape))
                if bias is None or vector is None:
                    return False
                replacements.append((add, add.bias, _product(bias, vector)))
                user, tip = add, add.operands[0]
                continue
            found = _constant_operand(add)
            if found is None or not _keeps_shape(found[2], shape) or not _keeps_shape(found[2] * scale, shape):
                return False
            replacements.append((add, found[1], _product(found[2], scale)))
            user, tip = add, found[0]
        producer = tip.owner
        if _single_user(tip) is not user or tuple(tip.type.get_shape()) != shape:
            return False
        if isinstance(producer, (nn.Conv2DOp, nn.DenseOp)):
            if isinstance(producer, nn.Conv2DOp):
                attrs = producer.attrs()
                out_layout = attrs["out_layout"] or attrs["data_layout"]
                axis, kernel_axis = out_layout.index("C"), attrs["kernel_layout"].index("O")
            else:
                axis, kernel_axis = len(shape) - 1, 0
            vector = channel_vector(scale, shape, axis)
            if vector is None:
                return False
            _scale_weight(producer, vector, kernel_axis, rewriter)
        elif isinstance(producer, nn.MultiplyOp) and (inner := _constant_operand(producer)) is not None:
            if tuple(inner[0].type.get_shape()) != shape or not _keeps_shape(inner[2] * scale, shape):
                return False
            _replace_constant(producer, inner[1], _product(inner[2], scale), rewriter)
        else:
            return False
        for add, const, array in replacements:
            _replace_constant(add, const, array, rewriter)
        return True


def _keeps_shape(constant: np.ndarray, shape: tuple[int, ...]) -> bool:
    """Whether `constant` broadcasts against a value of `shape` without changing its shape."""
    try:
        return np.broadcast_shapes(constant.shape, shape) == shape
    except ValueError:
        return False


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a * b (broadcast) computed in float64, in a's dtype."""
    return (a.astype(np.float64) * b.astype(np.float64)).astype(a.dtype)


def _replace_constant(op: Operation, const: SSAValue, array: np.ndarray, rewriter: PatternRewriter) -> None:
    """Make `op` read a new `nn.constant` of `array` where it read `const`."""
    new = nn.ConstantOp(array)
    rewriter.insert(new, InsertPoint.before(op))
    op.operands[list(op.operands).index(const)] = new.results[0]
    rewriter.notify_op_modified(op)
    erase_if_dead_constant(const, rewriter)


class MergeConstantAdds(RewritePattern):
    """`add(add(x, b1), b2)` with constants b1, b2 (the inner add used only here) becomes
    `add(x, b1 + b2)`: what the backward fold leaves of a conv's bias followed by a batch norm's
    shift, one pass over the activation instead of two."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.AddOp, rewriter: PatternRewriter) -> None:
        outer = _constant_operand(op)
        if outer is None or not isinstance(outer[0].owner, nn.AddOp) or _single_user(outer[0]) is not op:
            return
        inner = _constant_operand(outer[0].owner)
        shape = tuple(op.results[0].type.get_shape())
        if inner is None or tuple(inner[0].type.get_shape()) != shape:
            return
        total = (inner[2].astype(np.float64) + outer[2].astype(np.float64)).astype(inner[2].dtype)
        if not _keeps_shape(total, shape):
            return
        _replace_constant(op, outer[1], total, rewriter)
        inner_add = outer[0].owner
        op.operands[list(op.operands).index(outer[0])] = inner[0]
        rewriter.notify_op_modified(op)
        rewriter.erase(inner_add)
        erase_if_dead_constant(inner[1], rewriter)


class FoldBiasThroughPointwiseConv(RewritePattern):
    """`conv2d(add(x, b), w)` with b constant per input channel, w a constant 1x1 kernel, no padding
    (any stride and groups), and the add used only here, becomes `add(conv2d(x, w), c)` with
    c[o] = sum_i w[o, i] * b[i] over o's group: the bias a depthwise convolution's output gets
    before ShuffleNet's grouped 1x1 convolution joins that convolution's own bias (which
    `MergeConstantAdds` then merges with c), one pass over the activation fewer."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.Conv2DOp, rewriter: PatternRewriter) -> None:
        add = op.operands[0].owner
        if not isinstance(add, nn.AddOp) or _single_user(add.results[0]) is not op:
            return
        found = _constant_operand(add)
        weight = constant_value(op.operands[1])
        attrs = op.attrs()
        if found is None or weight is None or any(attrs["padding"]) or tuple(attrs["kernel_size"] or (1, 1)) != (1, 1):
            return
        data_layout, kernel_layout = attrs["data_layout"], attrs["kernel_layout"]
        shape = tuple(add.results[0].type.get_shape())
        if tuple(found[0].type.get_shape()) != shape:
            return
        bias = channel_vector(found[2], shape, data_layout.index("C"))
        oihw = weight.transpose([kernel_layout.index(c) for c in "OIHW"])
        if bias is None or oihw.shape[2:] != (1, 1):
            return
        groups, out_channels, group_in = attrs["groups"], oihw.shape[0], oihw.shape[1]
        per_group = bias.astype(np.float64).reshape(groups, group_in)
        kernels = oihw[:, :, 0, 0].astype(np.float64).reshape(groups, out_channels // groups, group_in)
        shift = np.einsum("goi,gi->go", kernels, per_group).reshape(out_channels)
        out_shape = tuple(op.results[0].type.get_shape())
        out_axis = (attrs["out_layout"] or data_layout).index("C")
        c = nn.ConstantOp(along(shift.astype(weight.dtype), out_axis, len(out_shape)))
        op.operands[0] = found[0]
        rewriter.notify_op_modified(op)
        shifted = nn.make("nn.add", [op.results[0], c.results[0]])
        rewriter.insert([c, shifted], InsertPoint.after(op))
        for use in list(op.results[0].uses):
            if use.operation is not shifted:
                use.operation.operands[use.index] = shifted.results[0]
        rewriter.erase(add)
        erase_if_dead_constant(found[1], rewriter)


class BackwardFold(RewritePattern):
    """`FoldScaleIntoProducer`, then `MergeConstantAdds` and `FoldBiasThroughPointwiseConv` on ops
    the earlier ones did not change. A reshape of a
    constant (how an imported batch norm's per-channel vectors reach their multiply and add:
    `expand_dims(vector)`) is folded to a constant first, as FoldConstant would, so the multiply
    and add after it see a constant operand."""

    def __init__(self):
        self.parts = (FoldScaleIntoProducer(), MergeConstantAdds(), FoldBiasThroughPointwiseConv())
        self.reshapes = FoldConstantOp()

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, nn.ExpandDimsOp | nn.ReshapeOp | nn.SqueezeOp):
            self.reshapes.match_and_rewrite(op, rewriter)
            return
        for part in self.parts:
            part.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


class FoldScaleIntoConsumers(_FoldScaleMultiply):
    """`x * s` feeding conv2d data inputs (optionally through `add(., b)` with b constant per
    channel, then `relu`) loses the multiply: b becomes b / s, each conv's weight becomes
    `multiply(w, s')` with s' laid along the kernel's I axis. Needs s constant per input
    channel, s > 0 when a relu is crossed, s != 0 when an add is, groups = 1, and every
    intermediate value used only by the next op of the chain (the last may feed several convs)."""

    def fold(self, op: nn.MultiplyOp, value: SSAValue, scale: np.ndarray, rewriter: PatternRewriter) -> bool:
        shape = tuple(value.type.get_shape())
        if tuple(op.results[0].type.get_shape()) != shape:
            return False
        tip = op.results[0]
        add = _single_user(tip)
        bias = None
        if isinstance(add, nn.AddOp) and (bias := _constant_operand(add)) is not None:
            tip = add.results[0]
        else:
            add = None
        relu = _single_user(tip)
        if isinstance(relu, nn.ReluOp):
            tip = relu.results[0]
        else:
            relu = None
        convs = [use.operation for use in tip.uses]
        if not convs or not all(_is_plain_conv_data_use(use.operation, use.index) for use in tip.uses):
            return False
        layouts = {conv.attrs()["data_layout"].index("C") for conv in convs}
        if len(layouts) != 1:
            return False
        (axis,) = layouts
        vector = channel_vector(scale, shape, axis)
        if vector is None or (relu is not None and not np.all(vector > 0)):
            return False
        if add is not None:
            new_bias = self._divided_bias(bias[2], vector, shape, axis)
            if new_bias is None:
                return False
            bias_op = nn.ConstantOp(new_bias)
            rewriter.insert(bias_op, InsertPoint.before(add))
            add.operands[list(add.operands).index(bias[1])] = bias_op.results[0]
            rewriter.notify_op_modified(add)
            erase_if_dead_constant(bias[1], rewriter)
        for conv in convs:
            _scale_weight(conv, vector, conv.attrs()["kernel_layout"].index("I"), rewriter)
        return True

    @staticmethod
    def _divided_bias(bias: np.ndarray, vector: np.ndarray, shape: tuple[int, ...], axis: int) -> np.ndarray | None:
        """b / s, kept at b's rank unless dividing adds the channel axis; None if b is not
        per-channel or s has zeros."""
        if channel_vector(bias, shape, axis) is None or np.any(vector == 0):
            return None
        ndim = len(shape)
        rank = max(bias.ndim, ndim - axis)
        padded = bias.reshape((1,) * (ndim - bias.ndim) + bias.shape).astype(np.float64)
        divided = padded / along(vector.astype(np.float64), axis, ndim)
        return divided.reshape(divided.shape[ndim - rank :]).astype(bias.dtype)


def _is_plain_conv_data_use(op: Operation, index: int) -> bool:
    return isinstance(op, nn.Conv2DOp) and index == 0 and op.attrs()["groups"] == 1


@register_xrelay_pass("backward-fold-scale-axis", opt_level=3, required=("InferType",), infer_type_after=True)
@dataclass(frozen=True)
class BackwardFoldScaleAxis(PatternPass):
    """Folds per-output-channel constant multiplies into the preceding conv2d/dense weights (across
    constant adds, whose constants it scales) or into a preceding constant multiply, and merges
    consecutive constant adds."""

    pattern = BackwardFold


@register_xrelay_pass("forward-fold-scale-axis", opt_level=3, required=("InferType",), infer_type_after=True)
@dataclass(frozen=True)
class ForwardFoldScaleAxis(PatternPass):
    """Folds per-input-channel constant multiplies into the following conv2d weights."""

    pattern = FoldScaleIntoConsumers


@register_xrelay_pass("fold-scale-axis", opt_level=0)
@dataclass(frozen=True)
class FoldScaleAxis(XRelayPass):
    """Relay's FoldScaleAxis: BackwardFoldScaleAxis, ForwardFoldScaleAxis, then FoldConstant.

    Run as an instrumented pass (`FoldScaleAxis()(mod)`, `-p fold-scale-axis`) it is TVM's
    `Sequential([...], name="FoldScaleAxis")`: opt level 0 like TVM's C++ Sequential(passes, name),
    its children filtered by the context's opt level (the halves need 3, FoldConstant 2) and each
    nested in the timing tree. Through plain xDSL `apply` (stock `xdsl-opt`, no PassContext) it runs
    all three in place.
    """

    @staticmethod
    def parts() -> list[XRelayPass]:
        from xrelay.passes.fold_constant import FoldConstant

        return [BackwardFoldScaleAxis(), ForwardFoldScaleAxis(), FoldConstant()]

    def transform_module(self, mod: ModuleOp, pass_ctx) -> ModuleOp:
        from xrelay.transform import Sequential

        return Sequential(self.parts(), name=self.tvm_name).transform_module(mod, pass_ctx)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for part in self.parts():
            part.apply(ctx, op)
