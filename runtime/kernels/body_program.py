"""The scalar body of a linalg structured op, evaluated with numpy over whole loop-space arrays.

`BodyProgram(block, targets, ranges)` turns the ops of a linalg body (arith, math, `linalg.index`,
`tensor.extract`) into a list of numpy calls; `runtime/kernels/linalg_structured.py` runs it over the strided
views of an op's operands. `REDUCERS` names the ufunc that folds a reduction body `combine(x, acc)`.
The constant helpers (`numpy_dtype`, `dense_to_numpy`, `aligned_constant`, `scalar_constant`) are how
every executor reads attributes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, math, memref, tensor
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import Attribute, Block, Operation, OpResult, SSAValue

from xrelay.dialects.constant import attr_numpy, dtype_of
from xrelay.runtime.kernels.affine_views import ExecutionError
from xrelay.runtime.math_functions import erf


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """`dtype_of` (dialects/constant.py), with an unsupported type an ExecutionError."""
    try:
        return dtype_of(element_type)
    except TypeError as err:
        raise ExecutionError(str(err)) from None


def dense_to_numpy(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """A read-only numpy view of a dense elements attribute (splats broadcast), as an executor reads it."""
    try:
        return attr_numpy(attr)
    except TypeError as err:
        raise ExecutionError(str(err)) from None


def aligned_constant(array: np.ndarray) -> np.ndarray:
    """A read-only constant in memory numpy allocated (aligned for BLAS) unless it is a splat view.

    Views straight into an attribute's bytes are only 16-byte aligned, which makes BLAS slower.
    """
    if array.strides and 0 in array.strides:
        return array
    copy = np.array(array)
    copy.flags.writeable = False
    return copy


def scalar_constant(attr: Attribute, value_type: Attribute):
    """A numpy scalar for an `arith.constant` float/int attribute."""
    if isinstance(attr, FloatAttr | IntegerAttr):
        return numpy_dtype(value_type).type(attr.value.data)
    raise ExecutionError(f"unsupported constant {attr}")


def _unsigned(array) -> np.ndarray:
    """An `iN` array (held in a signed dtype) read as unsigned, for upstream's unsigned ops."""
    array = np.asarray(array)
    return array.view(np.dtype(f"u{array.dtype.itemsize}"))


_BINARY = {
    arith.AddfOp: np.add, arith.SubfOp: np.subtract, arith.MulfOp: np.multiply,
    arith.DivfOp: np.divide, arith.MaximumfOp: np.maximum, arith.MinimumfOp: np.minimum,
    arith.MaxnumfOp: np.fmax, arith.MinnumfOp: np.fmin,
    arith.AddiOp: np.add, arith.SubiOp: np.subtract, arith.MuliOp: np.multiply,
    arith.DivSIOp: lambda a, b: np.trunc(np.divide(a, b)).astype(np.result_type(a, b)),
    arith.FloorDivSIOp: np.floor_divide, arith.RemSIOp: np.fmod,
    arith.MaxSIOp: np.maximum, arith.MinSIOp: np.minimum,
    arith.AndIOp: np.bitwise_and, arith.OrIOp: np.bitwise_or, arith.XOrIOp: np.bitwise_xor,
    math.PowFOp: np.power, math.CopySignOp: np.copysign,
    arith.MaxUIOp: lambda a, b: np.maximum(_unsigned(a), _unsigned(b)).view(np.asarray(a).dtype),
    arith.MinUIOp: lambda a, b: np.minimum(_unsigned(a), _unsigned(b)).view(np.asarray(a).dtype),
}
_UNARY = {
    arith.NegfOp: np.negative, math.SqrtOp: np.sqrt, math.ExpOp: np.exp, math.LogOp: np.log,
    math.TanhOp: np.tanh, math.AbsFOp: np.abs, math.RsqrtOp: lambda x: 1 / np.sqrt(x),
    math.ErfOp: erf, math.AbsIOp: np.abs, math.FloorOp: np.floor,
}
# Combining ops of reductions: body `yield combine(x, acc)` folds with this ufunc.
REDUCERS = {
    arith.AddfOp: np.add, arith.AddiOp: np.add, arith.MulfOp: np.multiply, arith.MuliOp: np.multiply,
    arith.MaximumfOp: np.maximum, arith.MinimumfOp: np.minimum, arith.MaxnumfOp: np.fmax,
    arith.MinnumfOp: np.fmin, arith.MaxSIOp: np.maximum, arith.MinSIOp: np.minimum,
}
def _unordered_or(ordered: np.ufunc) -> Callable:
    """An unordered predicate (`ugt`: true when either operand is NaN) as the negation of the ordered
    opposite (`not a <= b`)."""
    return lambda a, b: np.logical_not(ordered(a, b))


_CMPF = {
    "oeq": np.equal, "ogt": np.greater, "oge": np.greater_equal, "olt": np.less, "ole": np.less_equal,
    "one": lambda a, b: np.logical_or(np.less(a, b), np.greater(a, b)),
    "ueq": lambda a, b: np.logical_not(np.logical_or(np.less(a, b), np.greater(a, b))),
    "ugt": _unordered_or(np.less_equal), "uge": _unordered_or(np.less), "ult": _unordered_or(np.greater_equal),
    "ule": _unordered_or(np.greater), "une": np.not_equal,
    "ord": lambda a, b: np.logical_not(np.logical_or(np.isnan(a), np.isnan(b))),
    "uno": lambda a, b: np.logical_or(np.isnan(a), np.isnan(b)),
}
"""`arith.cmpf`'s predicates: ordered ones false and unordered ones true when an operand is NaN."""
def _unsigned_order(signed: np.ufunc) -> Callable:
    """An unsigned predicate (`ult`) as the signed one on the operands read as unsigned."""
    return lambda a, b: signed(_unsigned(a), _unsigned(b))


_CMPI = {"eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal, "sgt": np.greater,
         "sge": np.greater_equal, "ult": _unsigned_order(np.less), "ule": _unsigned_order(np.less_equal),
         "ugt": _unsigned_order(np.greater), "uge": _unsigned_order(np.greater_equal)}


def _fma(a, b, c):
    """`math.fma`: a * b + c. numpy has no fused multiply-add: the product is taken in float64, where
    a float32 one is exact, so a float32 result rounds like C's fmaf but for a rare double rounding."""
    dtype = np.result_type(a, b, c)
    return (np.multiply(a, b, dtype=np.float64) + c).astype(dtype)


def _cast_fn(op: Operation):
    dtype = numpy_dtype(op.results[0].type)
    return lambda x: np.asarray(x).astype(dtype, copy=False)


def body_op_fn(op: Operation) -> Callable:
    """The numpy function computing one scalar body op over whole arrays."""
    if type(op) in _BINARY:
        return _BINARY[type(op)]
    if type(op) in _UNARY:
        return _UNARY[type(op)]
    if isinstance(op, arith.CmpfOp):
        return _CMPF[arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]]
    if isinstance(op, arith.CmpiOp):
        return _CMPI[arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]]
    if isinstance(op, arith.SelectOp):
        return np.where
    if isinstance(op, math.FmaOp):
        return _fma
    if isinstance(op, tensor.ExtractOp | memref.LoadOp):
        return _extract
    if isinstance(op, arith.ExtFOp | arith.TruncFOp | arith.SIToFPOp | arith.FPToSIOp | arith.ExtSIOp
                  | arith.TruncIOp | arith.IndexCastOp):
        return _cast_fn(op)
    if isinstance(op, arith.ExtUIOp | arith.UIToFPOp):
        dtype = numpy_dtype(op.results[0].type)
        return lambda x: _unsigned(x).astype(dtype)
    if isinstance(op, arith.FPToUIOp):
        dtype = numpy_dtype(op.results[0].type)
        return lambda x: np.asarray(x).astype(np.dtype(f"u{dtype.itemsize}")).view(dtype)
    raise ExecutionError(f"unsupported op {op.name} in a linalg body")


def scalar_op_step(op: Operation, operands: list[int], out: int) -> Callable[[list], None]:
    """The executor's step of an arith/math op outside any body (torch-mlir's `arith.truncf` of a
    constant a body captures): `env[out] = op(env[operands...])`, a scalar result as a numpy scalar."""
    fn = body_op_fn(op)

    def step(env: list) -> None:
        value = fn(*(env[i] for i in operands))
        env[out] = value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value

    return step


def depends_on(value: SSAValue, targets: set[SSAValue]) -> bool:
    if value in targets:
        return True
    owner = value.owner
    if isinstance(owner, Operation) and isinstance(value, OpResult) and _in_body(owner):
        return any(depends_on(v, targets) for v in owner.operands)
    return False


def reduction_combine(op: LinalgStructuredOperation, k: int) -> tuple[np.ufunc, SSAValue] | None:
    """(ufunc, x) when output k of `op`'s body yields `combine(x, acc)`: `combine` one of `REDUCERS`,
    acc output k's block argument and x computed from no output's; else None."""
    block = op.body.block
    out_args = set(block.args[len(op.inputs):])
    acc, owner = block.args[len(op.inputs) + k], block.last_op.operands[k].owner
    if not (isinstance(owner, Operation) and type(owner) in REDUCERS and acc in owner.operands):
        return None
    lhs, rhs = owner.operands
    x = rhs if lhs is acc else lhs
    return None if depends_on(x, out_args) else (REDUCERS[type(owner)], x)


def _in_body(op: Operation) -> bool:
    """Whether `op` sits inside a linalg body (rather than being a value the body captures)."""
    return isinstance(op.parent_op(), LinalgStructuredOperation)


def _extract(source: np.ndarray, *indices) -> np.ndarray:
    """`tensor.extract` / `memref.load` over loop-space index arrays: one fancy-indexing gather."""
    index = tuple(np.asarray(i, dtype=np.int64) for i in indices)
    if any(np.any((i < 0) | (i >= n)) for i, n in zip(index, source.shape)):
        raise ExecutionError(f"index out of bounds reading a {source.shape} operand in a linalg body")
    return np.asarray(source)[index]


class BodyProgram:
    """A linalg body compiled to numpy calls over loop-space arrays."""

    def __init__(self, block: Block, targets: Sequence[SSAValue], ranges: Sequence[int],
                 index_base: Sequence[int] | None = None):
        """`index_base[d]` is where loop d's range starts (`linalg.index d` counts from it; 0 if None)."""
        self.steps: list[tuple[SSAValue, Callable, tuple]] = []
        self.ranges = tuple(ranges)
        needed: set[Operation] = set()

        def mark(value: SSAValue):
            owner = value.owner
            if isinstance(owner, Operation) and owner not in needed and owner.parent_block() is block:
                needed.add(owner)
                for v in owner.operands:
                    mark(v)

        for t in targets:
            mark(t)
        for op in block.ops:
            if op not in needed:
                continue
            if isinstance(op, arith.ConstantOp):
                const = scalar_constant(op.value, op.result.type)
                self.steps.append((op.result, lambda c=const: c, ()))
            elif isinstance(op, linalg.IndexOp):
                dim = op.dim.value.data
                if not 0 <= dim < len(ranges):  # (xDSL's verifier bounds it above, not below)
                    raise ExecutionError(f"invalid op linalg.index: dimension {dim} is not one of its op's "
                                         f"{len(ranges)} loops")
                shape = [r if i == dim else 1 for i, r in enumerate(ranges)]
                start = index_base[dim] if index_base else 0
                idx = np.arange(start, start + ranges[dim], dtype=np.int64).reshape(shape)
                self.steps.append((op.result, lambda i=idx: i, ()))
            else:
                if len(op.results) != 1:
                    raise ExecutionError(f"unsupported op {op.name} in a linalg body")
                self.steps.append((op.results[0], body_op_fn(op), tuple(op.operands)))
        self.targets = tuple(targets)

    def __call__(self, env: dict[SSAValue, object], out: np.ndarray | None = None) -> list | None:
        """The target values; or, given `out` and a single target computed by a final ufunc, write
        that ufunc's result straight into `out` (no temporary, no copy) and return None."""
        env = dict(env)
        steps = self.steps
        direct = (out is not None and len(self.targets) == 1 and steps and steps[-1][0] is self.targets[0]
                  and getattr(steps[-1][1], "nout", None) == 1)
        for result, fn, operands in steps[:-1] if direct else steps:
            env[result] = fn(*(env[v] for v in operands))
        if direct:
            _, fn, operands = steps[-1]
            fn(*(env[v] for v in operands), out=out, casting="unsafe")
            return None
        return [env[t] for t in self.targets]
