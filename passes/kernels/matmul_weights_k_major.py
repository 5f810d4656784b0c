"""`matmul-weights-k-major`: a matmul reading a constant weight transposed reads it stored k-major.

`nn.dense` (and ONNX's MatMul and Gemm through it) computes x * w^T with w stored (n, k), as TVM's
dense does; its lowering reads w through `(d1, d2)`:

    linalg.matmul indexing_maps = [(m, k), (n, k), (m, n)] ins(%x, %w : MxK, NxK)

When `w` is a dense constant, this pass gives the matmul a transposed copy, stored (k, n), and the
maps `[(m, k), (k, n), (m, n)]`: the same products, as a GEMM without a transposed operand. OpenBLAS's
sgemm runs that 10-45% faster for products of more than one row (measured single-threaded on
AVX-512 for 197x192x576, 197x768x192, 49x512x512), while a single row (a matrix-vector product, a
classifier's last layer at batch 1) runs faster transposed: matmuls with fewer than `min_rows` rows
are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from xrelay.dialects.constant import attr_numpy, dense_attr
from xrelay.dialects.upstream_contractions import MatmulOp
from xrelay.instrument.statistics import Statistic
from xrelay.lowering.to_linalg.linear import contraction_maps
from xrelay.pass_base import REWRITES, XRelayPass, register_xrelay_pass, rewrite_module

TRANSPOSED = Statistic("num-weights-k-major", "Number of matmuls given a k-major copy of their constant weight")

N_MAJOR, K_MAJOR = contraction_maps("mk", "nk", "mn"), contraction_maps("mk", "kn", "mn")


@dataclass
class WeightKMajor(RewritePattern):
    min_rows: int
    copies: dict[arith.ConstantOp, arith.ConstantOp] = field(default_factory=dict)
    """The k-major copy of each constant, made once for all the matmuls reading it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MatmulOp, rewriter: PatternRewriter) -> None:
        weight = op.inputs[1]
        constant = weight.owner
        if op.indexing_maps != N_MAJOR or not isinstance(constant, arith.ConstantOp) \
                or not isinstance(constant.value, DenseIntOrFPElementsAttr) or not isinstance(weight.type, TensorType):
            return
        rows = op.inputs[0].type.get_shape()[0]
        if rows < self.min_rows:
            return
        k_major = self.copies.get(constant)
        if k_major is None:
            n, k = weight.type.get_shape()
            array = np.ascontiguousarray(attr_numpy(constant.value).reshape(n, k).T)
            k_major = self.copies[constant] = arith.ConstantOp(dense_attr(array), TensorType(weight.type.element_type, [k, n]))
            rewriter.insert(k_major, InsertPoint.after(constant))
        rewriter.replace(op, MatmulOp([op.inputs[0], k_major.result], list(op.outputs), [r.type for r in op.results],
                                         indexing_maps=K_MAJOR))
        if not constant.result.uses:
            rewriter.erase(constant)
            del self.copies[constant]
        TRANSPOSED.add()


@register_xrelay_pass("matmul-weights-k-major", opt_level=0, statistics=(TRANSPOSED, REWRITES))
@dataclass(frozen=True)
class MatmulWeightsKMajor(XRelayPass):
    """Give each matmul of at least `min_rows` rows reading a constant (n, k) weight transposed a
    (k, n) copy of it and untransposed maps."""

    min_rows: int = 2

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_module(WeightKMajor(self.min_rows), op)
