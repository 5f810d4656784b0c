"""`linalg.matmul` and `linalg.batch_matmul` as upstream MLIR writes them, with `indexing_maps`.

Upstream's contraction ops take an optional `indexing_maps = [...]` before `ins` for transposed
operands (`linalg.matmul indexing_maps = [(m, k), (n, k), (m, n)]` is x * w^T, what `nn.dense`
computes). xDSL 0.75's `linalg.matmul` has the property but neither parses nor prints it (the maps
are silently dropped, so the text means another product), and it has no `linalg.batch_matmul`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import AffineMapAttr, AnyFloat, ArrayAttr, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import NamedOperation
from xdsl.ir import Attribute, BlockArgument, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.irdl import irdl_op_definition, prop_def
from xdsl.parser import Parser
from xdsl.printer import Printer


def _maps(*results: str) -> ArrayAttr[AffineMapAttr]:
    """Maps over loops named by the letters of the last result ("bmn" for batch_matmul's output)."""
    loops = results[-1] + "k"
    return ArrayAttr([AffineMapAttr(AffineMap(len(loops), 0, tuple(AffineDimExpr(loops.index(letter)) for letter in r)))
                      for r in results])


class _WithIndexingMaps:
    """Parse and print `indexing_maps = [...]` in front of `ins` when the maps are not the default."""

    DEFAULT_MAPS: ClassVar[ArrayAttr[AffineMapAttr]]

    @classmethod
    def parse(cls, parser: Parser):
        maps = None
        if parser.parse_optional_characters("indexing_maps") is not None:
            parser.parse_punctuation("=")
            maps = parser.parse_attribute()
            if not isinstance(maps, ArrayAttr) or not all(isinstance(m, AffineMapAttr) for m in maps.data):
                parser.raise_error("indexing_maps must be a list of affine maps")
        op = super().parse(parser)  # type: ignore[misc]
        if maps is not None:
            op.properties["indexing_maps"] = maps
        return op

    def print(self, printer: Printer):
        if self.indexing_maps != self.DEFAULT_MAPS:  # type: ignore[attr-defined]
            printer.print_string(" indexing_maps = ")
            printer.print_attribute(self.indexing_maps)  # type: ignore[attr-defined]
        super().print(printer)  # type: ignore[misc]


class MatmulOp(_WithIndexingMaps, linalg.MatmulOp):  # xDSL's definition, inherited as is
    """`linalg.matmul` with upstream's optional `indexing_maps`: O[m, n] += A[m, k] * B[k, n]."""

    DEFAULT_MAPS: ClassVar[ArrayAttr[AffineMapAttr]] = _maps("mk", "kn", "mn")

    def __init__(self, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue] = (),
                 res: Sequence[Attribute] | None = None, indexing_maps: ArrayAttr[AffineMapAttr] | None = None):
        super().__init__(inputs, outputs, res)
        if indexing_maps is not None:
            self.properties["indexing_maps"] = indexing_maps


def _multiply_add(arg_types: Sequence[Attribute]) -> Region:
    add, mul = (arith.AddfOp, arith.MulfOp) if isinstance(arg_types[-1], AnyFloat) else (arith.AddiOp, arith.MuliOp)

    @Builder.implicit_region(arg_types)
    def body(args: tuple[BlockArgument, ...]) -> None:
        linalg.YieldOp(add(args[2], mul(args[0], args[1]).result).result)

    return body


@irdl_op_definition
class BatchMatmulOp(_WithIndexingMaps, NamedOperation):
    """`linalg.batch_matmul`: O[b, m, n] += A[b, m, k] * B[b, k, n] (upstream's definition, with its
    optional `indexing_maps` for transposed operands)."""

    name = "linalg.batch_matmul"
    PRINT_ATTRS_IN_FRONT: ClassVar[bool] = True
    DEFAULT_MAPS: ClassVar[ArrayAttr[AffineMapAttr]] = _maps("bmk", "bkn", "bmn")

    indexing_maps = prop_def(ArrayAttr[AffineMapAttr], default_value=_maps("bmk", "bkn", "bmn"))

    def __init__(self, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue] = (),
                 res: Sequence[Attribute] | None = None, indexing_maps: ArrayAttr[AffineMapAttr] | None = None):
        super().__init__(
            ins=inputs, outs=outputs,
            result_types=res if res is not None else [o.type for o in outputs if isinstance(o.type, TensorType)],
            properties={"indexing_maps": indexing_maps or self.DEFAULT_MAPS},
            hidden_region=self.get_hidden_region(inputs, outputs))

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        return _multiply_add(cls.body_arg_types((*inputs, *outputs)))

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        return tuple(m.data for m in self.indexing_maps.data)

    def get_indexing_maps(self) -> ArrayAttr[AffineMapAttr]:
        return self.indexing_maps

    def get_iterator_types(self) -> ArrayAttr[linalg.IteratorTypeAttr]:
        return ArrayAttr([linalg.IteratorTypeAttr.parallel()] * 3 + [linalg.IteratorTypeAttr.reduction()])
