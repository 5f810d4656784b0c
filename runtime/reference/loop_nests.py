"""Perfect `scf.for` nests run over whole numpy arrays, by raising them back to a structured op.

`raise_nest(loop, roots)` recognises the loops convert-linalg-to-loops writes (constant bounds from
0 step 1, nothing between the loops, an innermost body of affine-indexed loads, scalar arith/math and
one store) and compiles the `linalg.generic` they came from with `compile_structured`. It returns
None (the scalar translation) wherever whole arrays could change the result: a second store, a load
of the stored buffer other than of the stored element, a store index that is not one distinct loop
per axis, ops with regions, loop-carried values, dynamically strided subviews."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import affine, arith, memref, scf
from xdsl.dialects.builtin import AffineMapAttr, MemRefType, NoneAttr, StridedLayoutAttr
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap

from xrelay.runtime.kernels.affine_views import ExecutionError, linear_form
from xrelay.runtime.reference.affine_loops import constant_int
from xrelay.runtime.kernels.linalg_structured import compile_structured


@dataclass
class RaisedNest:
    """A loop nest compiled as a structured op: `run(arrays)` with one array per `memrefs` entry
    (the inputs, then the stored buffer), each shaped like its memref type."""

    memrefs: list[SSAValue]
    run: Callable[[list[np.ndarray]], None]


def perfect_nest(loop: scf.ForOp) -> tuple[list[scf.ForOp], list[int], list[Operation]] | None:
    """(loops, trip counts, innermost body ops without the yield) of a perfect nest of loops from 0
    with step 1 and constant bounds, carrying no values; None otherwise."""
    loops, ranges = [], []
    while True:
        if loop.iter_args or constant_int(loop.lb) != 0 or constant_int(loop.step) != 1:
            return None
        upper = constant_int(loop.ub)
        if upper is None:
            return None
        loops.append(loop)
        ranges.append(max(upper, 0))
        ops = [op for op in loop.body.block.ops if not isinstance(op, scf.YieldOp)]
        if len(ops) == 1 and isinstance(ops[0], scf.ForOp):
            loop = ops[0]
            continue
        if any(op.regions for op in ops):
            return None
        return loops, ranges, ops


def _substitute(expr: AffineExpr, operands: list[AffineExpr]) -> AffineExpr:
    return expr.replace_dims_and_symbols(operands, [])


def raise_nest(loop: scf.ForOp, roots: Mapping[SSAValue, SSAValue],
               constant_roots: frozenset[SSAValue] = frozenset()) -> RaisedNest | None:
    """The nest at `loop` compiled as a structured op, or None (see the module docstring).

    `roots[m]` is the buffer memref value `m` is a view of (itself for a buffer); buffers in
    `constant_roots` hold the same data on every run (globals), so derived forms are cached."""
    nest = perfect_nest(loop)
    if nest is None:
        return None
    loops, ranges, body = nest
    ivs = {lp.body.block.args[0]: k for k, lp in enumerate(loops)}
    rank = len(loops)
    exprs: dict[SSAValue, AffineExpr] = {}

    def index_expr(value: SSAValue) -> AffineExpr | None:
        if value in ivs:
            return AffineDimExpr(ivs[value])
        if value in exprs:
            return exprs[value]
        c = constant_int(value)
        return None if c is None else AffineConstantExpr(c)

    loads, stores, computes = [], [], []
    for op in body:
        if isinstance(op, affine.ApplyOp):
            operands = [index_expr(v) for v in op.mapOperands]
            if any(e is None for e in operands) or len(op.map.data.results) != 1:
                return None
            exprs[op.result] = _substitute(op.map.data.results[0], operands)
        elif isinstance(op, memref.LoadOp):
            loads.append(op)
        elif isinstance(op, memref.StoreOp):
            stores.append(op)
        elif op.dialect_name() in ("arith", "math"):
            computes.append(op)
        else:
            return None
    if len(stores) != 1:
        return None
    (store,) = stores
    out_exprs = [index_expr(v) for v in store.indices]
    if any(e is None for e in out_exprs):
        return None
    used: set[int] = set()
    for e in out_exprs:  # one distinct loop (or none) per axis: no element is stored twice
        form = linear_form(e)
        if form is None or len([d for d, c in form[0].items() if c]) > 1 or any(c < 0 for c in form[0].values()):
            return None
        dims = {d for d, c in form[0].items() if c}
        if dims & used:
            return None
        used |= dims
    out_root = roots.get(store.memref, store.memref)
    if any(not isinstance(m.type, MemRefType) or not isinstance(m.type.layout, NoneAttr | StridedLayoutAttr)
           or (isinstance(m.type.layout, StridedLayoutAttr) and None in (*m.type.get_strides(), m.type.get_offset()))
           for m in [store.memref] + [load.memref for load in loads]):
        return None  # other layouts, and subviews with dynamic strides, stay scalar

    inputs: list[tuple[SSAValue, tuple]] = []
    acc_loads = []
    for load in loads:
        load_exprs = [index_expr(v) for v in load.indices]
        if any(e is None for e in load_exprs):
            return None
        if roots.get(load.memref, load.memref) is out_root:
            if load.memref is not store.memref or load_exprs != out_exprs:
                return None
            acc_loads.append(load)
            continue
        key = (load.memref, tuple(load_exprs))
        if key not in inputs:
            inputs.append(key)

    def element_type(m: SSAValue):
        assert isinstance(m.type, MemRefType)
        return m.type.get_element_type()

    n_in = len(inputs)
    block = Block(arg_types=[element_type(m) for m, _ in inputs] + [element_type(store.memref)])
    mapper: dict[SSAValue, SSAValue] = {}
    for load in loads:
        if load in acc_loads:
            mapper[load.res] = block.args[n_in]
        else:
            mapper[load.res] = block.args[inputs.index((load.memref, tuple(index_expr(v) for v in load.indices)))]
    inside = set(body)

    def bring(value: SSAValue) -> bool:
        """Make `value` available in the new body: loop indices become linalg.index, constants
        from outside the nest are copied in."""
        if value in mapper:
            return True
        if value in ivs:
            index = IndexOp(ivs[value])
            block.add_op(index)
            mapper[value] = index.result
            return True
        owner = value.owner
        if isinstance(owner, arith.ConstantOp) and owner not in inside:
            block.add_op(owner.clone(value_mapper=mapper))
            return True
        return False

    for op in computes:
        if not all(bring(v) for v in op.operands):
            return None
        block.add_op(op.clone(value_mapper=mapper))
    if not bring(store.value):
        return None
    block.add_op(YieldOp(mapper[store.value]))

    holders = Block(arg_types=[m.type for m, _ in inputs] + [store.memref.type])
    maps = [AffineMapAttr(AffineMap(rank, 0, tuple(e))) for _, e in inputs] + \
        [AffineMapAttr(AffineMap(rank, 0, tuple(out_exprs)))]
    iterators = [IteratorTypeAttr.parallel() if d in used else IteratorTypeAttr.reduction() for d in range(rank)]
    generic = GenericOp(holders.args[:n_in], holders.args[n_in:], Region(block), maps, iterators)
    constant = [roots.get(m, m) in constant_roots for m, _ in inputs]
    try:
        run = compile_structured(generic, (), constant, loop_ranges=ranges)
    except ExecutionError:
        return None
    return RaisedNest([m for m, _ in inputs] + [store.memref], run)
