"""SimplifyInference: rewrite inference-time `nn.batch_norm` into a per-channel multiply and add."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from xrelay.dialects import nn
from xrelay.dialects.constant import dtype_of
from xrelay.passes.fold_constant import constant_value, erase_if_dead_constant
from xrelay.pass_base import PatternPass, register_xrelay_pass


def per_channel_shape(channels: int, axis: int, ndim: int) -> tuple[int, ...]:
    """Shape of a per-channel vector that numpy-broadcasts along `axis` of an `ndim`-D value:
    (C, 1, 1) for axis 1 of NCHW, (C,) for the last axis."""
    return (channels,) + (1,) * (ndim - 1 - axis)


class BatchNormToMultiplyAdd(RewritePattern):
    """`batch_norm(x, gamma, beta, mean, var)` becomes `x * scale + shift`, with
    scale = gamma / sqrt(var + eps) and shift = beta - mean * scale shaped to broadcast along
    the axis. With constant parameters both are computed here (as the runtime's kernel does,
    in float64) and stored already shaped; otherwise they are built from nn ops on the parameters.
    Results 1 and 2 (mean and variance at inference) are replaced by `moving_mean`/`moving_var`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nn.BatchNormOp, rewriter: PatternRewriter) -> None:
        data, gamma, beta, mean, var = op.operands
        attrs = op.attrs()
        shape = tuple(data.type.get_shape())
        ndim = len(shape)
        axis = int(attrs["axis"]) % ndim
        broadcast_shape = per_channel_shape(shape[axis], axis, ndim)
        used = [mean, var] + ([gamma] if attrs["scale"] else []) + ([beta] if attrs["center"] else [])
        if all(constant_value(v) is not None for v in used):
            scale, shift = self._constant_scale_shift(op, attrs, data.type.get_element_type())
            scale_op = nn.ConstantOp(scale.reshape(broadcast_shape))
            shift_op = nn.ConstantOp(shift.reshape(broadcast_shape))
            new_ops: list[Operation] = [scale_op, shift_op]
            scale_value, shift_value = scale_op.results[0], shift_op.results[0]
        else:
            new_ops, scale_value, shift_value = self._graph_scale_shift(op, attrs, ndim - 1 - axis)
        multiply = nn.make("nn.multiply", [data, scale_value])
        add = nn.make("nn.add", [multiply, shift_value])
        rewriter.replace(op, [*new_ops, multiply, add], [add.results[0], mean, var])
        for parameter in (gamma, beta, mean, var):
            erase_if_dead_constant(parameter, rewriter)

    @staticmethod
    def _constant_scale_shift(op: nn.BatchNormOp, attrs: dict, element) -> tuple[np.ndarray, np.ndarray]:
        _, gamma, beta, mean, var = (constant_value(v) for v in op.operands)
        scale = 1.0 / np.sqrt(var.astype(np.float64) + float(attrs["epsilon"]))
        if attrs["scale"]:
            scale = scale * gamma
        shift = -mean * scale
        if attrs["center"]:
            shift = shift + beta
        dtype = dtype_of(element)
        return scale.astype(dtype), shift.astype(dtype)

    @staticmethod
    def _graph_scale_shift(
        op: nn.BatchNormOp, attrs: dict, new_axes: int
    ) -> tuple[list[Operation], SSAValue, SSAValue]:
        """Relay's form for parameters that are not constants: nn ops on the parameters, then
        `expand_dims` so the per-channel vectors broadcast along the axis."""
        _, gamma, beta, mean, var = op.operands
        dtype = dtype_of(op.operands[0].type.get_element_type())
        ops: list[Operation] = []

        def emit(name: str, *operands) -> SSAValue:
            new = nn.make(name, list(operands))
            ops.append(new)
            return new.results[0]

        def scalar(value: float) -> SSAValue:
            new = nn.ConstantOp(np.array(value, dtype=dtype))
            ops.append(new)
            return new.results[0]

        std = emit("nn.sqrt", emit("nn.add", var, scalar(attrs["epsilon"])))
        scale = emit("nn.divide", gamma if attrs["scale"] else scalar(1.0), std)
        shift = emit("nn.multiply", emit("nn.negative", mean), scale)
        if attrs["center"]:
            shift = emit("nn.add", shift, beta)
        if new_axes:
            scale = _expand(ops, scale, new_axes)
            shift = _expand(ops, shift, new_axes)
        return ops, scale, shift


def _expand(ops: list[Operation], value: SSAValue, new_axes: int) -> SSAValue:
    new = nn.make("nn.expand_dims", [value], axis=1, num_newaxis=new_axes)
    ops.append(new)
    return new.results[0]


@register_xrelay_pass("simplify-inference", opt_level=0, required=("InferType",), infer_type_after=True)
@dataclass(frozen=True)
class SimplifyInference(PatternPass):
    """Rewrites every `nn.batch_norm` into `multiply`/`add` with per-channel scale and shift
    (Relay's SimplifyInference)."""

    pattern = BatchNormToMultiplyAdd
