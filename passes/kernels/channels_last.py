"""`channels-last`: images that channels-first windowed ops read or write are stored channels last.

Upstream's linalg (torch-mlir's) keeps PyTorch's NCHW; xrelay's own frontend converts to NHWC at the
graph level (`convert-layout`), which its CPU kernels run fastest: a depthwise convolution's einsum
and a pool's taps then run along contiguous channels, a convolution's im2col copies runs of them. On
linalg nothing converts, so this pass does it there, over ops read from their indexing maps:

- a **seed** is a structured op with a reduction loop reading a 4-D input through windows on axes 2
  and 3 (`oh * s + kh`) and single loops on axes 0 and 1: a channels-first convolution, depthwise
  convolution or pool;
- the 4-D values of static shape made by structured ops, `tensor.empty`, `tensor.concat` and
  `tensor.pad` (by a constant) form groups: the inputs, outputs and results of each structured op,
  and the operands and result of each pad and concat, are one group. Every value of a group holding a seed's data or output is
  stored with its axes `(0, 2, 3, 1)` (NCHW -> NHWC).

Every structured op reading or writing a stored value becomes a `linalg.generic` with the same body
and loops whose maps of those operands have their results permuted alike (so it computes the same
elements, from and into the other layout); a pad has its widths permuted, a concat its axis, an empty
its shape. An op
that reads a stored value and is none of these (a reshape, a return) reads a `linalg.transpose` of
it back; a pad, concat or structured op writing a stored value from an operand that is not stored (a function
argument) reads a transpose of that operand, as does a seed reading an image that is not stored through
its windows. A seed's dense constant operand (a weight) gets a transposed copy whose axes indexed by
the output's loops come last, in the output's order (a depthwise weight (c, kh, kw) becomes
(kh, kw, c), as xrelay's lowering writes it: the kernels' vector loop runs along the channels). An all-parallel op whose
output map is a permutation of its loops has its loops renumbered so that map is the identity, as
xrelay's lowering writes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xdsl.context import Context
from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import AffineMapAttr, DenseArrayBase, DenseIntOrFPElementsAttr, ModuleOp, TensorType, i64
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation as Structured
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap
from xdsl.rewriter import InsertPoint, Rewriter

from xrelay.dialects.constant import attr_numpy, dense_attr
from xrelay.dialects.upstream_tensor_ops import EmptyOp, PadOp
from xrelay.instrument.statistics import Statistic
from xrelay.pass_base import XRelayPass, register_xrelay_pass

STORED = Statistic("num-stored-channels-last", "Number of 4-D values stored channels last")
TRANSPOSES = Statistic("num-layout-transposes", "Number of transposes in or out of channels-last values")

TO_LAST = (0, 2, 3, 1)
"""Axis i of a stored value is axis TO_LAST[i] of the channels-first one."""
TO_FIRST = (0, 3, 1, 2)
"""Axis i of the channels-first value is axis TO_FIRST[i] of the stored one."""


def is_seed(op: Operation) -> bool:
    """Whether `op` is a channels-first windowed structured op (see the module docstring)."""
    if not isinstance(op, Structured) or len(op.outputs) != 1 or not op.results:
        return False
    if not any(str(it.data) == "reduction" for it in op.get_iterator_types()) or not is_image(op.results[0]):
        return False
    return any(channels_first_window(m.data) for m in op.get_indexing_maps().data[:len(op.inputs)])


def channels_first_window(m: AffineMap) -> bool:
    """Whether `m` reads a 4-D operand through single loops on axes 0 and 1 and windows on axes 2 and 3."""
    results = m.results
    return (len(results) == 4 and all(isinstance(e, AffineDimExpr) for e in results[:2])
            and not any(isinstance(e, AffineDimExpr) for e in results[2:]))


def is_image(value: SSAValue) -> bool:
    """Whether `value` is a 4-D tensor of static shape."""
    shaped = value.type
    return isinstance(shaped, TensorType) and shaped.get_num_dims() == 4 and all(n >= 0 for n in shaped.get_shape())


def constant_pad(op: Operation) -> bool:
    """Whether `op` is a `tensor.pad` with static widths by a value its body does not compute."""
    if not isinstance(op, tensor.PadOp) or op.low or op.high:
        return False
    block = op.region.block
    return all(isinstance(inner, arith.ConstantOp) or inner is block.last_op for inner in block.ops) and not any(
        arg is block.last_op.operands[0] for arg in block.args)


def makes_images(op: Operation) -> bool:
    """Whether `op` is one whose 4-D results may be stored channels last."""
    return isinstance(op, Structured | tensor.EmptyOp | tensor.ConcatOp) or constant_pad(op)


class _Groups:
    """Union-find over SSA values."""

    def __init__(self):
        self.parent: dict[SSAValue, SSAValue] = {}

    def find(self, value: SSAValue) -> SSAValue:
        root = value
        while self.parent.get(root, root) is not root:
            root = self.parent[root]
        self.parent[value] = root
        return root

    def union(self, values: list[SSAValue]) -> None:
        for other in values[1:]:
            self.parent[self.find(other)] = self.find(values[0])


def stored_values(block) -> set[SSAValue]:
    """The values of `block` to store channels last."""
    groups, candidates, seeds = _Groups(), set(), []
    for op in block.ops:
        if not makes_images(op):
            continue
        images = [r for r in op.results if is_image(r)]
        candidates.update(images)
        if isinstance(op, Structured):
            linked = [v for v in op.operands if is_image(v) and makes_images(v.owner)] + images
            groups.union(linked)
            if is_seed(op):
                seeds += linked
        elif isinstance(op, tensor.PadOp | tensor.ConcatOp) and images:
            groups.union([*images, *(v for v in op.operands if makes_images(v.owner))])
    roots = {groups.find(v) for v in seeds if v in candidates}
    return {v for v in candidates if groups.find(v) in roots}


def permuted(m: AffineMap, order: tuple[int, ...]) -> AffineMap:
    return AffineMap(m.num_dims, m.num_symbols, tuple(m.results[a] for a in order))


def permuted_type(shaped: TensorType, order: tuple[int, ...]) -> TensorType:
    shape = shaped.get_shape()
    return TensorType(shaped.get_element_type(), [shape[a] for a in order])


class _Rewrite:
    """Rebuilds one block's ops over the stored values."""

    def __init__(self, stored: set[SSAValue]):
        self.stored = stored
        self.new: dict[SSAValue, SSAValue] = {}
        self.rebuilt: list[Operation] = []
        self.transposed: dict[SSAValue, SSAValue] = {}

    def operand(self, value: SSAValue, before: Operation) -> SSAValue:
        """`value` channels last: its new value, or a transpose of it made before `before` (the first
        op of the block that reads it so: one transpose serves them all)."""
        if value in self.new:
            return self.new[value]
        if value not in self.transposed:
            init = EmptyOp([], permuted_type(value.type, TO_LAST))
            transpose = linalg.TransposeOp(value, init.results[0], DenseArrayBase.from_list(i64, TO_LAST))
            Rewriter.insert_op([init, transpose], InsertPoint.before(before))
            TRANSPOSES.add()
            self.transposed[value] = transpose.results[0]
        return self.transposed[value]

    def rebuild(self, op: Operation) -> None:
        if isinstance(op, tensor.EmptyOp):
            new = EmptyOp([], permuted_type(op.results[0].type, TO_LAST))
        elif isinstance(op, tensor.PadOp):
            new = PadOp(self.operand(op.source, op), [], [], op.detach_region(op.region),
                        [op.static_low.get_values()[a] for a in TO_LAST],
                        [op.static_high.get_values()[a] for a in TO_LAST], permuted_type(op.result.type, TO_LAST))
        elif isinstance(op, tensor.ConcatOp):
            new = tensor.ConcatOp([self.operand(v, op) for v in op.inputs], TO_LAST.index(op.dim.value.data),
                                  permuted_type(op.result.type, TO_LAST))
        elif isinstance(op, linalg.FillOp) and op.results[0] in self.stored:
            new = linalg.FillOp(list(op.inputs), [self.operand(op.outputs[0], op)],
                                [permuted_type(op.results[0].type, TO_LAST)])
        else:
            new = self.generic(op)
        Rewriter.insert_op(new, InsertPoint.before(op))
        for old, result in zip(op.results, new.results, strict=True):
            if old in self.stored:
                self.new[old] = result
                STORED.add()
            else:
                old.replace_all_uses_with(result)
        self.rebuilt.append(op)

    def generic(self, op: Structured) -> linalg.GenericOp:
        n_in = len(op.inputs)
        maps = [m.data for m in op.get_indexing_maps().data]
        operands = []
        seed = is_seed(op)
        for i, value in enumerate(op.operands):
            moved = (value in self.new or (i >= n_in and op.results[i - n_in] in self.stored)
                     or seed and i < n_in and is_image(value) and channels_first_window(maps[i]))
            if moved:
                operands.append(self.operand(value, op))
                maps[i] = permuted(maps[i], TO_LAST)
            elif seed and i < n_in and (weight := outputs_last(value, maps[i], maps[n_in:])) is not None:
                order, constant = weight
                Rewriter.insert_op(constant, InsertPoint.before(op))
                operands.append(constant.result)
                maps[i] = permuted(maps[i], order)
            else:
                operands.append(value)
        iterators = list(op.get_iterator_types())
        region = op.body.clone()
        loops = loop_order(maps, iterators, region, n_in)
        if loops is not None:
            renamed = [AffineExpr.dimension(loops.index(d)) for d in range(len(loops))]
            maps = [m.replace_dims_and_symbols(renamed, [], len(loops), 0) for m in maps]
            iterators = [iterators[d] for d in loops]
        return linalg.GenericOp(operands[:n_in], operands[n_in:], region, [AffineMapAttr(m) for m in maps],
                                iterators, [v.type for v in operands[n_in:]] if op.results else [])

    def transpose_back(self, block) -> None:
        """Give each reader of a stored value that was not rebuilt its channels-first transpose."""
        for old, value in self.new.items():
            readers = [use for use in old.uses if use.operation not in self.rebuilt]
            if not readers:
                continue
            init = EmptyOp([], old.type)
            transpose = linalg.TransposeOp(value, init.results[0], DenseArrayBase.from_list(i64, TO_FIRST))
            Rewriter.insert_op([init, transpose], InsertPoint.after(value.owner))
            TRANSPOSES.add()
            for use in readers:
                use.operation.operands[use.index] = transpose.results[0]


def outputs_last(value: SSAValue, m: AffineMap, out_maps: list[AffineMap]):
    """(axis order, the constant transposed) for a seed's dense constant operand `value` read through
    bare loops `m`, whose axes indexed by the output's loops are not last in the output's order (a
    depthwise weight (c, kh, kw)): those axes moved last, the kernels' vector loop then runs along
    contiguous weights; None for any other operand."""
    owner = value.owner
    if not isinstance(owner, arith.ConstantOp) or not isinstance(owner.value, DenseIntOrFPElementsAttr):
        return None
    if not all(isinstance(e, AffineDimExpr) for e in m.results):
        return None
    out_loops = [e.position for om in out_maps for e in om.results if isinstance(e, AffineDimExpr)]
    loops = [e.position for e in m.results]
    tail = sorted((a for a, d in enumerate(loops) if d in out_loops), key=lambda a: out_loops.index(loops[a]))
    order = tuple([a for a in range(len(loops)) if a not in tail] + tail)
    if order == tuple(range(len(loops))):
        return None
    array = np.ascontiguousarray(attr_numpy(owner.value).reshape(value.type.get_shape()).transpose(order))
    return order, arith.ConstantOp(dense_attr(array), permuted_type(value.type, order))


def loop_order(maps: list[AffineMap], iterators: list, region, n_in: int) -> list[int] | None:
    """The loops in the order of the output's axes, for an all-parallel op whose one output map is a
    permutation of its loops other than the identity and whose body does not read loop indices."""
    out = maps[n_in:]
    if len(out) != 1 or any(str(it.data) != "parallel" for it in iterators):
        return None
    results = out[0].results
    if not all(isinstance(e, AffineDimExpr) for e in results) or len(results) != out[0].num_dims:
        return None
    order = [e.position for e in results]
    if sorted(order) != list(range(len(order))) or order == sorted(order):
        return None
    if any(isinstance(inner, linalg.IndexOp) for inner in region.walk()):
        return None
    return order


@register_xrelay_pass("channels-last", opt_level=0, statistics=(STORED, TRANSPOSES))
@dataclass(frozen=True)
class ChannelsLast(XRelayPass):
    """Store the images channels-first windowed ops read and write channels last."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.walk():
            if not isinstance(function, func.FuncOp) or not function.body.blocks:
                continue
            block = function.body.block
            stored = stored_values(block)
            if not stored:
                continue
            rewrite = _Rewrite(stored)
            for inner in list(block.ops):
                if any(r in stored for r in inner.results) or (
                        isinstance(inner, Structured) and any(v in stored for v in inner.operands)):
                    rewrite.rebuild(inner)
            rewrite.transpose_back(block)
            for inner in reversed(rewrite.rebuilt):
                Rewriter.erase_op(inner)
