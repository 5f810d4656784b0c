"""The Python the loops executor (`loops_exec`) writes for scalar ops: expression templates (`_BINARY`,
`_UNARY`, `_CMP`) and the helpers they call (`_RUNTIME`), which follow IEEE and MLIR where Python
differs (division by zero, NaN in max/min, exp overflow, truncating division); `_affine_source`;
`SourceWriter`, which names values and indents lines for this translation and codegen's C."""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, math
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineExpr

from xrelay.runtime.kernels import integer_ops
from xrelay.runtime.kernels.affine_views import ExecutionError
from xrelay.runtime.math_functions import c_pow

_BINARY = {
    arith.AddfOp: "({} + {})", arith.SubfOp: "({} - {})", arith.MulfOp: "({} * {})",
    arith.DivfOp: "_divf({}, {})", arith.AddiOp: "({} + {})", arith.SubiOp: "({} - {})",
    arith.MuliOp: "({} * {})", arith.FloorDivSIOp: "({} // {})",
    arith.MaximumfOp: "_max({}, {})", arith.MinimumfOp: "_min({}, {})",
    arith.MaxnumfOp: "_max({}, {})", arith.MinnumfOp: "_min({}, {})",
    arith.MaxSIOp: "_max({}, {})", arith.MinSIOp: "_min({}, {})",
    arith.DivSIOp: "_divsi({}, {})", arith.RemSIOp: "_remsi({}, {})",
    arith.AndIOp: "({} & {})", arith.OrIOp: "({} | {})", arith.XOrIOp: "({} ^ {})",
    math.PowFOp: "_pow({}, {})", math.CopySignOp: "_copysign({}, {})",
}
_UNARY = {
    arith.NegfOp: "(-{})", math.SqrtOp: "_sqrt({})", math.ExpOp: "_exp({})", math.LogOp: "_log({})",
    math.TanhOp: "_tanh({})", math.AbsFOp: "abs({})", math.AbsIOp: "abs({})", math.ErfOp: "_erf({})",
    math.FloorOp: "_floor({})",
    arith.IndexCastOp: "{}",
    arith.SIToFPOp: "float({})", arith.FPToSIOp: "int({})", arith.ExtFOp: "{}", arith.TruncFOp: "{}",
    arith.ExtSIOp: "{}", arith.FPToUIOp: "int({})",
}
_CMP = {"oeq": "==", "ogt": ">", "oge": ">=", "olt": "<", "ole": "<=", "one": "!=", "ueq": "==",
        "ugt": ">", "uge": ">=", "ult": "<", "ule": "<=", "une": "!=", "eq": "==", "ne": "!=",
        "slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}
_CMPF = {"ueq": "not ({0} < {1} or {0} > {1})", "one": "({0} < {1} or {0} > {1})", "ugt": "not ({0} <= {1})",
         "uge": "not ({0} < {1})", "ult": "not ({0} >= {1})", "ule": "not ({0} > {1})",
         "ord": "({0} == {0} and {1} == {1})", "uno": "({0} != {0} or {1} != {1})"}
"""Float predicates `_CMP` does not give as one operator: unordered ones are true on NaN."""


def _max(a, b):
    return a if a >= b or a != a else b


def _min(a, b):
    return a if a <= b or a != a else b


def _divsi(a, b):
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def _remsi(a, b):
    return a - _divsi(a, b) * b


def _exp(x):
    try:
        return pymath.exp(x)
    except OverflowError:
        return pymath.inf


def _divf(a, b):
    """IEEE division, as numpy and MLIR do it (Python raises ZeroDivisionError)."""
    if b:
        return a / b
    if a == 0 or a != a:
        return pymath.nan
    return pymath.copysign(pymath.inf, a) * pymath.copysign(1.0, b)


def _sqrt(x):
    return pymath.sqrt(x) if x >= 0 else pymath.nan


def _log(x):
    return pymath.log(x) if x > 0 else (-pymath.inf if x == 0 else pymath.nan)


def _floor(x):
    return float(pymath.floor(x)) if pymath.isfinite(x) else x


_RUNTIME = {"_divf": _divf, "_max": _max, "_min": _min, "_divsi": _divsi, "_remsi": _remsi, "_sqrt": _sqrt,
            "_exp": _exp, "_log": _log, "_tanh": pymath.tanh, "_erf": pymath.erf, "_pow": c_pow,
            "_floor": _floor, "_copysign": pymath.copysign,
            "inf": pymath.inf, "nan": pymath.nan, "_np": np, **integer_ops.LOOPS_RUNTIME}


def _affine_source(expr: AffineExpr, operands: Sequence[str]) -> str:
    if isinstance(expr, AffineDimExpr):
        return operands[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return str(expr.value)
    assert isinstance(expr, AffineBinaryOpExpr)
    lhs, rhs = _affine_source(expr.lhs, operands), _affine_source(expr.rhs, operands)
    match expr.kind:
        case AffineBinaryOpKind.Add:
            return f"({lhs} + {rhs})"
        case AffineBinaryOpKind.Mul:
            return f"({lhs} * {rhs})"
        case AffineBinaryOpKind.FloorDiv:
            return f"({lhs} // {rhs})"
        case AffineBinaryOpKind.CeilDiv:
            return f"(-((-{lhs}) // {rhs}))"
        case AffineBinaryOpKind.Mod:
            return f"({lhs} % {rhs})"
    raise ExecutionError(f"unsupported affine expression {expr}")


class SourceWriter:
    """Lines of generated source and the names of the SSA values in them, for the loops level's
    Python (`loops_exec.LoopsCompiler`) and C (`codegen/c_source.py`) translations: `names` gives
    each value a local `v<n>`, `literals` the values written as literals where they are used."""

    INDENT = "    "

    def __init__(self):
        self.names: dict[SSAValue, str] = {}
        self.literals: dict[SSAValue, str] = {}
        self.lines: list[str] = []

    def name(self, value: SSAValue) -> str:
        if value in self.literals:
            return self.literals[value]
        if value not in self.names:
            self.names[value] = f"v{len(self.names)}"
        return self.names[value]

    def emit(self, indent: int, line: str) -> None:
        self.lines.append(self.INDENT * indent + line)
