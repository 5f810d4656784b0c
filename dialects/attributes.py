"""Attribute kinds of the nn ops: how an op declares an attribute with Relay's default (`ints`, `int_`,
`float_`, `bool_`, `str_`), and the conversion between plain Python values and builtin attributes
that `NNOp` (dialects/op_base.py) builds ops and reads `attrs()` with.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute
from xdsl.irdl import opt_attr_def
from xdsl.irdl.constraints import VerificationContext
from xdsl.utils.exceptions import VerifyException

INTS = DenseArrayBase.constr(i64)
INT = IntegerAttr.constr(i64)
FLOAT = FloatAttr.constr(Float64Type)
BOOL = IntegerAttr.constr(i1)


def to_attr(value: object) -> Attribute:
    """bool -> BoolAttr, int -> i64, float -> f64, str -> StringAttr, int sequence -> array<i64>."""
    if isinstance(value, bool | np.bool_):
        return BoolAttr.from_bool(bool(value))
    if isinstance(value, numbers.Integral):
        return IntegerAttr(int(value), i64)
    if isinstance(value, numbers.Real):
        return FloatAttr(float(value), f64)
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, Sequence | np.ndarray):
        return DenseArrayBase.from_list(i64, [int(v) for v in value])
    raise TypeError(f"unsupported attribute value {value!r}")


def fits(constr, attr: Attribute) -> bool:
    """Whether `attr` satisfies an attribute definition's constraint."""
    try:
        constr.verify(attr, VerificationContext())
    except VerifyException:
        return False
    return True


def kind(constr: object) -> str:
    """How an attribute of this constraint is written, for error messages."""
    for known, text in ((INTS, "array<i64: ...>"), (INT, "an i64 integer"), (FLOAT, "an f64 float"), (BOOL, "true/false")):
        if constr == known:
            return text
    return "a string"


def to_python(attr: Attribute) -> object:
    """The plain Python value of an attribute built by `_to_attr`."""
    if isinstance(attr, DenseArrayBase):
        return tuple(attr.get_values())
    if isinstance(attr, IntegerAttr):
        if isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
            return bool(attr.value.data)
        return int(attr.value.data)
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, StringAttr):
        return attr.data
    return attr


def ints(default: Sequence[int] | None = None) -> Any:
    """An int-list attribute (`array<i64: ...>`), optional with a default."""
    return opt_attr_def(INTS, None if default is None else to_attr(tuple(default)))


def int_(default: int | None = None) -> Any:
    """An i64 integer attribute, optional with a default."""
    return opt_attr_def(INT, None if default is None else to_attr(default))


def float_(default: float) -> Any:
    """An f64 float attribute with a default."""
    return opt_attr_def(FLOAT, to_attr(float(default)))


def bool_(default: bool) -> Any:
    """A bool attribute (true/false) with a default."""
    return opt_attr_def(BOOL, to_attr(default))


def str_(default: str | None = None) -> Any:
    """A string attribute, optional with a default."""
    return opt_attr_def(StringAttr, None if default is None else StringAttr(default))
