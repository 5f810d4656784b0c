"""Linear-algebra ops: dense layers, their per-channel bias and batched matrix products.

Kernels: runtime/reference/nn_kernels/linear.py; lowerings: lowering/to_linalg/linear.py.
"""

from __future__ import annotations


from xdsl.dialects.builtin import TensorType as T
from xdsl.irdl import operand_def, result_def

from xrelay.dialects.infer import Shape, ShapeError, check_rank, fmt_shape, per_channel
from xrelay.dialects.attributes import bool_, int_
from xrelay.dialects.op_base import DataOp, LayoutRule, NNOp, nn_op

__all__ = ["BatchMatmulOp", "BiasAddOp", "DenseOp"]


def dense(shapes: list[Shape], a: dict) -> Shape:
    data, weight = shapes
    check_rank("weight", weight, 2)
    if len(data) < 1 or data[-1] != weight[1]:
        raise ShapeError(
            f"last dim of 'data' {fmt_shape(data)} must equal dim 1 of 'weight' {fmt_shape(weight)}"
        )
    if a["units"] is not None and a["units"] != weight[0]:
        raise ShapeError(f"units={a['units']} but 'weight' {fmt_shape(weight)} has {weight[0]} rows")
    return data[:-1] + (weight[0],)


def batch_matmul(shapes: list[Shape], a: dict) -> Shape:
    x, y = shapes
    check_rank("x", x, 3)
    check_rank("y", y, 3)
    bx, m, kx = (x[0], x[2], x[1]) if a["transpose_a"] else x
    by, n, ky = y if a["transpose_b"] else (y[0], y[2], y[1])
    if kx != ky:
        raise ShapeError(
            f"'x' {fmt_shape(x)} (transpose_a={a['transpose_a']}) and 'y' {fmt_shape(y)} "
            f"(transpose_b={a['transpose_b']}) disagree on the reduced size ({kx} vs {ky})"
        )
    if bx != by and 1 not in (bx, by):
        raise ShapeError(f"batch sizes of 'x' {fmt_shape(x)} and 'y' {fmt_shape(y)} differ and neither is 1")
    return (max(bx, by), m, n)


@nn_op(shape=dense, layout=LayoutRule.DENSE)
class DenseOp(DataOp):
    """data [.., K] x weight [N, K] -> [.., N]."""

    name = "nn.dense"
    weight = operand_def(T)
    units = int_()


@nn_op(shape=per_channel("bias"), layout=LayoutRule.CHANNEL_AXIS)
class BiasAddOp(DataOp):
    name = "nn.bias_add"
    bias = operand_def(T)
    axis = int_(1)


@nn_op(shape=batch_matmul, layout=LayoutRule.SENSITIVE)
class BatchMatmulOp(NNOp):
    """x [B, M, K] x y [B, N, K] -> [B, M, N] (y is [B, K, N] when transpose_b=False); a batch of 1 broadcasts."""

    name = "nn.batch_matmul"
    x = operand_def(T)
    y = operand_def(T)
    result = result_def(T)
    transpose_a = bool_(False)
    transpose_b = bool_(True)
