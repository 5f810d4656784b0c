"""xDSL ModulePasses as instrumented passes, and XRelayPass, the base of xrelay's own passes.

xDSL passes rewrite a module in place; xrelay passes are functional (TVM style). So an
instrumented run applies the xDSL pass to `mod.clone()` and returns the clone: the module
the pass received is untouched even when the pass raises.

When an xDSL pass raises, xDSL (its pattern walker, verifier, interpreter) has attached a print of
the whole module to the exception as a note, with a marker under the failing op; for a model with
bound weights that is tens of megabytes in every traceback. Such notes are cut to the failing op
and its marker (`elide_module_notes`). xrelay's own passes rewrite through `rewrite_module`, which
never lets xDSL print the module and records the op a pattern failed on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from io import StringIO
from typing import Any, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FileLineColLoc, ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass as XDSLModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.printer import Printer

from xrelay.instrument.pass_context import PassContext
from xrelay.instrument.pass_manager import Pass, PassInfo, get_pass, register_pass, run_pass

_context: Context | None = None

_MARKER = re.compile(r"\s*\^+-*\s*")  # xDSL's underline of the op a diagnostic is about

FAILING_OP_NOTE = "at this op"
"""First words of a note `elide_module_notes` wrote; its next two lines are the op and its marker."""

NOTE_LINE_LIMIT = 240
"""Longest line kept from a module print in an exception note (a constant's hex is cut)."""


def _cut(line: str) -> str:
    return line if len(line) <= NOTE_LINE_LIMIT else line[:NOTE_LINE_LIMIT] + " ..."


def elide_module_notes(error: BaseException) -> None:
    """Replace xDSL's whole-module prints in `error.__notes__` by the failing op's line and the
    marker box under it (`^^^^---- | message ----`), in place; other notes stay."""
    notes = getattr(error, "__notes__", None)
    if not notes:
        return
    for index, note in enumerate(notes):
        lines = note.split("\n")
        marker = next((i for i, line in enumerate(lines) if _MARKER.fullmatch(line)), None)
        if marker is None or marker == 0 or not lines[0].lstrip().startswith(('"builtin.module"', "builtin.module")):
            continue
        end = marker + 1
        while end < len(lines) and lines[end].lstrip().startswith("|"):
            end += 1
        kept = [lines[marker - 1], *lines[marker:end + 1]]
        notes[index] = "\n".join([
            f"{FAILING_OP_NOTE} (xDSL's print of the whole module, {len(lines)} lines, is cut to it):",
            *(_cut(line) for line in kept),
        ])


class _PatternFailure(BaseException):
    """Carries a pattern's exception and the op it failed on out of xDSL's PatternRewriteWalker,
    which would otherwise print the whole module into a note of any `Exception` (as the runtime's
    KernelAbort does for xDSL's interpreter)."""

    def __init__(self, error: Exception, op: Operation):
        super().__init__(str(error))
        self.error = error
        self.op = op


class _ReportFailingOp(RewritePattern):
    def __init__(self, pattern: RewritePattern):
        self.pattern = pattern

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        try:
            self.pattern.match_and_rewrite(op, rewriter)
        except Exception as error:
            raise _PatternFailure(error, op) from None


def describe_op(op: Operation) -> str:
    """One line naming `op`: its text when short to print (no regions, no big constant), and its
    source position when it has one."""
    text = op.name
    big = any(isinstance(a, DenseIntOrFPElementsAttr) and len(a.data.data) > 1024 for a in op.attributes.values())
    if not op.regions and not big:
        stream = StringIO()
        Printer(stream=stream).print_op(op)
        text = _cut(stream.getvalue().strip())
    if isinstance(op.location, FileLineColLoc):
        loc = op.location
        text += f" (at {loc.filename.data}:{loc.line.data}:{loc.column.data})"
    return text


def rewrite_module(pattern: RewritePattern, module: ModuleOp, **walker_options: Any) -> None:
    """`PatternRewriteWalker(pattern, **walker_options).rewrite_module(module)`, except that an
    exception raised by the pattern comes out as itself with `failing_op` (the op it was rewriting)
    and a note `while rewriting <op>`, and without xDSL's print of the whole module."""
    try:
        PatternRewriteWalker(_ReportFailingOp(pattern), **walker_options).rewrite_module(module)
    except _PatternFailure as failure:
        error = failure.error
        error.failing_op = failure.op  # type: ignore[attr-defined]
        error.add_note(f"while rewriting {describe_op(failure.op)}")
        error.__suppress_context__ = True  # the carrier is no part of the story
        raise error


def require_module(mod: Any, info: PassInfo) -> None:
    """TypeError naming the pass unless `mod` is a `builtin.module` (what xDSL passes work on)."""
    if not isinstance(mod, ModuleOp):
        raise TypeError(f"{info.name}: expected a builtin.module (xdsl ModuleOp), got {type(mod).__name__}")


def apply_xdsl_pass(module_pass: XDSLModulePass, module: ModuleOp) -> None:
    """`module_pass.apply` on `module`, with xDSL's module prints cut out of any exception's notes."""
    try:
        module_pass.apply(xdsl_context(), module)
    except Exception as error:
        elide_module_notes(error)
        raise


def xdsl_context() -> Context:
    """The shared xDSL Context passes are applied with (`xrelay.dialects.make_context()`)."""
    global _context
    if _context is None:
        from xrelay.dialects import make_context

        _context = make_context()
    return _context


class WrappedModulePass(Pass):
    """An xDSL ModulePass run as an instrumented pass on a clone of the module."""

    def __init__(self, module_pass: XDSLModulePass, info: PassInfo) -> None:
        self.module_pass = module_pass
        self.info = info

    def transform_module(self, mod: ModuleOp, pass_ctx: PassContext) -> ModuleOp:
        require_module(mod, self.info)
        new_mod = mod.clone()
        apply_xdsl_pass(self.module_pass, new_mod)
        return new_mod

    def __repr__(self) -> str:
        return f"wrap({self.module_pass!r}, name={self.info.name!r}, opt_level={self.info.opt_level})"


def wrap(
    module_pass: XDSLModulePass,
    name: str | None = None,
    opt_level: int = 0,
    required: tuple[str, ...] | list[str] = (),
) -> WrappedModulePass:
    """Make an xDSL ModulePass instance an instrumented pass; `name` defaults to its pipeline name."""
    if isinstance(module_pass, type):
        raise TypeError(f"wrap: expected a ModulePass instance, got the class {module_pass.__name__}; "
                        f"call it first: wrap({module_pass.__name__}())")
    if not isinstance(module_pass, XDSLModulePass):
        raise TypeError(f"wrap: expected an xDSL ModulePass instance, got {module_pass!r}")
    return WrappedModulePass(module_pass, PassInfo(name or module_pass.name, opt_level, tuple(required)))


def as_pass(obj: Any) -> Pass:
    """`obj` if it is already a Pass (XRelayPass included), `wrap(obj)` for other xDSL ModulePasses."""
    if isinstance(obj, Pass):
        return obj
    if isinstance(obj, XDSLModulePass):
        return wrap(obj)
    raise TypeError(f"expected a Pass or an xDSL ModulePass instance, got {obj!r}")


def upstream_xdsl_pass_factory(name: str):
    """A factory for the upstream xDSL pass with pipeline name `name` (default options), or None."""
    from xdsl.transforms import get_all_passes

    get_class = get_all_passes().get(name)
    if get_class is None:
        return None
    return lambda: wrap(get_class()())


@dataclass(frozen=True)
class XRelayPass(XDSLModulePass, Pass):
    """Base of xrelay's graph passes: an xDSL ModulePass that is also an instrumented Pass.

    Subclasses set the ClassVars `name` (pipeline name, e.g. "fold-constant"), `tvm_name`
    (the PassInfo name instruments see, e.g. "FoldConstant"), `opt_level`, `required` and
    `infer_type_after`, and implement `apply(ctx, op)` (the plain in-place xDSL entry point
    that `xdsl-opt` uses). `FoldConstant()(mod)` runs `apply` on a clone of `mod` under the
    current PassContext's instruments and then, if `infer_type_after`, the registered
    "InferType" pass as a nested instrumented pass (as Relay's function passes do).
    """

    name: ClassVar[str]
    tvm_name: ClassVar[str]
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()
    infer_type_after: ClassVar[bool] = False

    @property
    def info(self) -> PassInfo:
        cls = type(self)
        info = cls.__dict__.get("_xrelay_pass_info")
        if info is None:
            info = PassInfo(cls.tvm_name, cls.opt_level, tuple(cls.required))
            cls._xrelay_pass_info = info
        return info

    def transform_module(self, mod: ModuleOp, pass_ctx: PassContext) -> ModuleOp:
        require_module(mod, self.info)
        new_mod = mod.clone()
        apply_xdsl_pass(self, new_mod)
        if self.infer_type_after:
            new_mod = run_pass(get_pass("InferType"), new_mod, pass_ctx)
        return new_mod


def register_xrelay_pass(cls: type[XRelayPass]) -> type[XRelayPass]:
    """Class decorator: register an XRelayPass under its `tvm_name` and its pipeline `name`."""
    if not (isinstance(cls, type) and issubclass(cls, XRelayPass)):
        raise TypeError(f"register_xrelay_pass: expected an XRelayPass subclass, got {cls!r}")
    for attr in ("name", "tvm_name"):
        if not isinstance(getattr(cls, attr, None), str):
            raise TypeError(f"register_xrelay_pass: {cls.__name__} must set the ClassVar {attr} (str)")
    register_pass(cls.tvm_name, cls)
    if cls.name != cls.tvm_name:
        register_pass(cls.name, cls)
    return cls
