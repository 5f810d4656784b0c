"""The scalar ops of the loops level as C expressions: arith, math and their element types.

Each table maps an op class to a format string over its operands' C names (plain variables or
literals, so an operand may appear twice). Floats keep their own width (`float` arithmetic for
f32, as MLIR's LLVM lowering does); integers wrap (`-fwrapv`), and the helpers in `PRELUDE` give
MLIR's floor/ceil division, a division by zero as a status instead of SIGFPE, and the
NaN-propagating maximum/minimum.
"""

from __future__ import annotations

import math as pymath

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Attribute

from xrelay.runtime.native.build import NativeUnsupported

PRELUDE = r"""/* Each arith.mulf and arith.addf rounds on its own, as in MLIR without the `contract` flag: gcc
   would otherwise fuse them into an FMA where it chooses, and two nests that update an element in
   the same order (a loop pass's before and after) could round differently. */
#pragma GCC optimize("fp-contract=off")
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* memref.alloc: zeroed, as the numpy executors' buffers are (so both paths agree even on IR that
   reads first), and aligned to a cache line, so a vector row starting at a multiple of 64 bytes does
   not straddle two lines (malloc aligns to 16: ResNet-18's loops ran 13% slower). */
static void *xr_alloc(size_t count, size_t size) {
  size_t bytes = (count * size + 63) & ~(size_t)63;
  void *buffer = aligned_alloc(64, bytes);
  if (buffer) memset(buffer, 0, bytes);
  return buffer;
}

/* Integer division: a zero divisor sets *err to XR_DIVIDE_BY_ZERO (C would raise SIGFPE and kill
   the process), and INT64_MIN / -1 wraps (x86 would trap). */
#define XR_DIVIDE_BY_ZERO (-2)
static inline int xr_zero(int64_t b, int *err) {
  if (b == 0) __atomic_store_n(err, XR_DIVIDE_BY_ZERO, __ATOMIC_RELAXED);
  return b == 0;
}
static inline int64_t xr_divsi(int64_t a, int64_t b, int *err) {
  return xr_zero(b, err) ? 0 : b == -1 ? -a : a / b;
}
static inline int64_t xr_remsi(int64_t a, int64_t b, int *err) {
  return xr_zero(b, err) || b == -1 ? 0 : a % b;
}
static inline uint64_t xr_divui(uint64_t a, uint64_t b, int *err) {
  return xr_zero((int64_t)(b != 0), err) ? 0 : a / b;
}
static inline uint64_t xr_remui(uint64_t a, uint64_t b, int *err) {
  return xr_zero((int64_t)(b != 0), err) ? 0 : a % b;
}
static inline int64_t xr_floordiv(int64_t a, int64_t b, int *err) {
  int64_t q = xr_divsi(a, b, err);
  return (b != 0 && b != -1 && a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t xr_ceildiv(int64_t a, int64_t b, int *err) {
  int64_t q = xr_divsi(a, b, err);
  return (b != 0 && b != -1 && a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}
static inline int64_t xr_mod(int64_t a, int64_t b, int *err) {
  int64_t r = xr_remsi(a, b, err);
  return r < 0 ? r + (b < 0 ? -b : b) : r;
}
#define XR_MAXIMUM(a, b) (((a) >= (b) || (a) != (a)) ? (a) : (b))
#define XR_MINIMUM(a, b) (((a) <= (b) || (a) != (a)) ? (a) : (b))
#define XR_MAX(a, b) ((a) >= (b) ? (a) : (b))
#define XR_MIN(a, b) ((a) <= (b) ? (a) : (b))
"""
"""Included once at the top of every translation unit."""


def c_type(element_type: Attribute) -> str:
    """The C type of a scalar or memref element type."""
    if isinstance(element_type, Float32Type):
        return "float"
    if isinstance(element_type, Float64Type):
        return "double"
    if isinstance(element_type, IndexType):
        return "int64_t"
    if isinstance(element_type, IntegerType) and element_type.width.data in (1, 8, 16, 32, 64):
        width = element_type.width.data
        return "_Bool" if width == 1 else f"int{width}_t"
    raise NativeUnsupported(f"element type {element_type}")


def _unsigned(element_type: Attribute) -> str:
    width = 64 if isinstance(element_type, IndexType) else element_type.width.data
    return "_Bool" if width == 1 else f"uint{width}_t"


def c_literal(attr: Attribute, element_type: Attribute) -> str:
    """A C literal for an `arith.constant` value (exact: floats as hexadecimal)."""
    if isinstance(attr, IntegerAttr):
        value = attr.value.data
        if isinstance(element_type, IntegerType) and element_type.width.data == 1:
            return "1" if value else "0"
        return f"((int64_t){value}LL)" if value != -(2**63) else "INT64_MIN"
    if isinstance(attr, FloatAttr):
        value, suffix = float(attr.value.data), "f" if isinstance(element_type, Float32Type) else ""
        cast = "(float)" if suffix else "(double)"
        if pymath.isnan(value):
            return f"({cast}NAN)"
        if pymath.isinf(value):
            return f"({'-' if value < 0 else ''}{cast}INFINITY)"
        return f"({value.hex()}{suffix})"
    raise NativeUnsupported(f"constant {attr}")


def _float_call(name: str) -> str:
    """`name` applied to operands, `sqrtf` for f32 and `sqrt` for f64 (the `{f}` placeholder)."""
    return name + "{f}({0})"


UNARY = {
    arith.NegfOp: "(-{0})",
    math.SqrtOp: _float_call("sqrt"), math.ExpOp: _float_call("exp"), math.LogOp: _float_call("log"),
    math.TanhOp: _float_call("tanh"), math.ErfOp: _float_call("erf"), math.FloorOp: _float_call("floor"),
    math.CeilOp: _float_call("ceil"), math.AbsFOp: _float_call("fabs"), math.SinOp: _float_call("sin"),
    math.CosOp: _float_call("cos"), math.TanOp: _float_call("tan"), math.AtanOp: _float_call("atan"),
    math.Exp2Op: _float_call("exp2"), math.ExpM1Op: _float_call("expm1"), math.Log2Op: _float_call("log2"),
    math.Log10Op: _float_call("log10"), math.Log1pOp: _float_call("log1p"), math.SinhOp: _float_call("sinh"),
    math.CoshOp: _float_call("cosh"), math.AsinOp: _float_call("asin"), math.AcosOp: _float_call("acos"),
    math.AsinhOp: _float_call("asinh"), math.AcoshOp: _float_call("acosh"), math.AtanhOp: _float_call("atanh"),
    math.CbrtOp: _float_call("cbrt"), math.RoundOp: _float_call("round"), math.TruncOp: _float_call("trunc"),
    math.RoundEvenOp: _float_call("nearbyint"),
    math.RsqrtOp: "(1 / sqrt{f}({0}))",
    math.AbsIOp: "({0} < 0 ? -{0} : {0})",
}
"""One operand; `{f}` is `f` for f32 operands (the float variant of libm's function)."""

BINARY = {
    arith.AddfOp: "({0} + {1})", arith.SubfOp: "({0} - {1})", arith.MulfOp: "({0} * {1})",
    arith.DivfOp: "({0} / {1})",
    arith.MaximumfOp: "XR_MAXIMUM({0}, {1})", arith.MinimumfOp: "XR_MINIMUM({0}, {1})",
    arith.MaxnumfOp: "fmax{f}({0}, {1})", arith.MinnumfOp: "fmin{f}({0}, {1})",
    arith.AddiOp: "({0} + {1})", arith.SubiOp: "({0} - {1})", arith.MuliOp: "({0} * {1})",
    arith.DivSIOp: "xr_divsi({0}, {1}, &xr_err)", arith.RemSIOp: "xr_remsi({0}, {1}, &xr_err)",
    arith.FloorDivSIOp: "xr_floordiv({0}, {1}, &xr_err)", arith.CeilDivSIOp: "xr_ceildiv({0}, {1}, &xr_err)",
    arith.MaxSIOp: "XR_MAX({0}, {1})", arith.MinSIOp: "XR_MIN({0}, {1})",
    arith.AndIOp: "({0} & {1})", arith.OrIOp: "({0} | {1})", arith.XOrIOp: "({0} ^ {1})",
    arith.ShLIOp: "({0} << {1})", arith.ShRSIOp: "({0} >> {1})",
    math.PowFOp: "pow{f}({0}, {1})", math.CopySignOp: "copysign{f}({0}, {1})",
    math.Atan2Op: "atan2{f}({0}, {1})",
}
"""Two operands of one type."""

UNSIGNED_BINARY = {
    arith.DivUIOp: "xr_divui(({u})({0}), ({u})({1}), &xr_err)", arith.RemUIOp: "xr_remui(({u})({0}), ({u})({1}), &xr_err)",
    arith.MaxUIOp: "XR_MAX(({u})({0}), ({u})({1}))", arith.MinUIOp: "XR_MIN(({u})({0}), ({u})({1}))",
    arith.ShRUIOp: "({u})({0}) >> ({1})",
}
"""Two integer operands read as unsigned (`{u}`: the unsigned C type of their width)."""

CASTS = (arith.IndexCastOp, arith.SIToFPOp, arith.FPToSIOp, arith.ExtFOp, arith.TruncFOp, arith.ExtSIOp,
         arith.TruncIOp)
"""Conversions that are a C cast to the result's type."""

CMPF = {
    "false": "0", "true": "1", "oeq": "({0} == {1})", "ogt": "({0} > {1})", "oge": "({0} >= {1})",
    "olt": "({0} < {1})", "ole": "({0} <= {1})", "one": "({0} < {1} || {0} > {1})",
    "ord": "({0} == {0} && {1} == {1})", "ueq": "!({0} < {1} || {0} > {1})", "ugt": "!({0} <= {1})",
    "uge": "!({0} < {1})", "ult": "!({0} >= {1})", "ule": "!({0} > {1})", "une": "({0} != {1})",
    "uno": "({0} != {0} || {1} != {1})",
}
CMPI = {
    "eq": "({0} == {1})", "ne": "({0} != {1})", "slt": "({0} < {1})", "sle": "({0} <= {1})",
    "sgt": "({0} > {1})", "sge": "({0} >= {1})", "ult": "(({u}){0} < ({u}){1})",
    "ule": "(({u}){0} <= ({u}){1})", "ugt": "(({u}){0} > ({u}){1})", "uge": "(({u}){0} >= ({u}){1})",
}


def scalar_expression(op, operands: list[str]) -> str | None:
    """The C expression of a scalar arith/math op over its operands' names, or None if `op` is none."""
    operand_type = op.operands[0].type if op.operands else None
    f = "f" if isinstance(operand_type, Float32Type) else ""
    if type(op) in UNARY:
        return UNARY[type(op)].format(*operands, f=f)
    if type(op) in BINARY:
        return BINARY[type(op)].format(*operands, f=f)
    if type(op) in UNSIGNED_BINARY:
        return UNSIGNED_BINARY[type(op)].format(*operands, u=_unsigned(operand_type))
    if isinstance(op, (*CASTS, arith.UIToFPOp, arith.ExtUIOp)):
        source = operands[0]
        if isinstance(op, arith.UIToFPOp | arith.ExtUIOp):
            source = f"({_unsigned(operand_type)})({source})"
        return f"(({c_type(op.results[0].type)})({source}))"
    if isinstance(op, math.FmaOp):
        return "fma{f}({0}, {1}, {2})".format(*operands, f=f)
    if isinstance(op, arith.SelectOp):
        return "({0} ? {1} : {2})".format(*operands)
    if isinstance(op, arith.CmpfOp):
        return CMPF[arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]].format(*operands)
    if isinstance(op, arith.CmpiOp):
        predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        return CMPI[predicate].format(*operands, u=_unsigned(operand_type))
    return None
