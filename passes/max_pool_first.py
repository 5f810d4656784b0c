"""MaxPoolFirst: `max_pool2d(f(x))` becomes `f(max_pool2d(x))` for f a ReLU or a constant add.

A max pool picks, per window, the largest input. An elementwise f that never decreases (ReLU,
adding a constant that is the same at every position of a window) keeps that order, so the
largest f(x) of a window is f of its largest x: applying f after the pool gives the same values
over an output the pool has made `stride_h * stride_w` times smaller. Where a convolution's bias
and ReLU sit in front of a stride-2 pool (the stems of SqueezeNet and ShuffleNet), they then run
over a quarter of the elements.

The rewrite needs every pooling window to hold at least one element of the input (the pool's
padding reads as -inf, which f would map to something else), f's result to be used only by the
pool, and, for an add, a constant that broadcasts over the pooled axes (one value per channel,
say) without changing the shape. It repeats while the pool's input is another such f.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from xrelay.dialects import nn
from xrelay.passes.fold_constant import constant_value
from xrelay.pass_base import PatternPass, register_xrelay_pass


def windows_all_reach_the_input(pool: nn.MaxPool2DOp) -> bool:
    """Whether every window of `pool` (its padding, strides, dilation, ceil mode as given by its
    output shape) covers at least one element of its input."""
    attrs = pool.attrs()
    layout = attrs["layout"]
    in_shape, out_shape = pool.operands[0].type.get_shape(), pool.results[0].type.get_shape()
    top, left, bottom, right = attrs["padding"]
    for axis, before in (("H", top), ("W", left)):
        k = "HW".index(axis)
        size, out = in_shape[layout.index(axis)], out_shape[layout.index(axis)]
        kernel, stride, dilation = attrs["pool_size"][k], attrs["strides"][k], attrs["dilation"][k]
        for o in range(out):
            start = o * stride - before
            if not any(0 <= start + t * dilation < size for t in range(kernel)):
                return False
    return True


def movable(f: Operation, pooled_axes: tuple[int, int]) -> bool:
    """Whether `f` is a ReLU, or an add/bias_add of a constant that broadcasts over `pooled_axes`
    without changing the data's shape (the data being f's first non-constant operand)."""
    if isinstance(f, nn.ReluOp):
        return True
    if isinstance(f, nn.BiasAddOp):
        ndim = f.operands[0].type.get_num_dims()
        return int(f.attrs()["axis"]) % ndim not in pooled_axes and constant_value(f.operands[1]) is not None
    if not isinstance(f, nn.AddOp):
        return False
    data, const = data_and_constant(f)
    if data is None:
        return False
    shape, array = tuple(data.type.get_shape()), constant_value(const)
    if array.ndim > len(shape) or f.results[0].type != data.type:
        return False
    padded = (1,) * (len(shape) - array.ndim) + array.shape
    return all(padded[axis] == 1 for axis in pooled_axes)


def data_and_constant(add: Operation):
    """(data operand, constant operand) of a binary op with exactly one constant operand, else (None, None)."""
    lhs, rhs = add.operands
    lhs_constant, rhs_constant = constant_value(lhs) is not None, constant_value(rhs) is not None
    if rhs_constant and not lhs_constant:
        return lhs, rhs
    if lhs_constant and not rhs_constant:
        return rhs, lhs
    return None, None


class PoolBeforeMonotonic(RewritePattern):
    """Moves the ReLUs and constant adds in front of a max pool to after it (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, pool: nn.MaxPool2DOp, rewriter: PatternRewriter) -> None:
        layout = pool.attrs()["layout"]
        pooled_axes = (layout.index("H"), layout.index("W"))
        while True:
            f = pool.operands[0].owner
            value = pool.operands[0]
            if not (isinstance(f, Operation) and value.has_one_use() and movable(f, pooled_axes)
                    and windows_all_reach_the_input(pool)):
                return
            data = f.operands[0] if not isinstance(f, nn.AddOp) else data_and_constant(f)[0]
            pool.operands[0] = data
            rewriter.notify_op_modified(pool)
            operands = [pool.results[0] if v is data else v for v in f.operands]
            moved = nn.make(f.name, operands, **({"axis": f.attrs()["axis"]} if isinstance(f, nn.BiasAddOp) else {}))
            rewriter.insert(moved, InsertPoint.after(pool))
            for use in list(pool.results[0].uses):
                if use.operation is not moved:
                    use.operation.operands[use.index] = moved.results[0]
            rewriter.erase(f)


@register_xrelay_pass("max-pool-first", opt_level=3, required=("InferType",), infer_type_after=True)
@dataclass(frozen=True)
class MaxPoolFirst(PatternPass):
    """Moves ReLUs and per-channel constant adds from in front of every `nn.max_pool2d` to after it
    (see the module docstring)."""

    pattern = PoolBeforeMonotonic

