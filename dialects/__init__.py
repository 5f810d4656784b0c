"""xrelay.dialects: the nn dialect, the context every parser and pass uses, and `parse_mlir`."""

import importlib
import os
from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Dialect

import xrelay.dialects.dense_literal_type  # a dense literal's type checked without rebuilding the check
import xrelay.dialects.ir_generation  # counts every change to xDSL IR (runtime's O(1) cache check)
import xrelay.dialects.resource_handles  # resource handles parse as written
import xrelay.dialects.string_literal_lexing  # noqa: F401 - installs the linear-time lexer pattern


def xrelay_dialects() -> dict[str, Callable[[], Dialect]]:
    """Factories of the dialects xrelay defines or replaces, by name: nn, and xDSL's linalg, memref,
    bufferization and tensor with upstream MLIR's ops and syntax (`upstream_linalg`, `upstream_memref`,
    `upstream_bufferization`, `upstream_tensor_ops`), and `kernel` (kernel formation, dialects/kernel.py). Registered ahead of xDSL's own by `make_context` and `xrelay-opt`."""

    def nn():
        from xrelay.dialects.nn import NN

        return NN

    def linalg():
        from xrelay.dialects.upstream_linalg import LINALG

        return LINALG

    def memref():
        from xrelay.dialects.upstream_memref import MEMREF

        return MEMREF

    def bufferization():
        from xrelay.dialects.upstream_bufferization import BUFFERIZATION

        return BUFFERIZATION

    def kernel():
        from xrelay.dialects.kernel import KERNEL

        return KERNEL

    def tensor():
        from xrelay.dialects.upstream_tensor_ops import TENSOR

        return TENSOR

    return {"nn": nn, "linalg": linalg, "memref": memref, "bufferization": bufferization, "kernel": kernel,
            "tensor": tensor}


def make_context() -> Context:
    """A context with builtin, func, arith, math, affine, tensor, scf and `xrelay_dialects()` (nn, and
    linalg, memref and bufferization as upstream MLIR writes them): builtin loaded, the others
    registered, so each loads when the parser first meets one of its ops, attributes or types
    (loading all of them took a tenth of a second, in every process)."""
    from xdsl.dialects.builtin import Builtin

    ctx = Context()
    ctx.load_dialect(Builtin)
    for name, factory in {**_XDSL_DIALECTS, **xrelay_dialects()}.items():
        ctx.register_dialect(name, factory)
    return ctx


def _xdsl_dialect(module: str, name: str) -> Callable[[], Dialect]:
    return lambda: getattr(importlib.import_module(f"xdsl.dialects.{module}"), name)


_XDSL_DIALECTS = {"func": _xdsl_dialect("func", "Func"), "arith": _xdsl_dialect("arith", "Arith"),
                  "math": _xdsl_dialect("math", "Math"), "affine": _xdsl_dialect("affine", "Affine"),
                  "scf": _xdsl_dialect("scf", "Scf")}


def parse_mlir(source: str | os.PathLike[str], name: str | None = None) -> ModuleOp:
    """Parse `.mlir` text, or the file at a path (a `pathlib.Path`), into a module with every dialect of
    `make_context()`; xDSL's ParseError names `name` (default: the file, or "<string>"). What xrelay-opt
    adds (file:line:col on every op, reworded errors) is `xrelay.tools.diagnostics.parse_module_file`."""
    from xdsl.parser import Parser

    if isinstance(source, os.PathLike):
        name = name or os.fspath(source)
        with open(source) as f:
            source = f.read()
    return Parser(make_context(), source, name or "<string>").parse_module()
