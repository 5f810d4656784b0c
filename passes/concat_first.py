"""ConcatFirst: `concatenate(f(a), f(b), ...)` becomes `f(concatenate(a, b, ...))` for ReLUs and
per-channel constant adds.

A ReLU of every input of a concatenation is a ReLU of the concatenation. Constant adds whose
constants vary only along the concatenation axis (a bias per channel, concatenated along the
channels) are one add of the concatenated constants. SqueezeNet's fire modules end so: two
convolutions, each with its bias and ReLU, concatenated along the channels. Hoisted, the bias and
ReLU run once over the concatenation, and where a max pool follows, `MaxPoolFirst` can move them
behind it (a quarter of the elements after a stride-2 pool).

The inputs must each be used only by the concatenation, all be made by the same kind of op (all
ReLUs, or all adds / bias_adds of a constant varying only along the axis), and keep their shape
through it. It repeats while the inputs are again such ops.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from xrelay.dialects import nn
from xrelay.dialects.constant import dtype_of
from xrelay.passes.fold_constant import constant_value, erase_if_dead_constant
from xrelay.passes.fold_scale_axis import along, channel_vector
from xrelay.passes.max_pool_first import data_and_constant
from xrelay.pass_base import PatternPass, register_xrelay_pass


def added_vector(f: Operation, axis: int) -> tuple[SSAValue, SSAValue, np.ndarray] | None:
    """(data, constant operand, its vector along `axis`) when `f` adds to its data a constant that
    varies only along `axis` and keeps the data's shape; else None."""
    if isinstance(f, nn.BiasAddOp):
        data, const = f.operands
        array = constant_value(const)
        ndim = data.type.get_num_dims()
        if array is None or int(f.attrs()["axis"]) % ndim != axis or array.ndim != 1:
            return None
        return data, const, array
    if not isinstance(f, nn.AddOp):
        return None
    data, const = data_and_constant(f)
    if data is None or f.results[0].type != data.type:
        return None
    vector = channel_vector(constant_value(const), tuple(data.type.get_shape()), axis)
    return None if vector is None else (data, const, vector)


def hoist(concat: nn.ConcatenateOp, rewriter: PatternRewriter) -> bool:
    """Move one layer of ReLUs or constant adds from the inputs of `concat` to after it; whether it did."""
    values = list(concat.operands)
    producers = [v.owner for v in values]
    if not values or not all(isinstance(p, Operation) and v.has_one_use() for p, v in zip(producers, values)):
        return False
    ndim = values[0].type.get_num_dims()
    axis = int(concat.attrs()["axis"]) % ndim
    if all(isinstance(p, nn.ReluOp) for p in producers):
        data, constants, moved_operand = [p.operands[0] for p in producers], [], None
    else:
        added = [added_vector(p, axis) for p in producers]
        if any(a is None for a in added):
            return False
        data, constants = [a[0] for a in added], [a[1] for a in added]
        vectors = [np.broadcast_to(a[2], (v.type.get_shape()[axis],)) for a, v in zip(added, values)]
        dtype = dtype_of(values[0].type.get_element_type())
        moved_operand = nn.ConstantOp(along(np.concatenate(vectors).astype(dtype), axis, ndim))
        rewriter.insert(moved_operand, InsertPoint.after(concat))
    concat.operands = data
    rewriter.notify_op_modified(concat)
    operands = [concat.results[0]] + ([] if moved_operand is None else [moved_operand.results[0]])
    moved = nn.make("nn.relu" if moved_operand is None else "nn.add", operands)
    rewriter.insert(moved, InsertPoint.after(moved_operand or concat))
    for use in list(concat.results[0].uses):
        if use.operation is not moved:
            use.operation.operands[use.index] = moved.results[0]
    for p in producers:
        rewriter.erase(p)
    for const in constants:
        erase_if_dead_constant(const, rewriter)
    return True


class ConcatBeforeElementwise(RewritePattern):
    """Moves the ReLUs and per-channel constant adds of a concatenation's inputs to after it
    (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, concat: nn.ConcatenateOp, rewriter: PatternRewriter) -> None:
        while hoist(concat, rewriter):
            pass


@register_xrelay_pass("concat-first", opt_level=3, required=("InferType",), infer_type_after=True)
@dataclass(frozen=True)
class ConcatFirst(PatternPass):
    """Moves ReLUs and per-channel constant adds from the inputs of every `nn.concatenate` to after
    it (see the module docstring)."""

    pattern = ConcatBeforeElementwise
