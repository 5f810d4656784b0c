"""`whole-window-as-reduction`: a pool whose one window covers its whole input is a plain reduction.

Upstream (torch-mlir) writes a global average pool as a pool whose window is the image:
`linalg.pooling_nchw_sum` over a 1x1 output, read through `oh * s + kh` with `oh` always 0; xrelay's
own lowering writes a reduction over bare loops, which the executor runs as one `ufunc.reduce` where
a window is folded tap by tap. This pass writes the first as the second, for any structured op read
from its indexing maps:

    %g = linalg.generic {maps = [(n, c, oh, ow, kh, kw) -> (n, oh + kh, ow + kw, c),
                                 (n, c, oh, ow, kh, kw) -> (kh, kw),
                                 (n, c, oh, ow, kh, kw) -> (n, oh, ow, c)]}
           ins(%x, %window : tensor<1x4x4x64xf32>, tensor<4x4xf32>) outs(%init : tensor<1x1x1x64xf32>)
    ->
    %g = linalg.generic {maps = [(n, kh, kw, c) -> (n, kh, kw, c), (n, kh, kw, c) -> (n, 0, 0, c)],
                         iterator_types = [parallel, reduction, reduction, parallel]}
           ins(%x : tensor<1x4x4x64xf32>) outs(%init : tensor<1x1x1x64xf32>)

An op is rewritten when replacing by 0 its parallel loops of extent 1 that inputs read inside compound
results (a window's `oh * s + kh`) turns such results into bare loops, each over its operand's whole
axis (a window over part of an image stays a window); those loops are replaced by 0 and dropped (a loop of extent 1 only takes that value, so the op computes the same elements), an
input its body does not read is dropped when the remaining operands still give every loop's extent,
and the loops are renumbered in the order of the first input's axes when its map is a permutation of
them. A body reading a loop index (`linalg.index`) is left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import tensor
from xdsl.dialects.builtin import AffineMapAttr, ModuleOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation as Structured
from xdsl.ir import Operation
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from xrelay.instrument.statistics import Statistic
from xrelay.pass_base import REWRITES, XRelayPass, register_xrelay_pass, rewrite_module

WHOLE_WINDOWS = Statistic("num-whole-windows", "Number of whole-input windows made plain reductions")


def window_loops(op: Structured) -> list[int]:
    """The parallel loops of `op` of static extent 1 that an input's map reads inside a compound
    result (a window's `oh * s + kh`)."""
    ranges = op.get_static_loop_ranges()
    iterators = [str(it.data) for it in op.get_iterator_types()]
    inside = {d for attr in op.get_indexing_maps().data[:len(op.inputs)] for e in attr.data.results
              if not isinstance(e, AffineDimExpr) for d in e.used_dims()}
    return sorted(d for d in inside if iterators[d] == "parallel" and ranges[d] == 1)


def without_loops(m: AffineMap, dropped: list[int], num_dims: int) -> AffineMap:
    """`m` with the loops `dropped` replaced by 0 and the others renumbered in order (simplified)."""
    kept = [d for d in range(num_dims) if d not in dropped]
    replacements = [AffineConstantExpr(0) if d in dropped else AffineExpr.dimension(kept.index(d))
                    for d in range(num_dims)]
    return m.replace_dims_and_symbols(replacements, [], len(kept), 0)


def opens_whole_windows(op: Structured, dropped: list[int]) -> bool:
    """Whether dropping `dropped` turns a compound result of an input's map into a bare loop, and each
    result it so turns reads its operand's whole axis (the window is the whole input)."""
    n, ranges = op.get_num_loops(), op.get_static_loop_ranges()
    kept = [d for d in range(n) if d not in dropped]
    opened = False
    for value, attr in zip(op.inputs, op.get_indexing_maps().data, strict=False):
        shape = value.type.get_shape()
        after = without_loops(attr.data, dropped, n)
        for axis, (b, a) in enumerate(zip(attr.data.results, after.results, strict=True)):
            if not isinstance(b, AffineDimExpr) and isinstance(a, AffineDimExpr):
                if shape[axis] != ranges[kept[a.position]]:
                    return False
                opened = True
    return opened


def sized_without(maps: list[AffineMap], operands: list, skip: int, ranges: list[int]) -> bool:
    """Whether the operands other than `skip` read every loop bare through an axis of its extent."""
    sizes = {}
    for i, (m, value) in enumerate(zip(maps, operands, strict=True)):
        if i != skip:
            for e, n in zip(m.results, value.type.get_shape(), strict=True):
                if isinstance(e, AffineDimExpr):
                    sizes.setdefault(e.position, set()).add(n)
    return all(sizes.get(d) == {n} for d, n in enumerate(ranges))


class WholeWindowToReduction(RewritePattern):
    """Rewrites an op whose unit parallel loops make a window the whole input (module docstring)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, Structured) or not op.results or len(op.outputs) != 1:
            return
        if any(isinstance(inner, linalg.IndexOp) for inner in op.body.walk()):
            return
        dropped = window_loops(op)
        if not dropped or not opens_whole_windows(op, dropped):
            return
        n = op.get_num_loops()
        maps = [without_loops(m.data, dropped, n) for m in op.get_indexing_maps().data]
        iterators = [it for d, it in enumerate(op.get_iterator_types()) if d not in dropped]
        operands = list(op.operands)
        region = op.body.clone()
        block = region.block
        n_in = len(op.inputs)
        ranges = [n for d, n in enumerate(op.get_static_loop_ranges()) if d not in dropped]
        for i in reversed(range(n_in)):  # inputs the body does not read, while the loops stay sized
            if not block.args[i].uses and sized_without(maps, operands, i, ranges):
                del operands[i], maps[i]
                block.erase_arg(block.args[i])
                n_in -= 1
        order = first_input_order(maps[0], len(iterators)) if n_in else None
        if order is not None:
            renamed = [AffineExpr.dimension(order.index(d)) for d in range(len(order))]
            maps = [m.replace_dims_and_symbols(renamed, [], len(order), 0) for m in maps]
            iterators = [iterators[d] for d in order]
        new = linalg.GenericOp(operands[:n_in], operands[n_in:], region, [AffineMapAttr(m) for m in maps],
                               iterators, [r.type for r in op.results])
        rewriter.insert(new, InsertPoint.before(op))
        for old, result in zip(op.results, new.results, strict=True):
            result.name_hint = old.name_hint
            rewriter.replace_all_uses_with(old, result)
        shapes = {v.owner for v in op.inputs} - {v.owner for v in operands}
        rewriter.erase(op)
        for empty in shapes:  # a dropped window's shape operand, read by nothing else now
            if isinstance(empty, tensor.EmptyOp) and not empty.results[0].uses:
                rewriter.erase(empty)
        WHOLE_WINDOWS.add()


def first_input_order(m: AffineMap, num_loops: int) -> list[int] | None:
    """The loops in the order `m` (the first input's map) reads them, when it reads each once bare."""
    if len(m.results) != num_loops or not all(isinstance(e, AffineDimExpr) for e in m.results):
        return None
    order = [e.position for e in m.results]
    return order if sorted(order) == list(range(num_loops)) else None


@register_xrelay_pass("whole-window-as-reduction", opt_level=0, statistics=(WHOLE_WINDOWS, REWRITES))
@dataclass(frozen=True)
class WholeWindowAsReduction(XRelayPass):
    """Make each pool whose one window covers its whole input a plain reduction."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_module(WholeWindowToReduction(), op, apply_recursively=False)
