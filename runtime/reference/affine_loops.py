"""Upstream's affine loops (`--convert-linalg-to-affine-loops`) as the scf loops the loops executor runs.

`scf_loops(module)` returns a copy with `affine.for` as `scf.for`, `affine.load`/`store` as
`affine.apply` per index and `memref.load`/`store`, every map over dimensions only (xDSL 0.75
parses `affine.load %m[%i, %j]` with symbols, which its own `lower-affine` cannot lower).
`certain_range` reads the values an index of the scf loops takes, and `check_static_bounds` rejects
an access it certainly puts outside its memref, for both loops executors."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import affine, arith, func, memref, scf
from xdsl.dialects.builtin import AffineMapAttr, IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap
from xdsl.rewriter import InsertPoint, Rewriter

from xrelay.runtime.executor.program_entry import located
from xrelay.runtime.kernels.affine_views import ExecutionError

_AFFINE = (affine.ForOp, affine.LoadOp, affine.StoreOp, affine.YieldOp)


def _over_dims(amap: AffineMap) -> AffineMap:
    """`amap` with its symbols turned into dimensions after its own (operands are dims, then symbols)."""
    dims = [AffineExpr.dimension(i) for i in range(amap.num_dims)]
    symbols = [AffineExpr.dimension(amap.num_dims + i) for i in range(amap.num_symbols)]
    return amap.replace_dims_and_symbols(dims, symbols, amap.num_dims + amap.num_symbols, 0)


def _outermost(op: Operation) -> Operation:
    """The ancestor of `op` in its function's body: constants go before it, so loop nests stay perfect
    (the loops executor runs a perfect nest over whole arrays)."""
    while (parent := op.parent_op()) is not None and not isinstance(parent, func.FuncOp):
        op = parent
    return op


def _constant(value: int, rewriter: Rewriter, user: Operation) -> SSAValue:
    constant = arith.ConstantOp(IntegerAttr(value, IndexType()))
    rewriter.insert_op(constant, InsertPoint.before(_outermost(user)))
    return constant.result


def _indices(amap: AffineMap, operands: tuple[SSAValue, ...], rewriter: Rewriter, before: Operation) -> list[SSAValue]:
    """One index value per result of `amap` applied to `operands`, built before `before`."""
    values = []
    for expr in _over_dims(amap).results:
        if isinstance(expr, AffineDimExpr):
            values.append(operands[expr.position])
        elif isinstance(expr, AffineConstantExpr):
            values.append(_constant(expr.value, rewriter, before))
        else:
            apply = affine.ApplyOp(operands, AffineMapAttr(AffineMap(len(operands), 0, (expr,))))
            rewriter.insert_op(apply, InsertPoint.before(before))
            values.append(apply.result)
    return values


def _bound(amap: AffineMapAttr, operands, rewriter: Rewriter, loop: affine.ForOp) -> SSAValue:
    if len(amap.data.results) != 1:
        raise ExecutionError("affine.for with a min/max bound (several results) is not supported")
    return _indices(amap.data, tuple(operands), rewriter, loop)[0]


def scf_loops(module: ModuleOp) -> ModuleOp:
    """`module`, or a copy with its affine loops, loads, stores and yields as scf and memref ops."""
    if not any(isinstance(op, _AFFINE) for op in module.walk()):
        return module
    module = module.clone()
    rewriter = Rewriter()
    for op in list(module.walk()):
        if isinstance(op, affine.LoadOp):
            indices = _indices(op.map.data, tuple(op.indices), rewriter, op)
            rewriter.replace_op(op, memref.LoadOp.get(op.memref, indices))
        elif isinstance(op, affine.StoreOp):
            indices = _indices(op.map.data, tuple(op.indices), rewriter, op)
            rewriter.replace_op(op, memref.StoreOp.get(op.value, op.memref, indices))
        elif isinstance(op, affine.YieldOp):
            rewriter.replace_op(op, scf.YieldOp(*op.arguments))
    for op in [op for op in module.walk() if isinstance(op, affine.ForOp)]:  # outer loops first
        lower = _bound(op.lowerBoundMap, op.lowerBoundOperands, rewriter, op)
        upper = _bound(op.upperBoundMap, op.upperBoundOperands, rewriter, op)
        step = _constant(op.step.value.data, rewriter, op)
        body = op.detach_region(op.body)
        if not body.block.ops or not isinstance(body.block.last_op, scf.YieldOp):
            body.block.add_op(scf.YieldOp())  # affine.for's yield may be implicit
        rewriter.replace_op(op, scf.ForOp(lower, upper, step, list(op.inits), body))
    return module


Range = tuple[int, int]
"""Smallest and largest value an index takes."""


def constant_int(value: SSAValue) -> int | None:
    """The value of an integer `arith.constant`, else None."""
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def loop_of(value: SSAValue) -> tuple[Operation, int] | None:
    """The `scf.for`/`scf.parallel` whose induction variable `value` is, and which one (its position)."""
    block = value.owner
    if not isinstance(block, Block):
        return None
    loop = block.parent_op()
    if isinstance(loop, scf.ForOp) and value is block.args[0]:
        return loop, 0
    if isinstance(loop, scf.ParallelOp) and value in block.args:
        return loop, list(block.args).index(value)
    return None


def loop_bounds(loop: Operation, position: int) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(lower bound, upper bound, step) of loop `position` of an `scf.for` or `scf.parallel`."""
    if isinstance(loop, scf.ForOp):
        return loop.lb, loop.ub, loop.step
    return loop.lowerBound[position], loop.upperBound[position], loop.step[position]


def certain_range(value: SSAValue) -> Range | None:
    """The exact range of a constant or of the induction variable of a constant-bounds `scf.for`
    (every value in it is taken, so an index outside its memref there is certainly an error)."""
    if (constant := constant_int(value)) is not None:
        return constant, constant
    loop = loop_of(value)
    if loop is None or not isinstance(loop[0], scf.ForOp):
        return None
    lb, ub, step = (constant_int(v) for v in loop_bounds(*loop))
    if lb is None or ub is None or step is None or step <= 0 or ub <= lb:
        return None
    return lb, lb + (ub - lb - 1) // step * step


def check_static_bounds(shape: Sequence[int], indices: Sequence[SSAValue], op: Operation) -> None:
    """An ExecutionError at `op` when one of its `indices` into a memref of `shape` certainly leaves
    its dimension (flat indexing would read a neighbouring row or wrap around instead of failing)."""
    for axis, (size, index) in enumerate(zip(shape, indices, strict=True)):
        known = certain_range(index)
        if known is not None and (known[0] < 0 or known[1] >= size):
            raise ExecutionError(f"{located(op)}loops level: {op.name} index #{axis} takes values "
                                 f"{known[0]}..{known[1]}, outside the memref's dimension of size {size}")
