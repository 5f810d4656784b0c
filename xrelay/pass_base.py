"""The base of xrelay's own passes: `XRelayPass`, its registration, and `rewrite_module`.

One `@register_xrelay_pass` makes a pass visible everywhere: `transform.get_pass` (by its TVM and
pipeline names), `XRELAY_PASSES` (pipeline name -> class), from which `xrelay.passes.ALL_PASSES`
feeds `xrelay-opt -p` and the stock `xdsl-opt` (through `xrelay.universe`), and
`xrelay.passes.<ClassName>`. CONTRIBUTING.md has the checklist for a new pass.
"""

from __future__ import annotations

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
from xrelay.instrument.statistics import Statistic, declare_statistics
from xrelay.instrument.xdsl_pass import apply_xdsl_pass, cut_long_line, require_module

XRELAY_PASSES: dict[str, type[XRelayPass]] = {}
"""Pipeline name ("fold-constant") -> pass class, for every registered XRelayPass."""

FORMER_PASS_NAMES: dict[str, str] = {}
"""A renamed pass's earlier pipeline name -> its pipeline name now ("nn-bufferize" ->
"linalg-bufferize"): pipelines written for an earlier release keep working, but the old name is in
no listing."""


@dataclass(frozen=True)
class XRelayPass(XDSLModulePass, Pass):
    """Base of xrelay's graph passes: an xDSL ModulePass that is also an instrumented Pass.

    Subclasses have the ClassVars `name` (pipeline name, e.g. "fold-constant"), `tvm_name` (the
    PassInfo name instruments see, e.g. "FoldConstant"), `opt_level`, `required`,
    `infer_type_after` and, after a rename, `former_names` (usually given to
    `register_xrelay_pass`), and implement `apply(ctx, op)` (the plain in-place xDSL entry point
    that `xdsl-opt` uses). `FoldConstant()(mod)` runs `apply` on a clone of `mod` under the
    current PassContext's instruments and then, if `infer_type_after`, the registered
    "InferType" pass as a nested instrumented pass (as Relay's function passes do).
    """

    name: ClassVar[str]
    tvm_name: ClassVar[str]
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ()
    infer_type_after: ClassVar[bool] = False
    former_names: ClassVar[tuple[str, ...]] = ()
    """Names (pipeline or TVM) the pass had in an earlier release; `get_pass` and `xrelay-opt -p`
    still accept them."""
    statistics: ClassVar[tuple[Statistic, ...]] = ()
    """The counters the pass reports (`xrelay/instrument/statistics.py`)."""

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
            new_mod = run_pass(get_pass("InferType"), new_mod, pass_ctx, forced_by=f"InferType after {self.info.name}")
        return new_mod


def register_xrelay_pass(cls: type[XRelayPass] | str | None = None, /, **info: Any):
    """Register an XRelayPass under its `tvm_name` and its pipeline `name`.

    `@register_xrelay_pass("fold-constant", opt_level=2, infer_type_after=True)` declares the pass's
    pipeline name and PassInfo in one place, as TVM's `module_pass(opt_level=, name=, required=)`
    does (keywords: `opt_level`, `required`, `infer_type_after`, `former_names`, `statistics`, `tvm_name`,
    which defaults to the class name); a bare `@register_xrelay_pass` reads them from the class.
    """
    if isinstance(cls, str):
        info["name"] = cls
    if cls is None or isinstance(cls, str):
        return lambda pass_class: _register(pass_class, info)
    return _register(cls, info)


def _register(cls: type[XRelayPass], info: dict[str, Any]) -> type[XRelayPass]:
    if not (isinstance(cls, type) and issubclass(cls, XRelayPass)):
        raise TypeError(f"register_xrelay_pass: expected an XRelayPass subclass, got {cls!r}")
    unknown = set(info) - {"name", "tvm_name", "opt_level", "required", "infer_type_after", "former_names",
                           "statistics"}
    if unknown:
        raise TypeError(f"register_xrelay_pass: unknown keyword(s) {', '.join(sorted(unknown))}")
    info.setdefault("tvm_name", cls.__dict__.get("tvm_name", cls.__name__))
    for attr, value in info.items():
        setattr(cls, attr, tuple(value) if attr in ("required", "former_names", "statistics") else value)
    for attr in ("name", "tvm_name"):
        if not isinstance(getattr(cls, attr, None), str):
            raise TypeError(f"register_xrelay_pass: {cls.__name__} must set the ClassVar {attr} (str)")
    other = XRELAY_PASSES.get(cls.name)
    if other is not None and other.__qualname__ != cls.__qualname__:
        raise ValueError(f"register_xrelay_pass: {cls.__name__} and {other.__name__} share the name {cls.name!r}")
    register_pass(cls.tvm_name, cls)
    if cls.name != cls.tvm_name:
        register_pass(cls.name, cls)
    XRELAY_PASSES[cls.name] = cls
    declare_statistics(cls.tvm_name, cls.statistics)
    for former in cls.former_names:
        register_pass(former, cls)
        FORMER_PASS_NAMES[former] = cls.name
    return cls


REWRITES = Statistic("num-rewrites", "Number of ops a rewrite pattern changed")
"""Counted by `rewrite_module` for every op its pattern changed."""


@dataclass(frozen=True)
class PatternPass(XRelayPass):
    """An XRelayPass whose work is one rewrite pattern, `pattern` (its class), applied once over the
    module (xDSL's walker with `apply_recursively=False`; failures name the op, see `rewrite_module`)."""

    pattern: ClassVar[type[RewritePattern]]
    statistics: ClassVar[tuple[Statistic, ...]] = (REWRITES,)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_module(self.pattern(), op, apply_recursively=False)


class _PatternFailure(BaseException):
    """Carries a pattern's exception and the op it failed on out of xDSL's PatternRewriteWalker,
    which would otherwise print the whole module into a note of any `Exception` (as the runtime's
    KernelAbort does for xDSL's interpreter)."""

    def __init__(self, error: Exception, op: Operation):
        super().__init__(str(error))
        self.error = error
        self.op = op


class _ReportFailingOp(RewritePattern):
    wraps_pattern = True  # PatternTrace traces `pattern`, not this wrapper

    def __init__(self, pattern: RewritePattern):
        self.pattern = pattern

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        try:
            self.pattern.match_and_rewrite(op, rewriter)
        except Exception as error:  # noqa: BLE001 - carried out of xDSL's walker and re-raised as itself
            raise _PatternFailure(error, op) from None
        if rewriter.has_done_action:
            REWRITES.add()


def describe_op(op: Operation) -> str:
    """One line naming `op`: its text when short to print (no regions, no big constant), and its
    source position when it has one."""
    text = op.name
    big = any(isinstance(a, DenseIntOrFPElementsAttr) and len(a.data.data) > 1024 for a in op.attributes.values())
    if not op.regions and not big:
        stream = StringIO()
        Printer(stream=stream).print_op(op)
        text = cut_long_line(stream.getvalue().strip())
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
