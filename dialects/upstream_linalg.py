"""xrelay's `linalg` dialect: xDSL 0.75's, with the named pooling ops upstream MLIR writes defined as upstream does.

`linalg.generic` also parses several results, `-> (t1, t2)` (xDSL 0.75's parser fails on them).
xDSL's `linalg.pooling_nchw_max` yields `max(input, window)` (the window is a shape-only operand,
so the result is garbage); upstream's yields `max(out, in)`. `linalg.pooling_nchw_sum`, `pooling_nhwc_max`
and `pooling_nhwc_sum` are missing from xDSL, and torch-mlir's ONNX path writes them for every
average and global-average pool. Each op here has upstream's indexing maps and body
(`O = combine(O, I)`), so the executors and `convert-linalg-to-loops` run it from them.
`linalg.matmul` (with upstream's `indexing_maps`) and `linalg.batch_matmul` come from
`upstream_contractions`. `LINALG` replaces xDSL's dialect in `make_context`.
"""

from __future__ import annotations


from collections.abc import Sequence
from typing import ClassVar

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import AffineMapAttr, AnyFloat, ArrayAttr, ShapedType, TensorType
from xdsl.dialects.linalg import Linalg
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation, PoolingOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.ir import Attribute, Block, BlockArgument, Dialect, Operation, Region, SSAValue, SSAValues
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.irdl import irdl_op_definition, operand_def, region_def, traits_def, var_operand_def, var_result_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent
from xdsl.utils.exceptions import VerifyException

from xrelay.dialects.redefine import redefined

from xrelay.dialects.upstream_contractions import BatchMatmulOp, MatmulOp

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


def _parse_operand_list(parser: Parser, keyword: str) -> list[SSAValue]:
    """`keyword(%a, %b : T1, T2)`, or nothing when the keyword is absent."""
    if not parser.parse_optional_characters(keyword):
        return []
    pos = parser.pos
    parser.parse_punctuation("(")
    operands = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_unresolved_operand)
    parser.parse_punctuation(":")
    types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
    parser.parse_punctuation(")")
    return parser.resolve_operands(operands, types, pos)


def _print_operand_list(printer: Printer, keyword: str, operands: Sequence[SSAValue]) -> None:
    if operands:
        printer.print_string(f" {keyword}(")
        printer.print_list(operands, printer.print_ssa_value)
        printer.print_string(" : ")
        printer.print_list([v.type for v in operands], printer.print_attribute)
        printer.print_string(")")


def _element_type(value: SSAValue) -> Attribute:
    return value.type.get_element_type() if isinstance(value.type, ShapedType) else value.type


@irdl_op_definition
class MapOp(LinalgStructuredOperation):
    """`linalg.map`: `init[i] = body(ins_0[i], ..., ins_n[i], init[i])` over the init's shape (all maps
    the identity, all loops parallel), as upstream defines it; xDSL 0.75 lacks it, and upstream's
    bufferization writes one for every `tensor.pad` (`linalg.map outs(%alloc) (%init: f32) {...}`).

    Both spellings parse: the short form `linalg.map { arith.addf } ins(%a, %b : ...) outs(%c : ...)`
    (the body one op on the inputs) and the long form `... outs(...) (%in: f32, %init: f32) { ... }`,
    also with the older block that has no `%init` argument (one is added). It prints as upstream does.
    The one init is `outputs` (a one-element tuple), as the executors read every structured op."""

    name = "linalg.map"

    inputs = var_operand_def()
    outputs = operand_def(ShapedType)  # upstream's single `init`, without operand segment sizes
    res = var_result_def(TensorType)
    body = region_def("single_block")

    def __init__(self, inputs: Sequence[SSAValue], init: SSAValue, body: Region,
                 attributes: dict[str, Attribute] | None = None):
        result_types = [init.type] if isinstance(init.type, TensorType) else []
        super().__init__(operands=[inputs, init], result_types=[result_types], regions=[body],
                         attributes=attributes)

    def get_indexing_maps(self) -> ArrayAttr[AffineMapAttr]:
        rank = len(self.operands[-1].type.get_shape())
        return ArrayAttr([AffineMapAttr(AffineMap.identity(rank))] * len(self.operands))

    def get_iterator_types(self) -> ArrayAttr[IteratorTypeAttr]:
        return ArrayAttr([IteratorTypeAttr.parallel()] * len(self.operands[-1].type.get_shape()))

    def verify_(self) -> None:
        shape = self.operands[-1].type.get_shape()
        for value in self.inputs:
            if not isinstance(value.type, ShapedType) or value.type.get_shape() != shape:
                raise VerifyException(f"linalg.map: input type {value.type} does not have the init's shape {list(shape)}")
        block = self.body.block
        expected = [_element_type(v) for v in self.operands]
        if [a.type for a in block.args] != expected:
            raise VerifyException(f"linalg.map: the body takes ({', '.join(map(str, (a.type for a in block.args)))}), "
                                  f"expected the element types ({', '.join(map(str, expected))})")
        super().verify_()

    @classmethod
    def parse(cls, parser: Parser) -> MapOp:
        start = parser.pos
        payload = cls._parse_short_form_payload(parser)
        payload_end = parser.pos
        op_type = None
        if payload is not None and (op_type := parser.ctx.get_optional_op(payload[0])) is None:
            parser.raise_error(f"linalg.map: unknown op {payload[0]} in its short form", start, payload_end)
        inputs = _parse_operand_list(parser, "ins")
        pos = parser.pos
        outputs = _parse_operand_list(parser, "outs")
        if len(outputs) != 1:
            parser.raise_error(f"linalg.map takes exactly one init in outs(...), got {len(outputs)}", pos, parser.pos)
        attrs = parser.parse_optional_attr_dict()
        element_types = [_element_type(v) for v in (*inputs, *outputs)]
        if payload is not None:
            block = Block(arg_types=element_types)
            payload_attrs = payload[1]
            properties = op_type.get_irdl_definition().properties if hasattr(op_type, "get_irdl_definition") else {}
            op = op_type.create(operands=block.args[:len(inputs)], result_types=[element_types[-1]],
                                properties={k: v for k, v in payload_attrs.items() if k in properties},
                                attributes={k: v for k, v in payload_attrs.items() if k not in properties})
            block.add_ops([op, linalg.YieldOp(*op.results)])
            try:  # here, where the text is: the payload was built by this parser, not parsed as an op
                op.verify()
            except VerifyException as error:
                parser.raise_error(f"linalg.map: {op.name} in its short form: {error}", start, payload_end)
            body = Region(block)
        else:
            arguments = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parser.parse_argument)
            body = parser.parse_region(arguments)
            if len(body.block.args) == len(inputs):  # the older form: no argument for the init
                body.block.insert_arg(element_types[-1], len(inputs))
        return cls(inputs, outputs[0], body, attrs)

    @staticmethod
    def _parse_short_form_payload(parser: Parser) -> tuple[str, dict[str, Attribute]] | None:
        if parser.parse_optional_punctuation("{") is None:
            return None
        name = parser.parse_identifier(context_msg=" (the op of linalg.map's short form)")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation("}")
        return name, attrs

    def _short_form_payload(self) -> Operation | None:
        """The body's one op, if the short form can print it: it takes the inputs' arguments in
        order and its one result is yielded."""
        ops = list(self.body.block.ops)
        if len(ops) != 2 or len(ops[0].results) != 1 or len(ops[0].regions) or not self.inputs:
            return None
        payload, yielded = ops
        if list(payload.operands) != list(self.body.block.args[:len(self.inputs)]):
            return None
        return payload if list(yielded.operands) == list(payload.results) else None

    def print(self, printer: Printer) -> None:
        payload = self._short_form_payload()
        if payload is not None:
            printer.print_string(f" {{ {payload.name}")
            definition = payload.get_irdl_definition() if hasattr(payload, "get_irdl_definition") else None
            shown = {k: v for k, v in (*payload.properties.items(), *payload.attributes.items())
                     if definition is None or k not in definition.properties
                     or v != definition.properties[k].default_value}
            printer.print_op_attributes(shown)
            printer.print_string(" }")
        _print_operand_list(printer, "ins", self.inputs)
        _print_operand_list(printer, "outs", self.outputs)
        printer.print_op_attributes(self.attributes)
        if payload is None:
            with printer.indented():
                printer.print_string("\n(")
                printer.print_list(self.body.block.args, printer.print_block_argument)
                printer.print_string(") ")
                printer.print_region(self.body, print_entry_block_args=False)


MapOp.outputs = property(lambda self: SSAValues(self.operands[-1:]))  # one init, read as the list of outs


def _index_within_loops(op: linalg.IndexOp) -> None:
    """Upstream's check, which xDSL 0.75 lacks: the dimension names one of the enclosing op's loops."""
    parent = op.parent_op()
    if isinstance(parent, LinalgStructuredOperation):
        loops = len(parent.get_iterator_types())
        if op.dim.value.data >= loops:
            raise VerifyException(f"expected dim ({op.dim.value.data}) to be lower than the number of loops "
                                  f"({loops}) of the enclosing LinalgOp")


IndexOp = redefined(linalg.IndexOp, """`linalg.index` inside any structured op's body (upstream: any LinalgOp;
`linalg.map` bodies use it), where xDSL 0.75's requires a `linalg.generic` parent; its dimension must name
one of that op's loops, as upstream verifies.""",
                    traits=traits_def(HasParent(LinalgStructuredOperation)), verify=_index_within_loops)


POOLING_OPS = (PoolingNchwMaxOp, PoolingNchwSumOp, PoolingNhwcMaxOp, PoolingNhwcSumOp)

REPLACED_OPS = (*POOLING_OPS, GenericOp, MapOp, IndexOp, MatmulOp, BatchMatmulOp)

KEPT_XDSL_OPS = frozenset({"linalg.fill", "linalg.conv_2d_nchw_fchw", "linalg.conv_2d_nhwc_hwcf",
                           "linalg.conv_2d_nhwc_fhwc"})
"""xDSL's classes of upstream named ops that xrelay's lowering builds and matches by class; every
other named op of upstream's definition is `upstream_named`'s (tests/test_upstream_named_ops.py
checks all of them, these too, against numpy)."""


def _linalg_operations() -> list[type[Operation]]:
    from xrelay.dialects.upstream_named import NAMED_OP_CLASSES

    own = {op.name for op in REPLACED_OPS} | KEPT_XDSL_OPS
    generated = [cls for cls in NAMED_OP_CLASSES.values() if cls.name not in own]
    replaced = {op.name for op in REPLACED_OPS} | {cls.name for cls in generated}
    return [op for op in Linalg.operations if op.name not in replaced] + list(REPLACED_OPS) + generated


def _linalg_attributes() -> list:
    from xrelay.dialects.upstream_named import TypeFnAttr

    return [*Linalg.attributes, TypeFnAttr]


LINALG = Dialect("linalg", _linalg_operations(), _linalg_attributes())
"""xDSL's linalg dialect with the ops above, and upstream's named ops (`upstream_named`), in place
of (or beside) its own."""
