"""xDSL ModulePasses as instrumented passes (`wrap`, `as_pass`), and the xDSL context they run with.

xDSL passes rewrite a module in place; xrelay passes are functional (TVM style). So an
instrumented run applies the xDSL pass to `mod.clone()` and returns the clone: the module
the pass received is untouched even when the pass raises.

When an xDSL pass raises, xDSL (its pattern walker, verifier, interpreter) has attached a print of
the whole module to the exception as a note, with a marker under the failing op; for a model with
bound weights that is tens of megabytes in every traceback. Such notes are cut to the failing op
and its marker (`elide_module_notes`). xrelay's own passes (`xrelay/pass_base.py`) rewrite through
`rewrite_module`, which never lets xDSL print the module and records the op a pattern failed on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass as XDSLModulePass

from xrelay.instrument.pass_context import PassContext
from xrelay.instrument.pass_manager import Pass, PassInfo, registered_passes

_context: Context | None = None

_MARKER = re.compile(r"\s*\^+-*\s*")  # xDSL's underline of the op a diagnostic is about

FAILING_OP_NOTE = "at this op"
"""First words of a note `elide_module_notes` wrote; its next two lines are the op and its marker."""

NOTE_LINE_LIMIT = 240
"""Longest line kept from a module print in an exception note (a constant's hex is cut)."""


def cut_long_line(line: str) -> str:
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
            *(cut_long_line(line) for line in kept),
        ])


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


def registered_pipeline_passes() -> dict[str, Callable[[], type[XDSLModulePass]]]:
    """Pipeline name -> loader of the class (the convention of xDSL's `get_all_passes`) for every pass
    registered under its pipeline name as an xDSL ModulePass class: xrelay's own passes."""
    return {
        name: (lambda cls=factory: cls)
        for name, factory in registered_passes().items()
        if isinstance(factory, type) and issubclass(factory, XDSLModulePass) and factory.name == name
    }
