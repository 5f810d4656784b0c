"""A reduction over windows of an elementwise function of its input (LRN's sum of `x * x` over a
channel window) runs as the function applied once over the input then shifted-slice window sums
(runtime/window_reduce.window_program), against numpy written here: LRN
along a middle axis (NCHW channels) and the last axis (NHWC), odd sizes and even window sizes (the
zero pad clipped unevenly), a strided/dilated window with an offset; the path checked on the compiled op."""

import numpy as np
import pytest
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, math
from xdsl.dialects.linalg import attrs as linalg_attrs
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import FloatAttr, TensorType, f32, i64
from xdsl.dialects.test import TestOp as Producer
from xdsl.ir import Block, Region
from xdsl.ir.affine import AffineExpr, AffineMap

from xrelay.dialects import nn
from xrelay.frontend import GraphBuilder
from xrelay.lowering import lower
from xrelay.runtime.kernels import linalg_structured
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.kernels.window_reduce import window_program

RNG = np.random.default_rng(47)


def lrn_numpy(x, size, axis, bias, alpha, beta):
    """ONNX LRN by a loop over the window: channel c sums squares over [c - (size-1)//2, c + size-1-(size-1)//2]."""
    x64 = x.astype(np.float64)
    n = x.shape[axis]
    before = (size - 1) // 2
    total = np.zeros_like(x64)
    for c in range(n):
        lo, hi = max(0, c - before), min(n, c + size - before)
        window = np.take(x64, np.arange(lo, hi), axis=axis)
        index = [slice(None)] * x.ndim
        index[axis] = c
        total[tuple(index)] = (window * window).sum(axis=axis)
    return x64 / (bias + alpha / size * total) ** beta


def window_sums(module) -> list:
    return [op for op in module.walk() if isinstance(op, linalg_structured.Structured)
            and any(str(it.data) == "reduction" for it in op.get_iterator_types())]


@pytest.mark.parametrize("shape, axis, size", [((1, 7, 5, 6), 1, 5), ((2, 9, 3, 4), 1, 3), ((1, 5, 6, 11), 3, 5),
                                               ((2, 3, 3, 4), 3, 4), ((1, 1, 1, 3), 3, 5), ((1, 2, 1, 1), 1, 5)])
def test_lrn_matches_numpy(shape, axis, size):
    attrs = dict(size=size, axis=axis, bias=1.0, alpha=0.5, beta=0.75)
    b = GraphBuilder(None)
    module = lower(b.finish(b.op(nn.LRNOp, b.param("data", shape), **attrs)), to="linalg")
    program = LinalgProgram(module)
    for scale in (1.0, -2.5):  # again on the same planned buffers (the per-thread mapped buffer too)
        x = RNG.standard_normal(shape).astype(np.float32) * np.float32(scale)
        np.testing.assert_allclose(program(x)[0], lrn_numpy(x, size, axis, 1.0, 0.5, 0.75), rtol=1e-5, atol=1e-6)
    (op,) = window_sums(module)
    maps = [m.data for m in op.get_indexing_maps()]
    reduction = [i for i, it in enumerate(op.get_iterator_types()) if str(it.data) == "reduction"]
    taken = window_program(op, maps, op.get_static_loop_ranges(), reduction, [])
    assert taken is not None
    compiled = linalg_structured.compile_structured(op, [False])
    assert compiled.__name__ == "first_or_run"  # the window program first, the general path if it cannot


def test_mapped_window_strided_dilated_offset_and_accumulating():
    """out[n, i, j] (+)= sum over k of exp(0.5 * x[n, 2i + 2k + 1, j]): a window along a middle axis with
    stride, dilation and offset, a body with a constant and a math op (a generic built here), by hand loops."""
    n, i, j, k = (AffineExpr.dimension(d) for d in range(4))
    maps = [AffineMap(4, 0, (n, i * 2 + k * 2 + 1, j)), AffineMap(4, 0, (k,)), AffineMap(4, 0, (n, i, j))]
    ranges = (2, 3, 5, 3)
    block = Block(arg_types=[f32, f32, f32])
    with ImplicitBuilder(block):
        half = arith.ConstantOp(FloatAttr(0.5, f32))
        e = math.ExpOp(arith.MulfOp(block.args[0], half.result).result)
        linalg.YieldOp(arith.AddfOp(block.args[2], e.result).result)
    types = (TensorType(f32, [2, 12, 5]), TensorType(f32, [3]), TensorType(f32, [2, 3, 5]))
    operands = [Producer(result_types=[t]).res[0] for t in types]
    op = linalg.GenericOp(operands[:2], [operands[2]], Region(block), maps,
                          [linalg_attrs.IteratorTypeAttr.parallel()] * 3 + [linalg_attrs.IteratorTypeAttr.reduction()], [types[2]])
    x = RNG.standard_normal((2, 12, 5)).astype(np.float32)
    for accumulate in (False, True):
        run = window_program(op, maps, ranges, [3], [not accumulate])
        assert run is not None
        target = RNG.standard_normal((2, 3, 5)).astype(np.float32)
        want = target.astype(np.float64) if accumulate else np.zeros((2, 3, 5))
        for b, p, q in np.ndindex(2, 3, 5):
            want[b, p, q] += sum(np.exp(0.5 * float(x[b, 2 * p + 2 * t + 1, q])) for t in range(3))
        assert run([x, np.empty(3, np.float32), target])
        np.testing.assert_allclose(target, want, rtol=1e-5, atol=1e-6)
    # A body reading the loop index (not a function of the element alone) keeps the general path.
    block = Block(arg_types=[f32, f32, f32])
    with ImplicitBuilder(block):
        index = arith.IndexCastOp(linalg.IndexOp(3).result, i64)
        value = arith.MulfOp(block.args[0], arith.SIToFPOp(index.result, f32).result)
        linalg.YieldOp(arith.AddfOp(block.args[2], value.result).result)
    indexed = linalg.GenericOp(operands[:2], [operands[2]], Region(block), maps,
                               [linalg_attrs.IteratorTypeAttr.parallel()] * 3 + [linalg_attrs.IteratorTypeAttr.reduction()],
                               [types[2]])
    assert window_program(indexed, maps, ranges, [3], []) is None
