"""The walk behind ConvertLayout (`passes/convert_layout.py`): one forward pass over a function body
with a map from every original value to (its replacement, the layout the original had, the layout
the replacement is in). Layouts are strings of distinct upper-case letters naming the axes in order
("NCHW", "NHWC", "NC", "C").

- `nn.conv2d` takes the desired layouts; its weight gets a transform (e.g. OIHW->HWIO) and its
  data a transform from wherever the producer left it.
- Every nn op declares how it is treated as its `LAYOUT` (a `LayoutRule`, dialects/op_base.py);
  `LayoutRewriter.RULES` implements each rule.
- Layout-agnostic ops follow their input: relu, sqrt, negative, the binary broadcasting ops,
  batch_norm and bias_add (axis renumbered), the pools (`layout` attribute changed), the
  reductions (axes renumbered; the result keeps the surviving axes in the data's layout). A
  lower-rank operand of a binary op is expanded to full rank with `nn.expand_dims` and
  transformed like the other operand, as Relay does (so a dense bias `add` gets one
  `expand_dims` even when nothing was converted).
- Data movement follows its input with its attributes renumbered: concatenate (operands brought
  into one layout) and split renumber `axis`, pad permutes its (before, after) pairs, strided_slice
  renumbers its sliced `axes`.
- Reshape and transpose follow a converted input when they can without a copy the original did
  not make (a channel shuffle, reshape to (N, g, C/g, H, W), swap, reshape back, stays in NHWC as
  (N, H, W, g, C/g) with the last two axes swapped); new axes get fresh letters.
- Every other op (batch_flatten, dense, softmax, expand_dims, func.return, ops of other dialects)
  receives its operands back in their original layout.

Transforms are memoised per (value, src, dst) and a transform of a `layout_transform` result is
composed with it, so running the pass twice adds nothing and converting back to NCHW removes
the transforms the first conversion added.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from string import ascii_uppercase
from typing import ClassVar, NamedTuple

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.irdl.operations import OptAttributeDef

from xrelay.dialects import nn
from xrelay.dialects.layout import DEFAULT_KERNEL_LAYOUT, reshape_groups
from xrelay.dialects.op_base import LayoutRule
from xrelay.dialects.ops.reduce import reduced_axes
from xrelay.instrument.statistics import Statistic


TRANSFORMS_INSERTED = Statistic("num-layout-transforms", "Number of nn.layout_transform ops inserted")
CONVS_CONVERTED = Statistic("num-convs-converted", "Number of nn.conv2d ops converted to the desired layouts")


class _Mapped(NamedTuple):
    """What an original value became: `value`, in layout `current` of the axes that were named
    `original` in the input program (both None when the layout is unknown)."""

    value: SSAValue
    original: str | None = None
    current: str | None = None


def _is_plain_layout(layout: object) -> bool:
    return isinstance(layout, str) and layout.isalpha() and layout.isupper() and len(set(layout)) == len(layout)


def _rank(value: SSAValue) -> int | None:
    return value.type.get_num_dims() if isinstance(value.type, TensorType) else None


def _rename(layout: str, naming: str, new_naming: str) -> str:
    """`layout`, spelled with the axis names of `naming`, respelled with those of `new_naming`
    (the axes correspond by position: naming[i] is new_naming[i])."""
    if naming == new_naming:
        return layout
    return "".join(new_naming[naming.index(axis)] for axis in layout)


def _axis_in(axis: int, original: str, current: str) -> int:
    """Where original axis `axis` (negative counts from the end) sits in layout `current`."""
    return current.index(original[axis % len(original)])


def _rebuilt(op: Operation, operands: Sequence[SSAValue], changed_attrs: Mapping[str, object]) -> Operation:
    """A copy of nn op `op` with new operands and some attributes changed, result types
    inferred. Like `nn.make(op.name, operands, **attrs)`, but keeps the IR attributes it does
    not change instead of rebuilding each from Python values (most of the pass's time)."""
    cls = type(op)
    assert isinstance(op, nn.NNOp)
    attributes = dict(op.attributes)
    # Converted back from Python values: the changed attributes, plus the required ones (a_min of
    # nn.clip, ...) that attributes_from_python insists on; it leaves out values equal to the default.
    given = {}
    if changed_attrs:
        definitions = cls.get_irdl_definition().attributes
        required = {k: v for k, v in op.attrs().items() if not isinstance(definitions[k], OptAttributeDef)}
        given = cls.attributes_from_python({**required, **changed_attrs})
    for key in changed_attrs:
        if key in given:
            attributes[key] = given[key]
        else:
            attributes.pop(key, None)
    result_types = cls.infer_types([v.type for v in operands], attributes)
    return cls.create(operands=operands, result_types=result_types, attributes=attributes, location=op.location)


@dataclass
class LayoutRewriter:
    """One forward walk over a function body (see the module docstring)."""

    desired: Mapping[str, tuple[str, str]]
    mapped: dict[SSAValue, _Mapped] = field(default_factory=dict)
    memo: dict[tuple[SSAValue, str, str], SSAValue] = field(default_factory=dict)
    replaced: list[Operation] = field(default_factory=list)
    composed: list[Operation] = field(default_factory=list)
    current_op: Operation | None = None

    def run(self, function: func.FuncOp) -> None:
        for block in function.body.blocks:
            self.memo.clear()  # a memoised transform must dominate its users
            for op in list(block.ops):
                self.current_op = op
                self.visit(op)
        for op in reversed(self.replaced):  # users go before their producers
            op.parent.erase_op(op)
        # Transforms composed away (converting back) may be dead now; they were recorded
        # consumer first, so one pass in order also clears chains.
        for op in self.composed:
            if op.parent is not None and all(r.first_use is None for r in op.results):
                op.parent.erase_op(op)

    # value helpers ----------------------------------------------------------------------

    def lookup(self, value: SSAValue) -> _Mapped:
        return self.mapped.get(value) or _Mapped(value)

    def in_layout(self, value: SSAValue, original: str, wanted: str) -> SSAValue:
        """The replacement of `value` (whose axes the consumer names `original`) in `wanted`."""
        m = self.lookup(value)
        if m.current is None or len(m.current) != len(original):
            return self.transform(self.to_original(value), original, wanted)
        return self.transform(m.value, _rename(m.current, m.original, original), wanted)

    def to_original(self, value: SSAValue) -> SSAValue:
        """The replacement of `value` back in the layout the input program had."""
        m = self.lookup(value)
        if m.current is None:
            return m.value
        return self.transform(m.value, m.current, m.original)

    def insert(self, op: Operation) -> Operation:
        assert self.current_op is not None and self.current_op.parent is not None
        self.current_op.parent.insert_op_before(op, self.current_op)
        return op

    def transform(self, value: SSAValue, src: str, dst: str) -> SSAValue:
        """`value` (in layout `src`) as a tensor in layout `dst`: itself, a memoised transform, or
        a transform composed with the `layout_transform` that produced `value`."""
        if src == dst:
            return value
        key = (value, src, dst)
        if key not in self.memo:
            owner = value.owner
            if isinstance(owner, nn.LayoutTransformOp) and _is_plain_layout(owner.attrs()["src_layout"]):
                a = owner.attrs()
                inner_src = _rename(a["src_layout"], a["dst_layout"], src)
                self.composed.append(owner)
                self.memo[key] = self.transform(owner.operands[0], inner_src, dst)
            else:
                op = self.insert(nn.make("nn.layout_transform", [value], src_layout=src, dst_layout=dst))
                TRANSFORMS_INSERTED.add()
                self.memo[key] = op.results[0]
        return self.memo[key]

    def expand(self, value: SSAValue, src: str, dst: str) -> SSAValue:
        """A lower-rank `value` in layout `src` broadcast-ready for `dst` (Relay's expand_dims
        at axis 0 naming the new axes after the missing ones of `dst`, then a transform)."""
        if _rank(value) == 0:
            return value  # a scalar broadcasts in any layout
        key = (value, src, dst)
        if key not in self.memo:
            missing = "".join(axis for axis in dst if axis not in src)
            op = self.insert(nn.make("nn.expand_dims", [value], axis=0, num_newaxis=len(dst) - len(src)))
            self.memo[key] = self.transform(op.results[0], missing + src, dst)
        return self.memo[key]

    # emitting ----------------------------------------------------------------------------

    def emit(
        self,
        op: Operation,
        operands: Sequence[SSAValue],
        layouts: Sequence[tuple[str, str] | None],
        **changed_attrs: object,
    ) -> None:
        """Give `op` these operands and attributes, rebuilding it when they change its result
        types, and map its results with `layouts` ((original, current) or None per result)."""
        results: Sequence[SSAValue] = op.results
        if changed_attrs or self._types_change(op, operands):
            new_op = self.insert(_rebuilt(op, operands, changed_attrs))
            for old, new in zip(op.results, new_op.results):
                new.name_hint = old.name_hint
            self.replaced.append(op)
            results = new_op.results
        else:
            for index, operand in enumerate(operands):
                if op.operands[index] is not operand:
                    op.operands[index] = operand
        for old, new, layout in zip(op.results, results, layouts):
            if new is not old or layout is not None:
                self.mapped[old] = _Mapped(new, *layout) if layout else _Mapped(new)

    @staticmethod
    def _types_change(op: Operation, operands: Sequence[SSAValue]) -> bool:
        return any(new is not old and new.type != old.type for new, old in zip(operands, op.operands))

    def restore(self, op: Operation, layouts: Sequence[tuple[str, str] | None] = ()) -> None:
        """Layout-sensitive or unknown op: operands back in their original layouts."""
        operands = [self.to_original(v) for v in op.operands]
        for nested in (o for region in op.regions for o in region.walk()):
            for index, value in enumerate(nested.operands):
                if value in self.mapped:  # a value from outside the region
                    nested.operands[index] = self.to_original(value)
        if isinstance(op, nn.NNOp):
            self.emit(op, operands, list(layouts) or [None] * len(op.results))
        else:
            for index, operand in enumerate(operands):
                if op.operands[index] is not operand:
                    op.operands[index] = operand

    # the ops -----------------------------------------------------------------------------

    def visit(self, op: Operation) -> None:
        """Dispatch on the op's declared `LAYOUT` rule; ops of other dialects are layout-sensitive."""
        self.RULES[getattr(type(op), "LAYOUT", LayoutRule.SENSITIVE)](self, op)

    def none(self, op: Operation) -> None:
        """Nothing to convert (nn.constant: a constant has no layout until something reads it)."""

    def agnostic(self, op: Operation) -> None:
        m = self.lookup(op.operands[0])
        self.emit(op, [m.value], [(m.original, m.current) if m.current else None])

    def dense(self, op: Operation) -> None:
        if _rank(op.results[0]) == 2:
            self.restore(op, [("NC", "NC")])  # Relay's dense infers NC: its bias add follows
        else:
            self.restore(op)

    def sensitive(self, op: Operation) -> None:
        self.restore(op)

    def conv2d(self, op: Operation) -> None:
        a = op.attrs()
        data_layout, kernel_layout = a["data_layout"], a["kernel_layout"]
        out_layout = a["out_layout"] or data_layout
        if not (_is_plain_layout(data_layout) and _is_plain_layout(kernel_layout) and _is_plain_layout(out_layout)):
            return self.restore(op)
        new_data_layout, new_kernel_layout = self.desired.get("nn.conv2d", (data_layout, kernel_layout))
        if new_kernel_layout == "default":
            new_kernel_layout = DEFAULT_KERNEL_LAYOUT[new_data_layout]
        data, weight = op.operands
        operands = [
            self.in_layout(data, data_layout, new_data_layout),
            self.in_layout(weight, kernel_layout, new_kernel_layout),
        ]
        changed = {}
        if (new_data_layout, new_kernel_layout, new_data_layout) != (data_layout, kernel_layout, out_layout):
            changed = {"data_layout": new_data_layout, "kernel_layout": new_kernel_layout, "out_layout": ""}
        # Conv layouts name axes by meaning (C is channels): the new output is in the new data layout.
        self.emit(op, operands, [(out_layout, new_data_layout)], **changed)
        if changed:
            CONVS_CONVERTED.add()

    def binary(self, op: Operation) -> None:
        lhs, rhs = (self.lookup(v) for v in op.operands)
        ranks = [_rank(m.value) for m in (lhs, rhs)]
        if None in ranks or (lhs.current is None and rhs.current is None):
            return self.restore(op)
        # The leader is the operand with a known layout and the larger rank; on a tie the one
        # this pass converted (it carries the desired layout), then lhs.
        candidates = [i for i, m in enumerate((lhs, rhs)) if m.current is not None]
        converted = [m.current != m.original for m in (lhs, rhs)]
        lead = max(candidates, key=lambda i: (ranks[i], converted[i], -i))
        if ranks[lead] < max(ranks):
            return self.restore(op)
        leader = (lhs, rhs)[lead]
        original, current = leader.original, leader.current
        operands = [leader.value, leader.value]
        other = op.operands[1 - lead]
        if ranks[1 - lead] == ranks[lead]:
            operands[1 - lead] = self.in_layout(other, original, current)
        else:
            # Numpy broadcasting aligned the lower-rank operand with the trailing axes.
            operands[1 - lead] = self.expand(self.to_original(other), original[len(original) - ranks[1 - lead] :], current)
        self.emit(op, operands, [(original, current)])

    def channel_axis_op(self, op: Operation) -> None:
        """batch_norm / bias_add follow their data operand, with the axis renumbered."""
        m = self.lookup(op.operands[0])
        if m.current is None:
            return self.restore(op)
        axis = op.attrs()["axis"]
        new_axis = _axis_in(axis, m.original, m.current)
        operands = [m.value, *(self.to_original(v) for v in op.operands[1:])]
        changed = {"axis": new_axis} if new_axis != axis % len(m.original) else {}
        layouts = [(m.original, m.current)] + [None] * (len(op.results) - 1)
        self.emit(op, operands, layouts, **changed)

    def reduce(self, op: Operation) -> None:
        """sum/mean/max follow their data operand: the listed axes are renumbered into its current
        layout, and the result keeps the surviving axes (all of them with keepdims) in that
        layout's order, as Relay's ReduceInferCorrectLayout."""
        m = self.lookup(op.operands[0])
        if m.current is None:
            return self.restore(op)
        a = op.attrs()
        rank = len(m.original)
        changed = {}
        if a["axis"]:
            axes = tuple(sorted(_axis_in(axis, m.original, m.current) for axis in a["axis"]))
            if axes != tuple(axis % rank for axis in a["axis"]):
                changed["axis"] = axes
        folded = {m.original[i] for i in reduced_axes(tuple(op.operands[0].type.get_shape()), a)}
        if a["keepdims"]:
            layout = (m.original, m.current)
        else:
            original, current = ("".join(x for x in s if x not in folded) for s in (m.original, m.current))
            layout = (original, current) if original else None
        self.emit(op, [m.value], [layout], **changed)

    def pool(self, op: Operation) -> None:
        layout = op.attrs()["layout"]
        if not _is_plain_layout(layout):
            return self.restore(op)
        m = self.lookup(op.operands[0])
        if m.current is None or len(m.current) != len(layout):
            return self.emit(op, [self.to_original(op.operands[0])], [(layout, layout)])
        new_layout = _rename(m.current, m.original, layout)
        changed = {"layout": new_layout} if new_layout != layout else {}
        self.emit(op, [m.value], [(layout, new_layout)], **changed)

    def concatenate(self, op: Operation) -> None:
        """Relay's ConcatenateLayout: the operands are brought into the layout of the first one this
        pass converted (else the first with a known layout), and the axis renumbered."""
        rank = _rank(op.results[0])
        known = [m for m in map(self.lookup, op.operands) if m.current is not None and len(m.current) == rank]
        if not known:
            return self.restore(op)
        leader = next((m for m in known if m.current != m.original), known[0])
        operands = [self.in_layout(v, leader.original, leader.current) for v in op.operands]
        self._with_axis(op, operands, leader.original, leader.current)

    def split(self, op: Operation) -> None:
        """Relay's SplitInferCorrectLayout: the pieces follow the data, the axis renumbered."""
        m = self.lookup(op.operands[0])
        if m.current is None or len(m.current) != _rank(op.operands[0]):
            return self.restore(op)
        self._with_axis(op, [m.value], m.original, m.current)

    def _with_axis(self, op: Operation, operands: Sequence[SSAValue], original: str, current: str) -> None:
        axis = op.attrs()["axis"]
        new_axis = _axis_in(axis, original, current)
        changed = {"axis": new_axis} if new_axis != axis % len(original) else {}
        self.emit(op, operands, [(original, current)] * len(op.results), **changed)

    def pad(self, op: Operation) -> None:
        """Relay's PadInferCorrectLayout: follows the data, the (before, after) pairs permuted with its axes."""
        m = self.lookup(op.operands[0])
        if m.current is None or len(m.current) != _rank(op.operands[0]):
            return self.restore(op)
        widths = tuple(op.attrs()["pad_width"])
        pairs = {axis: widths[2 * i : 2 * i + 2] for i, axis in enumerate(m.original)}
        new_widths = tuple(w for axis in m.current for w in pairs[axis])
        self.emit(op, [m.value], [(m.original, m.current)], **({"pad_width": new_widths} if new_widths != widths else {}))

    def strided_slice(self, op: Operation) -> None:
        """Relay's StridedSliceInferCorrectLayout: follows the data, the sliced axes renumbered (begin,
        end and strides stay in the order of `axes`)."""
        m = self.lookup(op.operands[0])
        rank = _rank(op.operands[0])
        if m.current is None or len(m.current) != rank:
            return self.restore(op)
        a = op.attrs()
        axes = tuple(x % rank for x in (a["axes"] if a["axes"] is not None else range(len(a["begin"]))))
        new_axes = tuple(_axis_in(x, m.original, m.current) for x in axes)
        self.emit(op, [m.value], [(m.original, m.current)], **({"axes": new_axes} if new_axes != axes else {}))

    def _converted(self, value: SSAValue) -> _Mapped | None:
        """The mapping of `value` if this pass put it in another layout than the original, else None."""
        m = self.lookup(value)
        if m.current is None or m.current == m.original or len(m.current) != _rank(value):
            return None
        return m

    def reshape(self, op: Operation) -> None:
        """A reshape is a sequence of runs of axes, each merged or split on its own (`reshape_groups`).
        On a converted operand it follows when every run has axes on both sides and is one block of
        memory there: the run's non-unit axes sit side by side in the current layout, in their
        original order. Then the runs are reshaped in the current layout's order; the output axes of a
        run take its input axes' letters, then fresh ones (a split C of NHWC gives NHWCA). Otherwise
        layout-sensitive."""
        m = self._converted(op.operands[0])
        src, dst = tuple(op.operands[0].type.get_shape()), tuple(op.results[0].type.get_shape())
        groups = reshape_groups(src, dst) if m is not None else None
        # Unit axes that vanish or appear on their own have no place to take: layout-sensitive.
        if groups is None or not all(ins and outs for ins, outs in groups) or len(src) + len(dst) > len(ascii_uppercase):
            return self.restore(op)
        letters, size = m.original, dict(zip(m.original, src))
        keyed = []
        for index, (ins, _) in enumerate(groups):
            block = [letters[a] for a in ins if src[a] != 1] or [letters[a] for a in ins]
            keyed.append((m.current.index(block[0]), index))
        order = [index for _, index in sorted(keyed)]
        in_order = [letters[a] for index in order for a in groups[index][0] if src[a] != 1]
        if in_order != [x for x in m.current if size[x] != 1]:
            return self.restore(op)
        fresh = iter(x for x in ascii_uppercase if x not in letters)
        name = {}
        for ins, outs in groups:
            for k, axis in enumerate(outs):
                name[axis] = letters[ins[k]] if k < len(ins) else next(fresh)
        original = "".join(name[j] for j in range(len(dst)))
        current = "".join(name[j] for index in order for j in groups[index][1])
        self.emit(op, [m.value], [(original, current)], newshape=tuple(dst[original.index(x)] for x in current))

    def transpose(self, op: Operation) -> None:
        """On a converted operand: the result's axes are named after the operand's axes they come from,
        and only the axes the transpose moves change places, where they sit in the current layout
        (a channel shuffle's swap of C and its split in NHWC swaps the last two axes). A transpose
        that moves nothing there is dropped. Otherwise layout-sensitive."""
        m = self._converted(op.operands[0])
        if m is None:
            return self.restore(op)
        rank = len(m.original)
        axes = op.attrs()["axes"]
        axes = [a % rank for a in axes] if axes is not None else list(reversed(range(rank)))
        original = "".join(m.original[a] for a in axes)
        moved = {m.original[a] for i, a in enumerate(axes) if a != i}
        new_order = iter(x for x in original if x in moved)
        current = "".join(next(new_order) if x in moved else x for x in m.current)
        physical = tuple(m.current.index(x) for x in current)
        if physical == tuple(range(rank)):
            self.mapped[op.results[0]] = _Mapped(m.value, original, current)
            self.replaced.append(op)
            return
        self.emit(op, [m.value], [(original, current)], axes=physical)

    def layout_transform(self, op: Operation) -> None:
        a = op.attrs()
        src, dst = a["src_layout"], a["dst_layout"]
        if not (_is_plain_layout(src) and _is_plain_layout(dst)):
            return self.restore(op)
        m = self.lookup(op.operands[0])
        if m.current is None or len(m.current) != len(src):
            value, current = self.to_original(op.operands[0]), src
        else:
            value, current = m.value, _rename(m.current, m.original, src)
        key = (value, current, dst)
        if current == src and key not in self.memo:
            self.emit(op, [value], [(dst, dst)])  # still needed as it is
            self.memo[key] = self.lookup(op.results[0]).value
        else:
            self.mapped[op.results[0]] = _Mapped(self.transform(value, current, dst), dst, dst)
            self.replaced.append(op)


    RULES: ClassVar[dict[LayoutRule, Callable[[LayoutRewriter, Operation], None]]] = {}


LayoutRewriter.RULES.update({
    LayoutRule.NONE: LayoutRewriter.none,
    LayoutRule.AGNOSTIC: LayoutRewriter.agnostic,
    LayoutRule.BROADCAST: LayoutRewriter.binary,
    LayoutRule.CHANNEL_AXIS: LayoutRewriter.channel_axis_op,
    LayoutRule.POOL: LayoutRewriter.pool,
    LayoutRule.REDUCE: LayoutRewriter.reduce,
    LayoutRule.CONV: LayoutRewriter.conv2d,
    LayoutRule.TRANSFORM: LayoutRewriter.layout_transform,
    LayoutRule.DENSE: LayoutRewriter.dense,
    LayoutRule.CONCATENATE: LayoutRewriter.concatenate,
    LayoutRule.SPLIT: LayoutRewriter.split,
    LayoutRule.PAD: LayoutRewriter.pad,
    LayoutRule.STRIDED_SLICE: LayoutRewriter.strided_slice,
    LayoutRule.RESHAPE: LayoutRewriter.reshape,
    LayoutRule.TRANSPOSE: LayoutRewriter.transpose,
    LayoutRule.SENSITIVE: LayoutRewriter.sensitive,
})
"""The implementation of every layout rule an op can declare (the op-coverage test checks all are here)."""
