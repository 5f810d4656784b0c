"""A dense literal's type is checked against the constraint built once (dialects/dense_literal_type.py),
with xDSL's messages."""

import pytest
from xdsl.irdl import attributes
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

from xrelay.dialects import make_context


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def test_parsing_a_dense_literal_builds_no_constraint(monkeypatch):
    parse("%0 = arith.constant dense<[1, 2]> : tensor<2xi32>")  # the dialects loaded
    built = []
    original = attributes.irdl_to_attr_constraint
    monkeypatch.setattr(attributes, "irdl_to_attr_constraint", lambda *a, **k: built.append(a) or original(*a, **k))
    module = parse("%0 = arith.constant dense<[1, 2]> : tensor<2xi32>\n%1 = arith.constant dense<2.5> : tensor<3xf32>")
    assert built == []
    assert [op.value.get_values() for op in module.ops] == [(1, 2), (2.5, 2.5, 2.5)]


@pytest.mark.parametrize("text, message", [
    ("%0 = arith.constant dense<1> : tensor<?xi32>", "Dense literal attribute should have a static shape."),
    ("%0 = arith.constant dense<1> : i32",
     "Expected memref, vector or tensor type of integer, index, float, or complex type"),
])
def test_bad_types_are_refused_as_xdsl_refuses_them(text, message):
    with pytest.raises(ParseError, match=message):
        parse(text)
