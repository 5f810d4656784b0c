"""What the C translation needs to know about memory accesses: index ranges and parallel loops.

`IndexRanges` bounds every index value it can (constants, loop induction variables, `affine.apply`
and integer arithmetic over them; a tile's points from where their tile starts) so that an access proven inside its memref needs no check in the
generated code. `parallel_safe(loop, roots)` says whether the iterations of an `scf.for` touch
disjoint elements of every buffer they write, so the loop may run across threads. `free_values(op)`
lists what a loop outlined into a C function takes as parameters.
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects import affine, arith, memref, scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineExpr

from xrelay.runtime.executor.static_layouts import layout_of
from xrelay.runtime.reference.affine_loops import Range, constant_int, loop_bounds, loop_of


def _combine(kind: str, a: Range, b: Range) -> Range | None:
    if kind == "add":
        return a[0] + b[0], a[1] + b[1]
    if kind == "sub":
        return a[0] - b[1], a[1] - b[0]
    if kind == "mul":
        products = [x * y for x in a for y in b]
        return min(products), max(products)
    if kind == "min":
        return min(a[0], b[0]), min(a[1], b[1])
    if kind == "max":
        return max(a[0], b[0]), max(a[1], b[1])
    if kind in ("floordiv", "div") and b[0] == b[1] and b[0] > 0:
        return a[0] // b[0], a[1] // b[0]
    if kind == "mod" and b[0] == b[1] and b[0] > 0:
        return (0, b[0] - 1) if a[0] < 0 or a[1] >= b[0] else a
    return None


_ARITH = {arith.AddiOp: "add", arith.SubiOp: "sub", arith.MuliOp: "mul", arith.MinSIOp: "min",
          arith.MaxSIOp: "max", arith.FloorDivSIOp: "floordiv"}
_AFFINE = {AffineBinaryOpKind.Add: "add", AffineBinaryOpKind.Mul: "mul", AffineBinaryOpKind.FloorDiv: "floordiv",
           AffineBinaryOpKind.Mod: "mod"}


class IndexRanges:
    """Ranges of index values, computed on demand and remembered."""

    def __init__(self) -> None:
        self._known: dict[SSAValue, Range | None] = {}

    def of(self, value: SSAValue) -> Range | None:
        if value not in self._known:
            self._known[value] = None  # a cycle (a loop-carried value) stays unknown
            self._known[value] = self._compute(value)
        return self._known[value]

    def _compute(self, value: SSAValue) -> Range | None:
        if (constant := constant_int(value)) is not None:
            return constant, constant
        if (loop := loop_of(value)) is not None:
            if (extent := offset_extent(*loop)) is not None:  # from lb to lb + extent: relative to lb's range
                lb, step = self.of(loop_bounds(*loop)[0]), constant_int(loop_bounds(*loop)[2])
                return None if lb is None else (lb[0], lb[1] + (extent - 1) // step * step)
            lb, ub, step = (self.of(v) for v in loop_bounds(*loop))
            if lb is None or ub is None or step is None or step[0] <= 0 or ub[1] <= lb[0]:
                return None
            if lb[0] == lb[1] and step[0] == step[1]:  # the last value a fixed start and step reach
                return lb[0], lb[0] + (ub[1] - 1 - lb[0]) // step[0] * step[0]
            return lb[0], max(lb[0], ub[1] - 1)
        op = value.owner
        if isinstance(op, arith.IndexCastOp):
            return self.of(op.input)
        if type(op) in _ARITH:
            lhs, rhs = (self.of(v) for v in op.operands)
            return None if lhs is None or rhs is None else _combine(_ARITH[type(op)], lhs, rhs)
        if isinstance(op, affine.ApplyOp) and len(op.map.data.results) == 1:
            operands = [self.of(v) for v in op.mapOperands]
            return None if None in operands else _affine_range(op.map.data.results[0], operands)
        return None

    def within(self, value: SSAValue, size: int) -> bool:
        """Whether `value` is certainly in [0, size)."""
        known = self.of(value)
        return known is not None and known[0] >= 0 and known[1] < size


def offset_extent(loop: Operation, position: int = 0) -> int | None:
    """`extent` when loop `position` of `loop` runs from `lb` to `lb + extent` (a positive constant) by a
    positive constant step, as a tile's points do (`tile-loops`), else None."""
    lb, ub, step = loop_bounds(loop, position)
    end, steps = ub.owner, constant_int(step)
    if steps is None or steps <= 0 or not isinstance(end, arith.AddiOp) or lb not in end.operands:
        return None
    extent = constant_int(end.operands[1] if end.operands[0] is lb else end.operands[0])
    return extent if extent is not None and extent > 0 else None


def _affine_range(expr: AffineExpr, operands: list[Range]) -> Range | None:
    if isinstance(expr, AffineDimExpr):
        return operands[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return expr.value, expr.value
    if isinstance(expr, AffineBinaryOpExpr) and expr.kind in _AFFINE:
        lhs, rhs = _affine_range(expr.lhs, operands), _affine_range(expr.rhs, operands)
        return None if lhs is None or rhs is None else _combine(_AFFINE[expr.kind], lhs, rhs)
    return None


def _owned_by(index: SSAValue, loop: scf.ForOp) -> bool:
    """Whether every value `index` takes in an iteration of `loop` lies in [iv, iv + step), so that
    different iterations give it disjoint values: it is the loop's induction variable, that plus a
    constant below the step (a loop unrolled and jammed), or the induction variable of a loop inside
    running from it to at most one step further."""
    iv = loop.body.block.args[0]
    step = constant_int(loop.step)
    if index is iv:
        return True
    if isinstance(index.owner, arith.AddiOp) and iv in index.owner.operands and step is not None:
        other = index.owner.operands[1] if index.owner.operands[0] is iv else index.owner.operands[0]
        offset = constant_int(other)
        return offset is not None and 0 <= offset < step
    inner = loop_of(index)
    if inner is None or not isinstance(inner[0], scf.ForOp) or inner[0].lb is not iv:
        return False
    ub = inner[0].ub.owner
    if isinstance(ub, arith.MinSIOp):  # min(iv + tile, bound): a tile's last, partial iteration
        ub = next((o.owner for o in ub.operands if isinstance(o.owner, arith.AddiOp)), None)
    if not isinstance(ub, arith.AddiOp) or step is None or iv not in ub.operands:
        return False
    extent = constant_int(ub.operands[1] if ub.operands[0] is iv else ub.operands[0])
    return extent is not None and 0 < extent <= step


def parallel_safe(loop: scf.ForOp, roots: Mapping[SSAValue, object]) -> bool:
    """Whether `loop`'s iterations may run concurrently: it carries no values, and every buffer
    written inside it (not allocated there) is read and written only through one memref type, on an
    axis of non-zero stride where every access's index is owned by the loop (`_owned_by`): each
    iteration touches its own elements."""
    if loop.iter_args:
        return False
    private, accesses = set(), {}
    for op in loop.body.walk():
        if isinstance(op, memref.AllocOp | memref.AllocaOp):
            private.add(roots[op.memref])
        elif isinstance(op, memref.LoadOp | memref.StoreOp):
            root = roots[op.memref]
            if root not in private:
                written = isinstance(op, memref.StoreOp)
                accesses.setdefault(root, []).append((op.memref.type, tuple(op.indices), written))
        elif isinstance(op, memref.CopyOp | memref.DeallocOp):
            if roots[op.operands[-1]] not in private:
                return False
            if isinstance(op, memref.CopyOp):  # reads the whole source: no written index is disjoint
                accesses.setdefault(roots[op.source], []).append((None, None, False))
    for root, uses in accesses.items():
        if not any(written for _, _, written in uses):
            continue
        memref_type = uses[0][0]
        if any(t != memref_type for t, _, _ in uses):
            return False
        assert isinstance(memref_type, MemRefType)
        strides, _ = layout_of(memref_type)
        if not any(strides[axis] != 0 and all(_owned_by(indices[axis], loop) for _, indices, _ in uses)
                   for axis in range(len(strides))):
            return False
    return True


def free_values(op: Operation) -> list[SSAValue]:
    """The values `op` and the ops inside it use but that are defined outside it, in order of first use."""
    found: dict[SSAValue, None] = {}
    for inner in op.walk():
        for value in inner.operands:
            if value not in found and not op.is_ancestor(value.owner):
                found[value] = None
    return list(found)
