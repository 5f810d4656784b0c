"""Small IR builders the nn → linalg patterns share: scalars, empty/filled tensors,
`linalg.generic` from maps and a body function, and reshapes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, math, tensor
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    DYNAMIC_INDEX,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ShapedType,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from xrelay.dialects.constant import dtype_of

PARALLEL = linalg.IteratorTypeAttr.parallel()
REDUCTION = linalg.IteratorTypeAttr.reduction()


def is_float(element_type: Attribute) -> bool:
    """Whether `element_type` is a floating-point type."""
    return isinstance(element_type, AnyFloat)


def dims(count: int) -> list[AffineExpr]:
    """The loop dimensions d0 .. d{count-1}."""
    return [AffineExpr.dimension(i) for i in range(count)]


def affine_map(num_dims: int, results: Sequence[AffineExpr | int]) -> AffineMap:
    """An affine map over `num_dims` loops; ints become constant results."""
    exprs = tuple(AffineExpr.constant(r) if isinstance(r, int) else r for r in results)
    return AffineMap(num_dims, 0, exprs)


class Emitter:
    """Collects the ops one nn op lowers to, in order (`ops`), and builds them."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []

    def add(self, op: Operation) -> SSAValue:
        """Append `op` and return its single result (ValueError if it holds a static index that is not
        one, see `check_static_indices`)."""
        check_static_indices(op)
        self.ops.append(op)
        return op.results[0]

    def scalar(self, value: float | int, element_type: Attribute) -> SSAValue:
        """An `arith.constant` scalar of `element_type`."""
        return self.add(scalar_constant_op(value, element_type))

    def constant(self, array: np.ndarray, element_type: Attribute) -> SSAValue:
        """An `arith.constant dense<...>` tensor holding `array` converted to `element_type`."""
        data = np.ascontiguousarray(array, dtype=dtype_of(element_type))
        ttype = TensorType(element_type, data.shape)
        return self.add(arith.ConstantOp(DenseIntOrFPElementsAttr(ttype, BytesAttr(data.tobytes())), ttype))

    def empty(self, shape: Sequence[int], element_type: Attribute) -> SSAValue:
        """`tensor.empty` of a static shape."""
        return self.add(tensor.EmptyOp([], TensorType(element_type, shape)))

    def filled(self, value: float | int, shape: Sequence[int], element_type: Attribute) -> SSAValue:
        """A tensor of `shape` filled with `value` (`tensor.empty` + `linalg.fill`)."""
        init = self.empty(shape, element_type)
        scalar = self.scalar(value, element_type)
        return self.add(linalg.FillOp([scalar], [init], [init.type]))

    def generic(
        self,
        inputs: Sequence[SSAValue],
        init: SSAValue,
        maps: Sequence[AffineMap],
        iterators: Sequence[Attribute],
        body: Callable[[BodyBuilder, Sequence[SSAValue]], SSAValue],
    ) -> SSAValue:
        """A one-output `linalg.generic`; `body(b, args)` builds the scalar body and returns the yielded value."""
        arg_types = [element_of(v.type) for v in (*inputs, init)]
        block = Block(arg_types=arg_types)
        builder = BodyBuilder(block)
        yielded = body(builder, block.args)
        block.add_op(linalg.YieldOp(yielded))
        return self.add(
            linalg.GenericOp(
                inputs, [init], Region(block), [AffineMapAttr(m) for m in maps], list(iterators), [init.type]
            )
        )

    def pad(self, value: SSAValue, low: Sequence[int], high: Sequence[int], fill_value: float | int) -> SSAValue:
        """`value` with `low[i]` / `high[i]` elements of `fill_value` before / after axis i: a
        `tensor.pad` (the form upstream frontends write and IREE compiles) yielding a constant."""
        ttype = value.type
        assert isinstance(ttype, TensorType)
        element_type = ttype.get_element_type()
        shape = [size + before + after for size, before, after in zip(ttype.get_shape(), low, high)]
        body = Block(arg_types=[IndexType()] * len(shape))
        fill = scalar_constant_op(fill_value, element_type)
        body.add_ops([fill, tensor.YieldOp(fill.result)])
        return self.add(tensor.PadOp(value, [], [], Region(body), list(low), list(high), TensorType(element_type, shape)))

    def collapse(self, value: SSAValue, groups: Sequence[Sequence[int]]) -> SSAValue:
        """`tensor.collapse_shape` of `value` merging each group of its axes into one."""
        ttype = value.type
        assert isinstance(ttype, TensorType)
        shape = ttype.get_shape()
        sizes = [int(np.prod([shape[axis] for axis in group])) for group in groups]
        return self.add(tensor.CollapseShapeOp.build(
            operands=[value], result_types=[TensorType(ttype.get_element_type(), sizes)],
            properties={"reassociation": reassociation(groups)}))

    def reshape(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        """`value` viewed with a new static shape: collapse to 1-D, then expand (each step only if needed)."""
        ttype = value.type
        assert isinstance(ttype, TensorType)
        src_shape = tuple(ttype.get_shape())
        shape = tuple(shape)
        if src_shape == shape:
            return value
        element_type = ttype.get_element_type()
        if not shape or not src_shape:  # to or from rank 0: one op, its reassociation empty
            if not shape:
                return self.add(tensor.CollapseShapeOp.build(
                    operands=[value], result_types=[TensorType(element_type, [])],
                    properties={"reassociation": reassociation([])}))
            return self.add(tensor.ExpandShapeOp(value, [], reassociation([]), list(shape),
                                                 TensorType(element_type, shape)))
        if len(src_shape) != 1:
            flat_type = TensorType(element_type, [int(np.prod(src_shape))])
            value = self.add(
                tensor.CollapseShapeOp.build(
                    operands=[value],
                    result_types=[flat_type],
                    properties={"reassociation": reassociation([list(range(len(src_shape)))])},
                )
            )
        if len(shape) != 1:
            value = self.add(
                tensor.ExpandShapeOp(
                    value,
                    [],
                    reassociation([list(range(len(shape)))]),
                    list(shape),
                    TensorType(element_type, shape),
                )
            )
        return value


def check_static_indices(op: Operation) -> None:
    """ValueError unless every static index `op` holds is one: an entry of a `static_*` index list
    (offsets, sizes, strides, pads, output shapes) equal to xDSL's dynamic-index marker would make
    the op claim a dynamic operand it lacks (printing fails), and a result type needs sizes >= 0.

    Only unverified input (`--disable-verify`) gets here with such values: the nn verifiers reject
    them first."""
    for name, prop in op.properties.items():
        if name.startswith("static_") and isinstance(prop, DenseArrayBase) and DYNAMIC_INDEX in prop.get_values():
            raise ValueError(f"{op.name} would get {DYNAMIC_INDEX} in {name}, xDSL's marker of a dynamic index, "
                             "which a static index cannot be")
    for result in op.results:
        if isinstance(result.type, ShapedType) and any(size < 0 for size in result.type.get_shape()):
            raise ValueError(f"{op.name} would have a negative or dynamic size in its result type {result.type}")


def reassociation(groups: Sequence[Sequence[int]]) -> ArrayAttr:
    """A collapse/expand reassociation attribute `[[0, 1], [2]]`."""
    return ArrayAttr([ArrayAttr([IntegerAttr(i, i64) for i in group]) for group in groups])


def element_of(value_type: Attribute) -> Attribute:
    """The element type of a shaped type (a scalar type is its own element type)."""
    if isinstance(value_type, TensorType):
        return value_type.get_element_type()
    return value_type


def scalar_constant_op(value: float | int, element_type: Attribute) -> arith.ConstantOp:
    """`arith.constant value : element_type` (±inf allowed for floats)."""
    if is_float(element_type):
        return arith.ConstantOp(FloatAttr(float(value), element_type))
    assert isinstance(element_type, IntegerType)
    return arith.ConstantOp(IntegerAttr(int(value), element_type))


def lowest(element_type: Attribute) -> float | int:
    """The identity of max: -inf for floats, the smallest value for signed integers."""
    if is_float(element_type):
        return float("-inf")
    assert isinstance(element_type, IntegerType)
    return -(1 << (element_type.width.data - 1))


class BodyBuilder:
    """Appends scalar arith/math ops to a linalg body block, choosing float or integer forms."""

    _FLOAT = {"add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp, "div": arith.DivfOp,
              "max": arith.MaximumfOp, "min": arith.MinimumfOp, "pow": math.PowFOp, "copysign": math.CopySignOp}
    _INT = {"add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp, "div": arith.DivSIOp,
            "max": arith.MaxSIOp, "min": arith.MinSIOp, "rem": arith.RemSIOp}
    _FLOAT_UNARY = {"tanh": math.TanhOp, "erf": math.ErfOp, "exp": math.ExpOp, "log": math.LogOp,
                    "abs": math.AbsFOp, "sqrt": math.SqrtOp, "floor": math.FloorOp}
    _INT_UNARY = {"abs": math.AbsIOp}

    def __init__(self, block: Block) -> None:
        self.block = block

    def _add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def binary(self, kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """`lhs <kind> rhs` for kind in add, sub, mul, div, max, min (NaN-propagating for floats, as
        numpy's maximum/minimum), for floats only pow (`math.powf`) and copysign, for integers
        and indices rem."""
        table = self._FLOAT if is_float(lhs.type) else self._INT
        return self._add(table[kind](lhs, rhs))

    def unary(self, kind: str, value: SSAValue) -> SSAValue:
        """`kind(value)` for kind in tanh, erf, exp, log, sqrt, floor, abs (`math` ops; abs also on integers)."""
        table = self._FLOAT_UNARY if is_float(value.type) else self._INT_UNARY
        return self._add(table[kind](value))

    def compare(self, predicate: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """`arith.cmpf` with `predicate` (oeq, one, olt, ogt, ...)."""
        return self._add(arith.CmpfOp(lhs, rhs, predicate))

    _ORDERED = {"eq": "oeq", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
    _SIGNED = {"eq": "eq", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "ne": "ne"}

    def compare_values(self, kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """The i1 `lhs <kind> rhs` for kind in eq, lt, le, gt, ge (ordered `arith.cmpf`: false
        with a NaN, as numpy's) and, on integers, ne (signed `arith.cmpi`)."""
        if is_float(lhs.type):
            return self.compare(self._ORDERED[kind], lhs, rhs)
        return self._add(arith.CmpiOp(lhs, rhs, self._SIGNED[kind]))

    def truth(self, value: SSAValue) -> SSAValue:
        """An integer read as a truth value: the i1 `value != 0`."""
        return self.compare_values("ne", value, self.scalar(0, value.type))

    def as_integer(self, flag: SSAValue, element_type: Attribute) -> SSAValue:
        """An i1 as 0/1 of the integer `element_type` (an `arith.select`, which every executor runs)."""
        return self.select(flag, self.scalar(1, element_type), self.scalar(0, element_type))

    def logical(self, kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """`arith.andi`/`ori`/`xori` (kind and, or, xor) of two i1 values."""
        return self._add({"and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp}[kind](lhs, rhs))

    def select(self, condition: SSAValue, if_true: SSAValue, if_false: SSAValue) -> SSAValue:
        """`arith.select`."""
        return self._add(arith.SelectOp(condition, if_true, if_false))

    def where_positive(self, value: SSAValue, otherwise: SSAValue) -> SSAValue:
        """`value > 0 ? value : otherwise` (`arith.cmpf ogt` + `arith.select`; NaN takes `otherwise`)."""
        return self.select(self.compare("ogt", value, self.scalar(0, value.type)), value, otherwise)

    def scalar(self, value: float | int, element_type: Attribute) -> SSAValue:
        """A constant inside the body."""
        return self._add(scalar_constant_op(value, element_type))

    def negate(self, value: SSAValue) -> SSAValue:
        """`-value` (`arith.negf`, or `0 - value` for integers)."""
        if is_float(value.type):
            return self._add(arith.NegfOp(value))
        return self.binary("sub", self.scalar(0, value.type), value)

    # Index arithmetic, for bodies that compute where to read (gathers: `tensor.extract`).
    def loop_index(self, dim: int) -> SSAValue:
        """`linalg.index dim`: the iteration's position along loop `dim`."""
        return self._add(linalg.IndexOp(dim))

    def index(self, value: int) -> SSAValue:
        """An `index` constant."""
        return self._add(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def add_index_cast(self, value: SSAValue, integer_type: Attribute) -> SSAValue:
        """An `index` as an integer of `integer_type` (`arith.index_cast`)."""
        return self._add(arith.IndexCastOp(value, integer_type))

    def to_index(self, value: SSAValue) -> SSAValue:
        """An integer scalar as an `index` (`arith.index_cast`)."""
        return self._add(arith.IndexCastOp(value, IndexType()))

    def extract(self, source: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
        """`tensor.extract source[indices]`: one element of a tensor the body captures."""
        return self._add(tensor.ExtractOp(source, list(indices), element_of(source.type)))

    def sqrt(self, value: SSAValue) -> SSAValue:
        """`math.sqrt value`."""
        return self._add(math.SqrtOp(value))

    def exp(self, value: SSAValue) -> SSAValue:
        """`math.exp value`."""
        return self._add(math.ExpOp(value))


def conv_on_tensors(op: linalg.Conv2DNhwc_HwcfOp) -> tuple[SSAValue, SSAValue, SSAValue, list[int], list[int]] | None:
    """(input, weight, init, strides, dilations) of a named convolution on tensors; None on memrefs."""
    data, weight = op.inputs
    (init,) = op.outputs
    if not all(isinstance(v.type, TensorType) for v in (data, weight, init)):
        return None
    return (data, weight, init, [int(v) for v in op.strides.get_values()],
            [int(v) for v in op.dilations.get_values()])


class TensorConvPattern(RewritePattern):
    """Base of the patterns that rewrite a `linalg.conv_2d_nhwc_hwcf` on tensors: `rewrite_conv` is
    called with the operands `conv_on_tensors` reads (never for a convolution on memrefs)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.Conv2DNhwc_HwcfOp, rewriter: PatternRewriter) -> None:
        operands = conv_on_tensors(op)
        if operands is not None:
            self.rewrite_conv(op, rewriter, *operands)

    def rewrite_conv(self, op: linalg.Conv2DNhwc_HwcfOp, rewriter: PatternRewriter, data: SSAValue, weight: SSAValue,
                     init: SSAValue, strides: list[int], dilations: list[int]) -> None:
        raise NotImplementedError
