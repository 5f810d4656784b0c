"""xrelay's `linalg` dialect: xDSL 0.75's, with the named pooling ops upstream MLIR writes defined as upstream does.

`linalg.generic` also parses several results, `-> (t1, t2)` (xDSL 0.75's parser fails on them).
xDSL's `linalg.pooling_nchw_max` yields `max(input, window)` (the window is a shape-only operand,
so the result is garbage); upstream's yields `max(out, in)`. `linalg.pooling_nchw_sum`, `pooling_nhwc_max`
and `pooling_nhwc_sum` are missing from xDSL, and torch-mlir's ONNX path writes them for every
average and global-average pool. Each op here has upstream's indexing maps and body
(`O = combine(O, I)`), so the executors and `convert-linalg-to-loops` run it from them.
`LINALG` replaces xDSL's dialect in `make_context`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat
from xdsl.dialects.linalg import Linalg
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import PoolingOperation
from xdsl.ir import Attribute, BlockArgument, Dialect, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.irdl import irdl_op_definition
from xdsl.parser import Parser

_COMBINE = {("max", True): arith.MaximumfOp, ("max", False): arith.MaxSIOp,
            ("sum", True): arith.AddfOp, ("sum", False): arith.AddiOp}


class UpstreamPooling(PoolingOperation):
    """A 2-D pooling op as upstream's OpDSL defines it: loops (n, c, oh, ow, kh, kw) for NCHW,
    (n, oh, ow, c, kh, kw) for NHWC; the second input only gives the window its shape."""

    LAYOUT: ClassVar[str]
    COMBINE: ClassVar[str]

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        arg_types = cls.body_arg_types((*inputs, *outputs))
        combine = _COMBINE[(cls.COMBINE, isinstance(arg_types[-1], AnyFloat))]

        @Builder.implicit_region(arg_types)
        def hidden_region(args: tuple[BlockArgument, ...]) -> None:
            linalg.YieldOp(combine(args[2], args[0]).result)

        return hidden_region

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        stride_h, stride_w = self.strides.get_values()
        dilation_h, dilation_w = self.dilations.get_values()
        if self.LAYOUT == "NCHW":
            n, c, oh, ow, kh, kw = (AffineDimExpr(d) for d in range(6))
        else:
            n, oh, ow, c, kh, kw = (AffineDimExpr(d) for d in range(6))
        h, w = oh * stride_h + kh * dilation_h, ow * stride_w + kw * dilation_w
        data = (n, c, h, w) if self.LAYOUT == "NCHW" else (n, h, w, c)
        out = (n, c, oh, ow) if self.LAYOUT == "NCHW" else (n, oh, ow, c)
        return AffineMap(6, 0, data), AffineMap(6, 0, (kh, kw)), AffineMap(6, 0, out)


def _pooling_op(class_name: str, op_name: str, layout: str, combine: str) -> type[UpstreamPooling]:
    """The IRDL op class of one pooling op: `O = combine(O, I)` over the windows of an `layout` input."""
    out, data = ("n, c, oh, ow", "n, c, oh * s + kh * d, ow * s + kw * d") if layout == "NCHW" else \
        ("n, oh, ow, c", "n, oh * s + kh * d, ow * s + kw * d, c")
    namespace = {
        "name": op_name, "LAYOUT": layout, "COMBINE": combine, "__module__": __name__,
        "__annotations__": {"LAYOUT": ClassVar[str], "COMBINE": ClassVar[str]},
        "__doc__": f"`{op_name}`: O[{out}] = {combine}(O, I[{data}]) (upstream's definition).",
    }
    return irdl_op_definition(type(class_name, (UpstreamPooling,), namespace))


PoolingNchwMaxOp = _pooling_op("PoolingNchwMaxOp", "linalg.pooling_nchw_max", "NCHW", "max")
PoolingNchwSumOp = _pooling_op("PoolingNchwSumOp", "linalg.pooling_nchw_sum", "NCHW", "sum")
PoolingNhwcMaxOp = _pooling_op("PoolingNhwcMaxOp", "linalg.pooling_nhwc_max", "NHWC", "max")
PoolingNhwcSumOp = _pooling_op("PoolingNhwcSumOp", "linalg.pooling_nhwc_sum", "NHWC", "sum")


class _ResultTypeListParser:
    """A view of a Parser on which `-> (t1, t2)` after a region is read as a list of result types
    (kept in `types`), where xDSL's generic parser reads one attribute and fails."""

    def __init__(self, parser: Parser):
        self._parser = parser
        self.types: list[Attribute] | None = None

    def __getattr__(self, name: str):
        return getattr(self._parser, name)

    def parse_optional_punctuation(self, punctuation: str):
        found = self._parser.parse_optional_punctuation(punctuation)
        if punctuation == "->" and found and self._parser.parse_optional_punctuation("("):
            self.types = self._parser.parse_comma_separated_list(Parser.Delimiter.NONE, self._parser.parse_type)
            self._parser.parse_punctuation(")")
            return None
        return found


class GenericOp(linalg.GenericOp):  # xDSL's definition, inherited as is (re-deriving it fails)
    """`linalg.generic` that also parses upstream's several results `-> (t1, t2)` (xDSL 0.75's
    parser takes one result type; its printer already writes the list)."""

    @classmethod
    def parse(cls, parser: Parser) -> GenericOp:
        view = _ResultTypeListParser(parser)
        op = super().parse(view)  # type: ignore[arg-type]
        if view.types is None:
            return op
        generic = cls(list(op.inputs), list(op.outputs), op.detach_region(op.body), op.indexing_maps,
                      op.iterator_types, view.types, op.doc, op.library_call)
        generic.attributes |= op.attributes
        op.erase()
        return generic


POOLING_OPS = (PoolingNchwMaxOp, PoolingNchwSumOp, PoolingNhwcMaxOp, PoolingNhwcSumOp)

REPLACED_OPS = (*POOLING_OPS, GenericOp)

LINALG = Dialect(
    "linalg",
    [op for op in Linalg.operations if op.name not in {p.name for p in REPLACED_OPS}] + list(REPLACED_OPS),
    list(Linalg.attributes),
)
"""xDSL's linalg dialect with the ops above in place of (or beside) its own."""
