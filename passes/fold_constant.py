"""FoldConstant: evaluate every nn op whose operands are all constants, with the runtime's kernels."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from xrelay.dialects import nn
from xrelay.dialects.constant import dtype_of
from xrelay.runtime.reference.nn_kernels import KERNELS
from xrelay.instrument.statistics import Statistic
from xrelay.pass_base import REWRITES, XRelayPass, register_xrelay_pass, rewrite_module

FOLDED = Statistic("num-folded", "Number of ops evaluated into constants")
CONSTANTS_ERASED = Statistic("num-constants-erased", "Number of unused constants erased")


def constant_value(value: SSAValue) -> np.ndarray | None:
    """The array behind `value` when an `nn.constant` defines it, else None."""
    owner = value.owner
    if isinstance(owner, nn.ConstantOp):
        return owner.numpy()
    return None


def erase_if_dead_constant(value: SSAValue, rewriter: PatternRewriter) -> None:
    """Erase the `nn.constant` defining `value` once nothing uses it any more."""
    owner = value.owner
    if isinstance(owner, nn.ConstantOp) and owner.parent is not None and not owner.result.uses:
        rewriter.erase(owner)
        CONSTANTS_ERASED.add()


class FoldConstantOp(RewritePattern):
    """Replaces an nn op whose operands are all `nn.constant`s by constants holding its results,
    and erases unused constants (as Relay's graphs have no unreachable constants): those
    unused on arrival, and those folding leaves unused (old operands, results nothing reads)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, nn.ConstantOp):
            erase_if_dead_constant(op.result, rewriter)
            return
        kernel = KERNELS.get(type(op))
        if not isinstance(op, nn.NNOp) or not op.operands or kernel is None:
            return
        arrays = []
        for operand in op.operands:
            array = constant_value(operand)
            if array is None:
                return
            arrays.append(array)
        outputs = kernel(op.attrs(), *arrays)
        if not isinstance(outputs, tuple):  # a kernel returns a tuple for a variadic op, even of one
            outputs = (outputs,)
        constants = []
        for result, output in zip(op.results, outputs, strict=True):
            # asarray, not ascontiguousarray: that makes a rank-0 result (a full reduction) 1-D.
            array = np.asarray(output, dtype=dtype_of(result.type.get_element_type()), order="C")
            if array.shape != tuple(result.type.get_shape()):
                raise ValueError(
                    f"FoldConstant: {op.name} kernel returned shape {array.shape}, "
                    f"the op's type is {result.type}"
                )
            constants.append(nn.ConstantOp(array))
        operands = tuple(op.operands)
        rewriter.replace(op, constants, [c.result for c in constants])
        FOLDED.add()
        for value in (*operands, *(c.result for c in constants)):
            erase_if_dead_constant(value, rewriter)


def fold_constants(module: ModuleOp) -> None:
    """One forward walk: ops are visited after their operands, so chains of constant ops fold
    in the same walk, and each op is evaluated at most once."""
    rewrite_module(FoldConstantOp(), module, apply_recursively=False)


@register_xrelay_pass("fold-constant", opt_level=2, infer_type_after=True,
                      statistics=(FOLDED, CONSTANTS_ERASED, REWRITES))
@dataclass(frozen=True)
class FoldConstant(XRelayPass):
    """Evaluates every nn op whose operands are all constants and removes unused constants
    (Relay's FoldConstant)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fold_constants(op)
