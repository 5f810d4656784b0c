"""`drop-unit-dims`: an elementwise op reading a reshape that only added unit dimensions runs at the
rank of the value before the reshape.

A matmul of a 3-D value (a transformer's `1x197x192` activations times a weight) is lowered as a 2-D
`linalg.matmul` between reshapes, so its bias add reads the product through an `expand_shape` back to
`1x197x576`, and `form-kernels` cannot make the add the matmul's epilogue:

    %p = kernel.dispatch {root = "matmul"} ... : tensor<197x576xf32>
    %r = tensor.expand_shape (tensor.collapse_shape %p) : ... into tensor<1x197x576xf32>
    %y = linalg.generic ins(%r, %bias : 1x197x576, 576) outs(%e : 1x197x576) {addf}

Like MLIR's `linalg-fold-unit-extent-dims`, this pass drops the loops of extent 1 of such an
all-parallel generic: it reads `%p` itself (the reshape chain's value of the reduced shape), the other
operands as they are with index 0 where their maps named a unit loop, writes a `tensor.empty` of the
reduced shape, and its result is expanded back for the other readers:

    %y2 = linalg.generic ins(%p, %bias : 197x576, 576) outs(%e2 : 197x576) {addf}
    %y = tensor.expand_shape %y2 : tensor<197x576xf32> into tensor<1x197x576xf32>

Only generics with such a reshaped input change (an image's batch of 1 feeding a convolution's epilogue
stays as it is, so the epilogue keeps reading the convolution); bodies reading `linalg.index` and
maps other than loops and constants are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import tensor
from xdsl.dialects.builtin import AffineMapAttr, ModuleOp, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from xrelay.instrument.statistics import Statistic
from xrelay.lowering.builders import reassociation
from xrelay.pass_base import REWRITES, XRelayPass, register_xrelay_pass, rewrite_module

DROPPED = Statistic("num-unit-dims-dropped", "Number of elementwise ops run without their unit loops")

_RESHAPES = (tensor.CollapseShapeOp, tensor.ExpandShapeOp)


def _shape(value: SSAValue) -> tuple[int, ...] | None:
    return tuple(value.type.get_shape()) if isinstance(value.type, TensorType) else None


def before_reshapes(value: SSAValue, shape: tuple[int, ...]) -> SSAValue | None:
    """The value of `shape` that a chain of reshapes of `value` starts from (row-major reshapes keep
    the order of the elements, so it holds the same elements), or None."""
    while isinstance(value.owner, _RESHAPES):
        value = value.owner.operands[0]
        if _shape(value) == shape:
            return value
    return None


def unit_groups(shape: tuple[int, ...], dropped: list[int]) -> list[list[int]]:
    """Reassociation groups merging each dropped (unit) axis into the next kept axis (the last kept
    one for trailing unit axes)."""
    groups: list[list[int]] = []
    pending: list[int] = []
    for axis in range(len(shape)):
        pending.append(axis)
        if axis not in dropped:
            groups.append(pending)
            pending = []
    groups[-1].extend(pending)
    return groups


class DropUnitLoops(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.GenericOp, rewriter: PatternRewriter) -> None:
        if len(op.outputs) != 1 or len(op.results) != 1 or any(str(i.data) != "parallel" for i in op.iterator_types):
            return
        shapes = [_shape(v) for v in op.operands]
        maps = [m.data for m in op.indexing_maps]
        out_shape = shapes[-1]
        if None in shapes or maps[-1] != AffineMap.identity(len(out_shape)):
            return
        if any(isinstance(inner, linalg.IndexOp) for inner in op.body.walk()):
            return
        unit = {d for d, n in enumerate(out_shape) if n == 1}
        reduced = tuple(n for d, n in enumerate(out_shape) if d not in unit)
        if not unit or not reduced or not any(
                m == maps[-1] and before_reshapes(v, reduced) is not None for v, m in zip(op.inputs, maps)):
            return
        renumber = {d: AffineDimExpr(i) for i, d in enumerate(d for d in range(len(out_shape)) if d not in unit)}
        inputs, new_maps = [], []
        for value, amap in zip(op.inputs, maps):
            origin = before_reshapes(value, reduced) if amap == maps[-1] else None
            if origin is not None:
                inputs.append(origin)
                new_maps.append(AffineMap.identity(len(reduced)))
                continue
            results = []
            for expr in amap.results:  # a unit loop's index is 0
                if isinstance(expr, AffineDimExpr):
                    results.append(AffineConstantExpr(0) if expr.position in unit else renumber[expr.position])
                elif isinstance(expr, AffineConstantExpr):
                    results.append(expr)
                else:
                    return
            inputs.append(value)
            new_maps.append(AffineMap(len(reduced), 0, tuple(results)))
        init = self.reduced_init(op.outputs[0], out_shape, reduced, sorted(unit), rewriter)
        generic = linalg.GenericOp(inputs, [init], op.body.clone(),
                                   [AffineMapAttr(m) for m in [*new_maps, AffineMap.identity(len(reduced))]],
                                   [op.iterator_types.data[0]] * len(reduced), [init.type])
        expand = tensor.ExpandShapeOp(generic.results[0], [], reassociation(unit_groups(out_shape, sorted(unit))),
                                      list(out_shape), op.results[0].type)
        rewriter.replace(op, [generic, expand])
        DROPPED.add()

    @staticmethod
    def reduced_init(value: SSAValue, shape: tuple[int, ...], reduced: tuple[int, ...], unit: list[int],
                     rewriter: PatternRewriter) -> SSAValue:
        """The output's init without its unit axes: a new empty, the value it was reshaped from, or a collapse."""
        element = value.type.get_element_type()
        if isinstance(value.owner, tensor.EmptyOp):
            new = tensor.EmptyOp([], TensorType(element, reduced))
        elif (origin := before_reshapes(value, reduced)) is not None:
            return origin
        else:
            new = tensor.CollapseShapeOp.build(operands=[value], result_types=[TensorType(element, reduced)],
                                               properties={"reassociation": reassociation(unit_groups(shape, unit))})
        rewriter.insert(new)
        return new.results[0]


@register_xrelay_pass("drop-unit-dims", opt_level=0, statistics=(DROPPED, REWRITES))
@dataclass(frozen=True)
class DropUnitDims(XRelayPass):
    """Run each all-parallel generic reading a reshape that added unit dims at the rank before it."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_module(DropUnitLoops(), op)
        erase_dead_reshapes(op)


def erase_dead_reshapes(module: ModuleOp) -> None:
    """Erase the reshapes and empties nothing reads any more."""
    for dead in reversed(list(module.walk())):
        if isinstance(dead, (*_RESHAPES, tensor.EmptyOp)) and not any(r.uses for r in dead.results):
            dead.detach()
            dead.erase()
