"""`nn.constant`: a tensor literal whose data lives in a `DenseIntOrFPElementsAttr`.

The op prints as ``nn.constant dense<"0x..."> : tensor<...>``. The hex is written here
with `bytes.hex` and read by slicing the input text, because xDSL's attribute printer
unpacks every element and its lexer runs a regex over the payload (both far too slow
for model weights: bound ResNet-18 is 47 MB of f32).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.irdl import IRDLOperation, attr_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import ParseError, VerifyException

from xrelay.dialects.infer import ShapeError
from xrelay.dialects.op_base import NN_ELEMENT_TYPE_NAMES, NN_ELEMENT_TYPES, LayoutRule, nn_op


# Decimal lists are kept for tiny constants only (readable scalars in lit tests).
SMALL_CONSTANT_ELEMENTS = 16


def element_type_of(dtype: np.dtype | type) -> Attribute:
    """The xDSL element type for a numpy dtype (one of NN_ELEMENT_TYPES)."""
    dtype = np.dtype(dtype)  # any byte order: the data is stored little-endian
    try:
        return _DTYPE_TO_ELEMENT[dtype.newbyteorder("<")]
    except KeyError:
        raise TypeError(f"nn.constant: unsupported dtype {dtype} (use {NN_ELEMENT_TYPE_NAMES})") from None


def dtype_of(element_type: Attribute) -> np.dtype:
    """The little-endian numpy dtype of an xDSL element type: f16/f32/f64, i1 (bool), signless or
    signed i8..i64, unsigned ui8..ui64, index (int64); TypeError for anything else."""
    if isinstance(element_type, Float16Type | Float32Type | Float64Type):
        return np.dtype(f"<f{element_type.bitwidth // 8}")
    if isinstance(element_type, IndexType):
        return np.dtype("<i8")
    if isinstance(element_type, IntegerType) and element_type.width.data in (1, 8, 16, 32, 64):
        width = element_type.width.data
        if width == 1:
            return np.dtype(np.bool_)
        kind = "u" if element_type.signedness.data == Signedness.UNSIGNED else "i"
        return np.dtype(f"<{kind}{width // 8}")
    raise TypeError(f"unsupported element type {element_type} (xrelay runs f16, f32, f64, i1, i8, i16, i32, "
                    "i64, their si/ui forms and index)")


_DTYPE_TO_ELEMENT: dict[np.dtype, Attribute] = {dtype_of(element): element for element in NN_ELEMENT_TYPES}
"""numpy dtype -> nn element type, built from `dtype_of` so that the two agree."""


def dense_attr(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    """A dense attribute holding a little-endian copy of `array`'s bytes."""
    array = np.asarray(array)
    element = element_type_of(array.dtype)
    data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    return DenseIntOrFPElementsAttr(TensorType(element, array.shape), BytesAttr(data))


def attr_numpy(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """Read-only zero-copy numpy view of a dense attribute (a splat broadcasts, still no copy)."""
    shape = tuple(attr.get_shape())
    flat = np.frombuffer(attr.data.data, dtype=dtype_of(attr.get_element_type()))
    if flat.size == 1 and int(np.prod(shape)) != 1:
        return np.broadcast_to(flat.reshape(()), shape)
    return flat.reshape(shape)


def _print_dense(attr: DenseIntOrFPElementsAttr, printer: Printer) -> None:
    data = attr.data.data
    try:
        itemsize = dtype_of(attr.type.get_element_type()).itemsize
    except TypeError:  # not a tensor of a supported type: the verifier reports it, print as is
        printer.print_attribute(attr)
        return
    if (
        len(data) > itemsize
        and data[:itemsize] == data[itemsize : 2 * itemsize]  # cheap test before the full one
        and data == data[:itemsize] * (len(data) // itemsize)
    ):
        # A splat prints as its one value, e.g. dense<0.000000e+00> : tensor<64xf32>.
        attr = DenseIntOrFPElementsAttr(attr.type, BytesAttr(data[:itemsize]))
    if len(attr) <= SMALL_CONSTANT_ELEMENTS:
        printer.print_attribute(attr)  # xDSL's decimal form is fast enough for a few elements
        return
    printer.print_string('dense<"0x' + attr.data.data.hex().upper() + '"> : ')
    printer.print_attribute(attr.type)


_HEX_PREFIX = 'dense<"0x'


def _parse_hex_fast(parser: Parser) -> DenseIntOrFPElementsAttr | None:
    """Parse ``dense<"0x..."> : tensor<...>`` by slicing the input text, if it is there.

    xDSL's lexer matches string literals with a regex that costs ~10 ms per MB; weights
    are tens of MB, so the hex payload is cut out with str.find instead.
    """
    content = parser.lexer.input.content
    start = parser.pos
    if not isinstance(content, str) or not content.startswith(_HEX_PREFIX, start):
        return None
    end = content.find('"', start + len(_HEX_PREFIX))
    if end == -1 or not content.startswith('">', end):
        return None
    try:
        data = bytes.fromhex(content[start + len(_HEX_PREFIX) : end])
    except ValueError:
        parser.raise_error("nn.constant: malformed hex payload", start)
    parser._resume_from(end + 2)  # pyright: ignore[reportPrivateUsage] -- skip past the payload
    parser.parse_punctuation(":")
    type_pos = parser.pos
    tensor_type = parser.parse_type()
    if not isinstance(tensor_type, TensorType):
        parser.raise_error(f"nn.constant expects a tensor type, got {tensor_type}", type_pos)
    try:
        itemsize = dtype_of(tensor_type.get_element_type()).itemsize
    except TypeError as e:
        parser.raise_error(f"nn.constant: {e}", type_pos)
    count = int(np.prod(tensor_type.get_shape()))
    if len(data) == itemsize:
        data *= count  # a hex splat, as xDSL's parser reads it
    if len(data) != count * itemsize:
        parser.raise_error(
            f"nn.constant: hex payload holds {len(data) // itemsize} elements, {tensor_type} needs {count}",
            start,
        )
    return DenseIntOrFPElementsAttr(tensor_type, BytesAttr(data))


def _parse_dense(parser: Parser) -> DenseIntOrFPElementsAttr:
    """Parse ``dense<...> : tensor<...>``: hex by slicing, anything else by xDSL."""
    if (attr := _parse_hex_fast(parser)) is not None:
        return attr
    pos = parser.pos
    try:
        attr = parser.parse_attribute()
    except ParseError as error:
        read = error.span.input.content[pos:error.span.start].rstrip()
        if ":" not in read or not read.endswith(">"):
            raise
        # xDSL's checks made once the whole `dense<...> : type` is read (shape mismatch) point at
        # the token after it, often the next line's op: point at the literal instead.
        parser.raise_error(error.msg, pos)
    if not isinstance(attr, DenseIntOrFPElementsAttr) or not isinstance(attr.type, TensorType):
        parser.raise_error(f"nn.constant expects a dense tensor attribute, got {attr}", pos)
    return attr


@nn_op
class ConstantOp(IRDLOperation):
    """A tensor constant; `ConstantOp(np_array)` builds it, `op.numpy()` reads it back."""

    name = "nn.constant"
    LAYOUT: ClassVar[LayoutRule] = LayoutRule.NONE
    NO_LOWERING: ClassVar[str | None] = None
    value = attr_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: np.ndarray | DenseIntOrFPElementsAttr):
        if not isinstance(value, DenseIntOrFPElementsAttr):
            value = dense_attr(np.asarray(value))
        super().__init__(result_types=[value.type], attributes={"value": value})

    def numpy(self) -> np.ndarray:
        """Read-only view over the attribute's bytes (no copy)."""
        return attr_numpy(self.value)

    def attrs(self) -> dict[str, object]:
        """{"value": the read-only numpy view}, like every nn op's attrs()."""
        return {"value": self.numpy()}

    def infer_result_types(self) -> list[TensorType]:
        """The value's type; raises ShapeError unless it is a tensor of one of NN_ELEMENT_TYPES."""
        value_type = self.value.type
        if not isinstance(value_type, TensorType):
            raise ShapeError(f"nn.constant: value type {value_type} is not a tensor")
        element = value_type.get_element_type()
        if element not in NN_ELEMENT_TYPES:
            raise ShapeError(f"nn.constant: unsupported element type {element} (use {NN_ELEMENT_TYPE_NAMES})")
        return [value_type]

    def verify_(self) -> None:
        try:
            expected = self.infer_result_types()
        except ShapeError as e:
            raise VerifyException(str(e)) from None
        if self.result.type != expected[0]:
            raise VerifyException(
                f"nn.constant: result type {self.result.type} differs from value type {expected[0]}"
            )
        size = int(np.prod(expected[0].get_shape()))
        length = len(self.value.data.data) // dtype_of(expected[0].get_element_type()).itemsize
        if length not in (1, size):
            raise VerifyException(f"nn.constant: value holds {length} elements, type {expected[0]} needs {size}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_dense(self.value, printer)
        extra = {k: v for k, v in self.attributes.items() if k != "value"}
        if extra:
            printer.print_op_attributes(extra)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        value = _parse_dense(parser)
        extra = parser.parse_optional_attr_dict()
        op = cls(value)
        op.attributes.update(extra)
        return op
