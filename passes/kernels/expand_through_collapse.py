"""`expand-through-collapse`: an elementwise op reading a `collapse_shape` runs at the rank before it.

A grouped convolution is lowered with its groups as an axis of their own (`1x28x28x4x34`), and the
bias and ReLU after it read its result collapsed back to `1x28x28x136`, so `form-kernels` cannot
make them the convolution's epilogue:

    %c = kernel.dispatch {root = "conv"} ... : tensor<1x28x28x4x34xf32>
    %r = tensor.collapse_shape %c [[0], [1], [2], [3, 4]] : ... into tensor<1x28x28x136xf32>
    %y = linalg.generic ins(%r, %bias : 1x28x28x136, 136) outs(%e : 1x28x28x136) {addf}

As MLIR's `linalg-fuse-elementwise-ops` folds a reshape into its consumer by expansion, this pass
runs such an all-parallel generic over the expanded loops: each loop of a collapsed axis becomes the
loops of the axes it was collapsed from. It reads `%c` itself; another operand indexed by a
collapsed loop is expanded the same way (`tensor.expand_shape`; an operand reading a collapsed loop
through a constant or not at all is read as it was), it writes a `tensor.empty` of the expanded
shape, and its result is collapsed again for its readers:

    %b4 = tensor.expand_shape %bias [[0, 1]] : tensor<136xf32> into tensor<4x34xf32>
    %y5 = linalg.generic ins(%c, %b4 : 1x28x28x4x34, 4x34) outs(%e5 : 1x28x28x4x34) {addf}
    %y = tensor.collapse_shape %y5 [[0], [1], [2], [3, 4]] : ... into tensor<1x28x28x136xf32>

Only generics reading a collapse with their output's (identity) map change; bodies reading
`linalg.index`, and maps other than loops and constants, are left alone.
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
from xrelay.passes.kernels.drop_unit_dims import erase_dead_reshapes

EXPANDED = Statistic("num-ops-expanded", "Number of elementwise ops run at the rank before a collapse")


def collapse_groups(op: tensor.CollapseShapeOp) -> list[list[int]]:
    return [[int(axis.value.data) for axis in group.data] for group in op.reassociation.data]


class ExpandThroughCollapse(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.GenericOp, rewriter: PatternRewriter) -> None:
        if len(op.outputs) != 1 or len(op.results) != 1 or any(str(i.data) != "parallel" for i in op.iterator_types):
            return
        maps = [m.data for m in op.indexing_maps]
        if not all(isinstance(v.type, TensorType) for v in op.operands) or maps[-1] != AffineMap.identity(len(maps[-1].results)):
            return
        if any(isinstance(inner, linalg.IndexOp) for inner in op.body.walk()):
            return
        collapse = next((v.owner for v, m in zip(op.inputs, maps) if m == maps[-1]
                         and isinstance(v.owner, tensor.CollapseShapeOp)), None)
        if collapse is None:
            return
        groups = collapse_groups(collapse)
        wide = tuple(collapse.src.type.get_shape())
        if len(groups) != len(maps[-1].results) or all(sum(wide[a] != 1 for a in g) < 2 for g in groups):
            return  # (a collapse of unit axes only: drop-unit-dims' case, the other way round)
        loops = [[AffineDimExpr(a) for a in group] for group in groups]  # each old loop's new loops
        inputs, new_maps = [], []
        for value, amap in zip(op.inputs, maps):
            if amap == maps[-1] and isinstance(value.owner, tensor.CollapseShapeOp) \
                    and collapse_groups(value.owner) == groups and tuple(value.owner.src.type.get_shape()) == wide:
                inputs.append(value.owner.src)
                new_maps.append(AffineMap.identity(len(wide)))
                continue
            expanded = self.expand_operand(value, amap, groups, wide, loops, rewriter)
            if expanded is None:
                return
            inputs.append(expanded[0])
            new_maps.append(expanded[1])
        element = op.outputs[0].type.get_element_type()
        init = tensor.EmptyOp([], TensorType(element, wide))
        rewriter.insert_op(init)
        generic = linalg.GenericOp(inputs, [init.results[0]], op.body.clone(),
                                   [AffineMapAttr(m) for m in [*new_maps, AffineMap.identity(len(wide))]],
                                   [op.iterator_types.data[0]] * len(wide), [init.results[0].type])
        back = tensor.CollapseShapeOp.build(operands=[generic.results[0]], result_types=[op.results[0].type],
                                            properties={"reassociation": reassociation(groups)})
        rewriter.replace_op(op, [generic, back])
        EXPANDED.add()

    @staticmethod
    def expand_operand(value: SSAValue, amap: AffineMap, groups: list[list[int]], wide: tuple[int, ...],
                       loops: list[list[AffineDimExpr]], rewriter: PatternRewriter) -> tuple[SSAValue, AffineMap] | None:
        """`value` with each axis a collapsed loop indexes alone expanded as that loop is, and its map
        over the new loops; None when an axis reads a loop otherwise."""
        shape = value.type.get_shape()
        results, operand_groups, new_shape = [], [], []
        for axis, expr in enumerate(amap.results):
            if isinstance(expr, AffineConstantExpr):
                results.append(expr)
                operand_groups.append([len(new_shape)])
                new_shape.append(shape[axis])
            elif isinstance(expr, AffineDimExpr):
                group = groups[expr.position]
                if len(group) > 1 and shape[axis] != 1:
                    operand_groups.append(list(range(len(new_shape), len(new_shape) + len(group))))
                    new_shape.extend(wide[a] for a in group)
                    results.extend(loops[expr.position])
                else:  # (a broadcast axis of extent 1 stays one axis, read at its only index)
                    results.append(AffineConstantExpr(0) if len(group) > 1 else loops[expr.position][0])
                    operand_groups.append([len(new_shape)])
                    new_shape.append(shape[axis])
            else:
                return None
        new_map = AffineMap(len(wide), 0, tuple(results))
        if len(new_shape) == len(shape):
            return value, new_map
        element = value.type.get_element_type()
        expand = tensor.ExpandShapeOp(value, [], reassociation(operand_groups), new_shape,
                                      TensorType(element, new_shape))
        rewriter.insert_op(expand)
        return expand.results[0], new_map


@register_xrelay_pass("expand-through-collapse", opt_level=0, statistics=(EXPANDED, REWRITES))
@dataclass(frozen=True)
class ExpandThroughCollapseShape(XRelayPass):
    """Run each all-parallel generic reading a collapse_shape at the rank before the collapse."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_module(ExpandThroughCollapse(), op)
        erase_dead_reshapes(op)
