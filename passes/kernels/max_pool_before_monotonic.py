"""`max-pool-before-monotonic`: elementwise ops that never decrease, in front of a max pool, run after it.

The linalg-level counterpart of the graph pass `max-pool-first` (passes/max_pool_first.py), for linalg
that has no nn level (upstream's: torch-mlir's pipelines). A max pool picks each window's largest
input; an elementwise f that never decreases in that input, and whose other operands are the same
across a window, keeps the order, so `max(f(window))` is `f(max(window))`, and f then runs over the
pool's output, `stride_h * stride_w` times smaller. Where a 1x1 convolution's bias and ReLU sit in front
of a stride-2 pool, the convolution's kernel writes the pool's input alone and the two ops join the
pool's kernel over a quarter of the elements, as they do on xrelay's own lowering:

    %c = conv(...)                              %c = conv(...)
    %b = generic ins(%c, %bias) { addf }        %p = tensor.pad %c low[...] { -inf }
    %r = generic ins(%b) { maximumf(x, 0) }  -> %m = pool(%p) { maximumf(acc, x) } init fill(-inf)
    %p = tensor.pad %r low[...] { -inf }        %b = generic ins(%m, %bias) { addf }
    %m = pool(%p) { maximumf(acc, x) }          %r = generic ins(%b) { maximumf(x, 0) }

Read from the IR, not from op names:

- a **pool** is a structured op with one output and a reduction loop whose body yields
  `combine(acc, x)` (`combine` a float max or min: maximumf, maxnumf, minimumf, minnumf), `x` one
  input's element read through windows (results like `oh * s + kh`) on some axes and bare loops
  shared with the output on the others, in the output's axis order; its init a fill of `combine`'s
  identity (-inf for a max); it may read its input through a `tensor.pad` by that identity;
- **f** is an all-parallel structured op with one output, reading its data through the output's map
  (a permutation of its loops), its other inputs through maps that do not use the loops of the
  pooled axes (a per-channel bias), no `linalg.index`, no op with regions and not its output; its body's yield never
  decreases in the data (`non_decreasing`): built from the data by addf, subf of a value not
  depending on it, max/min, mulf by a constant >= 0, divf by a constant > 0, and exp, tanh, erf,
  atan, cbrt.

f's result must be read only by the pool (or its pad), and every window must hold at least one
element of f's result (a window of padding alone gives the identity, which f would change). A min
pool commutes with f alike. Moved ops are taken one at a time from the pool's input backwards.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, math, tensor
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, ModuleOp, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation as Structured
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from xrelay.dialects.constant import attr_numpy
from xrelay.dialects.upstream_tensor_ops import EmptyOp
from xrelay.instrument.statistics import Statistic
from xrelay.pass_base import REWRITES, XRelayPass, register_xrelay_pass, rewrite_module

MOVED = Statistic("num-moved-after-pool", "Number of elementwise ops moved from in front of a max/min pool to after it")

EXTREMA = {arith.MaximumfOp: float("-inf"), arith.MaxnumfOp: float("-inf"),
           arith.MinimumfOp: float("inf"), arith.MinnumfOp: float("inf")}
"""A pool's combining op -> its identity (what its init is filled with and its padding reads)."""

COMBINING = (arith.AddfOp, arith.MaximumfOp, arith.MinimumfOp, arith.MaxnumfOp, arith.MinnumfOp)
"""Ops that never decrease when any operand grows."""
INCREASING = (math.ExpOp, math.Exp2Op, math.ExpM1Op, math.TanhOp, math.ErfOp, math.AtanOp, math.CbrtOp)
"""One-operand functions that never decrease, defined everywhere."""

INC, CONST = "non-decreasing", "constant"


def non_decreasing(value: SSAValue, data: BlockArgument, block) -> str | None:
    """INC when `value` (in the body `block`) never decreases as `data` grows, CONST when it does
    not depend on `data` (per loop iteration), None otherwise."""
    if value is data:
        return INC
    owner = value.owner
    if not isinstance(owner, Operation) or owner.parent_block() is not block:
        return CONST  # another input's element, or a value the body captures
    kinds = [non_decreasing(v, data, block) for v in owner.operands]
    if None in kinds:
        return None
    if all(k == CONST for k in kinds):
        return CONST
    if isinstance(owner, COMBINING + INCREASING):
        return INC
    if isinstance(owner, arith.SubfOp):
        return INC if kinds[1] == CONST else None
    if isinstance(owner, arith.MulfOp | arith.DivfOp):
        other = 1 if kinds[0] == INC else 0
        if kinds[other] != CONST or (isinstance(owner, arith.DivfOp) and other == 0):
            return None
        sign = constant_values(owner.operands[other], block)
        if sign is None:
            return None
        return INC if (np.all(sign >= 0) if isinstance(owner, arith.MulfOp) else np.all(sign > 0)) else None
    return None


def constant_values(value: SSAValue, block) -> np.ndarray | None:
    """The values `value` takes, when it is an `arith.constant` or the element of an input that is
    a dense constant; else None."""
    if isinstance(value, BlockArgument) and value.block is block:
        structured = block.parent_op()
        if value.index >= len(structured.inputs):
            return None
        value = structured.inputs[value.index]
        owner = value.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, DenseIntOrFPElementsAttr):
            return np.asarray(attr_numpy(owner.value), dtype=np.float64)
        return None
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr):
        return np.asarray(owner.value.value.data, dtype=np.float64)
    return None


def pool_combine(op: Operation) -> tuple[int, float] | None:
    """(index of the windowed input, identity of the combine) when `op` is a pool (module
    docstring) whose init is a fill of that identity; else None."""
    if not isinstance(op, Structured) or len(op.outputs) != 1 or len(op.results) != 1:
        return None
    iterators = [str(it.data) for it in op.get_iterator_types()]
    if "reduction" not in iterators:
        return None
    block = op.body.block
    combined = block.last_op.operands[0]
    combine = combined.owner
    acc = block.args[len(op.inputs)]
    if type(combine) not in EXTREMA or acc not in combine.operands:
        return None
    x = combine.operands[1] if combine.operands[0] is acc else combine.operands[0]
    if not isinstance(x, BlockArgument) or x.block is not block or x.index >= len(op.inputs):
        return None
    identity = EXTREMA[type(combine)]
    fill = op.outputs[0].owner
    if not (isinstance(fill, linalg.FillOp) and fill_value(fill.inputs[0]) == identity):
        return None
    maps = [m.data for m in op.get_indexing_maps()]
    if windowed_axes(maps[x.index], maps[-1], iterators) is None:
        return None
    return x.index, identity


def fill_value(value: SSAValue) -> float | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr):
        return owner.value.value.data
    return None


def windowed_axes(data: AffineMap, out: AffineMap, iterators: list[str]) -> list[int] | None:
    """The axes a pool reads through windows, when its data map `data` and output map `out` have one
    result per axis, axis for axis: a bare parallel loop on both, or on `data` a window over the
    output's parallel loop (and reduction loops); else None."""
    if len(data.results) != len(out.results) or not all(isinstance(e, AffineDimExpr) for e in out.results):
        return None
    windowed = []
    for axis, (read, written) in enumerate(zip(data.results, out.results, strict=True)):
        if isinstance(read, AffineDimExpr):
            if read.position != written.position:
                return None
            continue
        loops = read.used_dims()
        if written.position not in loops or any(
                iterators[d] != "reduction" for d in loops if d != written.position):
            return None
        windowed.append(axis)
    return windowed or None


def windows_reach(pool: Structured, data_index: int, low: list[int], size: list[int]) -> bool:
    """Whether every window of `pool` over its input (`low` padding before `size` elements, per
    axis) holds at least one element that is not padding."""
    maps = [m.data for m in pool.get_indexing_maps()]
    iterators = [str(it.data) for it in pool.get_iterator_types()]
    ranges = pool.get_static_loop_ranges()
    dims = [0] * len(ranges)
    for axis in windowed_axes(maps[data_index], maps[-1], iterators):
        expr = maps[data_index].results[axis]
        loops = sorted(expr.used_dims())
        outer = [d for d in loops if iterators[d] == "parallel"]
        inner = [d for d in loops if iterators[d] == "reduction"]
        for at in itertools.product(*(range(ranges[d]) for d in outer)):
            for d, i in zip(outer, at, strict=True):
                dims[d] = i
            if not any(low[axis] <= _eval(expr, dims, inner, taps) < low[axis] + size[axis]
                       for taps in itertools.product(*(range(ranges[d]) for d in inner))):
                return False
    return True


def _eval(expr, dims: list[int], inner: list[int], taps: tuple[int, ...]) -> int:
    for d, i in zip(inner, taps, strict=True):
        dims[d] = i
    return expr.eval(dims, [])


def movable(f: Operation, pooled: list[int]) -> int | None:
    """The index of `f`'s data input when `f` is an elementwise op that may run after a pool over
    the axes `pooled` of its result (module docstring); else None."""
    if not isinstance(f, Structured) or len(f.outputs) != 1 or len(f.results) != 1:
        return None
    if any(str(it.data) != "parallel" for it in f.get_iterator_types()):
        return None
    maps = [m.data for m in f.get_indexing_maps()]
    out = maps[-1]
    if out.inverse_permutation() is None or len(out.results) != out.num_dims:
        return None
    pooled_loops = {out.results[axis].position for axis in pooled}
    block = f.body.block
    if any(isinstance(inner, linalg.IndexOp) or inner.regions for inner in block.ops) or block.args[len(f.inputs)].uses:
        return None  # a loop index differs after the pool; `non_decreasing` does not look into regions
        return None
    readers = [i for i, m in enumerate(maps[:len(f.inputs)]) if m.used_dims() & pooled_loops]
    if len(readers) != 1 or maps[readers[0]] != out or f.inputs[readers[0]].type != f.results[0].type:
        return None
    if non_decreasing(block.last_op.operands[0], block.args[readers[0]], block) != INC:
        return None
    return readers[0]


class MonotonicAfterPool(RewritePattern):
    """Moves the elementwise ops that never decrease from in front of a max or min pool to after it,
    nearest first (module docstring)."""

    def match_and_rewrite(self, pool: Operation, rewriter: PatternRewriter) -> None:
        while (found := pool_combine(pool)) is not None:
            data_index, identity = found
            source = pool.inputs[data_index]
            pad = source.owner if isinstance(source.owner, tensor.PadOp) else None
            if pad is not None and not (source.has_one_use() and padded_with(pad, identity)):
                return
            value = pad.source if pad is not None else source
            f = value.owner
            if not (isinstance(value.type, TensorType) and value.has_one_use() and isinstance(f, Operation)
                    and f.parent_block() is pool.parent_block()):
                return
            maps = [m.data for m in pool.get_indexing_maps()]
            pooled = windowed_axes(maps[data_index], maps[-1], [str(it.data) for it in pool.get_iterator_types()])
            data_input = movable(f, pooled)
            if data_input is None:
                return
            shape = value.type.get_shape()
            low = pad.static_low.get_values() if pad is not None else [0] * len(shape)
            if not windows_reach(pool, data_index, list(low), list(shape)):
                return
            reader, index = (pad, 0) if pad is not None else (pool, data_index)
            reader.operands[index] = f.inputs[data_input]
            rewriter.handle_operation_modification(reader)
            self.move_after(f, data_input, pool, rewriter)

    @staticmethod
    def move_after(f: Structured, data_input: int, pool: Structured, rewriter: PatternRewriter) -> None:
        """A copy of `f` reading `pool`'s result in place of its data input, in place of `pool`'s uses."""
        pooled = pool.results[0]
        empty = EmptyOp([], pooled.type)
        inputs = [pooled if i == data_input else v for i, v in enumerate(f.inputs)]
        moved = linalg.GenericOp(inputs, [empty.results[0]], f.body.clone(), list(f.get_indexing_maps()),
                                 list(f.get_iterator_types()), [pooled.type])
        moved.results[0].name_hint = f.results[0].name_hint
        rewriter.insert([empty, moved], InsertPoint.after(pool))
        rewriter.replace_uses_with_if(pooled, moved.results[0], lambda use: use.operation is not moved)
        init = f.outputs[0].owner
        rewriter.erase(f)
        if isinstance(init, tensor.EmptyOp) and not init.results[0].uses:
            rewriter.erase(init)
        MOVED.add()


def padded_with(pad: tensor.PadOp, identity: float) -> bool:
    """Whether `pad` has static widths and yields the constant `identity`."""
    return not pad.low and not pad.high and fill_value(pad.region.block.last_op.operands[0]) == identity


@register_xrelay_pass("max-pool-before-monotonic", opt_level=3, statistics=(MOVED, REWRITES))
@dataclass(frozen=True)
class MaxPoolBeforeMonotonic(XRelayPass):
    """Move elementwise ops that never decrease from in front of every max (or min) pool to after it."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_module(MonotonicAfterPool(), op, apply_recursively=False)
