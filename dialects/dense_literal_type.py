"""The type of a `dense<...>` literal checked against a constraint built once (xDSL is pinned, so xrelay
patches it).

xDSL 0.75 turns the type expression `RankedStructure[IntegerType | IndexType | AnyFloat | ComplexType]`
into a constraint again for every dense literal it parses: about 2 ms each, a sixth of the parse of a
built ResNet-18 (45 literals, mostly its convolutions' strides and dilations). The check and its
messages are xDSL's. Importing `xrelay.dialects` installs it.
"""

from xdsl.dialects.builtin import DYNAMIC_INDEX, AnyFloat, ComplexType, IndexType, IntegerType, RankedStructure
from xdsl.irdl import base
from xdsl.parser.attribute_parser import AttrParser

DENSE_LITERAL_TYPE = base(RankedStructure[IntegerType | IndexType | AnyFloat | ComplexType])


def _parse_dense_literal_type(self: AttrParser) -> RankedStructure:
    type = self.expect(self.parse_optional_type, "Dense attribute must be typed!")
    if not DENSE_LITERAL_TYPE.verifies(type):
        self.raise_error("Expected memref, vector or tensor type of integer, index, float, or complex type")
    if any(dim == DYNAMIC_INDEX for dim in type.get_shape()):
        self.raise_error("Dense literal attribute should have a static shape.")
    return type


AttrParser._parse_dense_literal_type = _parse_dense_literal_type
