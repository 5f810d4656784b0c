"""xrelay.dialects: the nn dialect and the context every parser and pass uses."""

from xdsl.context import Context

import xrelay.dialects.string_literal_lexing  # noqa: F401 - installs the linear-time lexer pattern


def make_context() -> Context:
    """A context with builtin, func, arith, math, affine, tensor, linalg (xDSL's with upstream's pooling
    ops, `upstream_linalg`), memref, scf and nn loaded."""
    from xdsl.dialects.affine import Affine
    from xdsl.dialects.arith import Arith
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func
    from xdsl.dialects.math import Math
    from xdsl.dialects.memref import MemRef
    from xdsl.dialects.scf import Scf
    from xdsl.dialects.tensor import Tensor

    from xrelay.dialects.nn import NN
    from xrelay.dialects.upstream_linalg import LINALG

    ctx = Context()
    for dialect in (Builtin, Func, Arith, Math, Affine, Tensor, LINALG, MemRef, Scf, NN):
        ctx.load_dialect(dialect)
    return ctx
