"""PatternTrace: which rewrite patterns ran in each pass, through xDSL's rewriter listener.

For every pass run it watches, every xDSL `PatternRewriteWalker` that runs in the pass (xrelay's
`rewrite_module`, the stock `canonicalize`, any pattern pass) walks with the trace's pattern wrappers and
its listener, and each pattern gets a `PatternCounts`: how many ops it was `tried` on, how many it
`applied` to (it changed the IR: in xDSL matching and rewriting are one call, so a match that rewrites
nothing is no match), the ops its rewrites `created` and `erased` (from the listener's insertion and
removal events, by op name) and its own time. Patterns are found inside the walker's pattern:
`GreedyRewritePatternApplier`'s list (its own folding and dead-op erasure count as its own row), the
canonicalize pass's per-op patterns (`CanonicalizationRewritePattern`, traced as
`xdsl/transforms/canonicalize.py` applies them) and the `pattern` of a pattern class that sets
`wraps_pattern = True` (xrelay's failure reporter: not a row of its own). What a
walker's `post_walk_func` does (canonicalize's `region_dce`) counts as a row named `(post-walk region_dce)`.

With `log=True`, `applications` lists every application: pass, pattern, op name and the op's
`file:line:col` when it has one. The trace replaces `PatternRewriteWalker.rewrite_region` while a
watched pass runs and puts it back when the pass ends; with no trace installed nothing changes.
"""

from __future__ import annotations

import copy
import sys
import time
from dataclasses import dataclass, field
from typing import IO, Any

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriterListener,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.traits import HasCanonicalizationPatternsTrait
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern

from xrelay.instrument.nesting import NestingInstrument, PassFrame

_ORIGINAL_REWRITE_REGION = PatternRewriteWalker.rewrite_region
_TRACES: list[PatternTrace] = []  # installed traces watching a pass run, innermost last


@dataclass
class PatternCounts:
    """What one pattern did in one pass run (see the module docstring); `seconds` excludes the time of
    the patterns it dispatches to."""

    tried: int = 0
    applied: int = 0
    created: dict[str, int] = field(default_factory=dict)
    erased: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def created_total(self) -> int:
        return sum(self.created.values())

    @property
    def erased_total(self) -> int:
        return sum(self.erased.values())


@dataclass(eq=False)
class PassPatterns:
    """The patterns of one pass run, by pattern name in the order they were first tried."""

    name: str
    depth: int
    patterns: dict[str, PatternCounts] = field(default_factory=dict)


@dataclass(frozen=True)
class Application:
    """One rewrite: the pass and pattern, the op it rewrote and that op's location ("" when none)."""

    pass_name: str
    pattern: str
    op_name: str
    location: str


def location_text(op: Operation) -> str:
    """`file:line:col` of an op parsed from a file, else ""."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return ""


def pattern_name(pattern: RewritePattern) -> str:
    return type(pattern).__qualname__


class _Call:
    """A traced pattern call in progress: its counts, the time its traced callees took and whether one
    of them applied."""

    __slots__ = ("counts", "callee_seconds", "callee_applied")

    def __init__(self, counts: PatternCounts):
        self.counts = counts
        self.callee_seconds = 0.0
        self.callee_applied = False


class _TracedPattern(RewritePattern):
    """Runs `inner` and records its call in the trace's current pass run as `name`."""

    def __init__(self, trace: PatternTrace, name: str, inner: RewritePattern):
        self.trace = trace
        self.name = name
        self.inner = inner

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        trace = self.trace
        counts = trace.counts(self.name)
        call = _Call(counts)
        trace.calls.append(call)
        done_before = rewriter.has_done_action
        op_name = op.name
        location = location_text(op) if trace.log else ""
        start = time.perf_counter()
        try:
            self.inner.match_and_rewrite(op, rewriter)
        finally:
            elapsed = time.perf_counter() - start
            trace.calls.pop()
            counts.tried += 1
            counts.seconds += elapsed - call.callee_seconds
            applied = rewriter.has_done_action and not done_before
            if trace.calls:
                outer = trace.calls[-1]
                outer.callee_seconds += elapsed
                outer.callee_applied |= applied
            if applied and not call.callee_applied:
                counts.applied += 1
                if trace.log:
                    trace.applications.append(Application(trace.current.name, self.name, op_name, location))


class _TracedCanonicalization(RewritePattern):
    """xDSL's `CanonicalizationRewritePattern` with each of an op's patterns traced (same order, same
    single-pattern / greedy choice as `xdsl/transforms/canonicalize.py`)."""

    def __init__(self, trace: PatternTrace):
        self.trace = trace

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        traits = op.get_traits_of_type(HasCanonicalizationPatternsTrait)
        if not traits:
            return
        patterns = [self.trace.wrap(p) for trait in traits for p in trait.get_patterns(type(op))]
        if len(patterns) == 1:
            patterns[0].match_and_rewrite(op, rewriter)
            return
        GreedyRewritePatternApplier(patterns).match_and_rewrite(op, rewriter)


def _traced_rewrite_region(walker: PatternRewriteWalker, region: Any) -> bool:
    if not _TRACES:
        return _ORIGINAL_REWRITE_REGION(walker, region)
    trace = _TRACES[-1]
    pattern, listener, post_walk = walker.pattern, walker.listener, walker.post_walk_func
    walker.pattern = trace.wrap(pattern)
    walker.listener = trace.listener(listener)
    if post_walk is not None:
        walker.post_walk_func = trace.traced_post_walk(post_walk)
    try:
        return _ORIGINAL_REWRITE_REGION(walker, region)
    finally:
        walker.pattern, walker.listener, walker.post_walk_func = pattern, listener, post_walk


class PatternTrace(NestingInstrument):
    """Records the rewrite patterns of every pass run (see the module docstring): `runs` lists a
    `PassPatterns` per run that tried a pattern, in the order the runs started; `applications` the
    rewrites when `log`. `render()` is the report; `stream` (default stderr) gets it when the context is
    left if `print_on_exit`."""

    def __init__(self, *, log: bool = False, stream: IO[str] | None = None, print_on_exit: bool = False) -> None:
        super().__init__()
        self.log = log
        self.stream = stream
        self.print_on_exit = print_on_exit
        self.runs: list[PassPatterns] = []
        self.applications: list[Application] = []
        self.calls: list[_Call] = []

    @property
    def current(self) -> PassPatterns:
        """The innermost watched pass run."""
        return self.running[-1].state

    def counts(self, name: str) -> PatternCounts:
        run = self.current
        counts = run.patterns.get(name)
        if counts is None:
            counts = run.patterns[name] = PatternCounts()
            if not any(r is run for r in self.runs):
                self.runs.append(run)
        return counts

    # -- wrapping a walker's pattern and listener ------------------------------------------------
    def wrap(self, pattern: RewritePattern) -> RewritePattern:
        """`pattern` with itself and the patterns it dispatches to traced."""
        if getattr(type(pattern), "wraps_pattern", False):  # e.g. rewrite_module's failure reporter
            transparent = copy.copy(pattern)
            transparent.pattern = self.wrap(pattern.pattern)
            return transparent
        if isinstance(pattern, CanonicalizationRewritePattern):
            return _TracedCanonicalization(self)
        inner = pattern
        if isinstance(pattern, GreedyRewritePatternApplier):
            # A copy (subclasses may take other arguments than the dataclass's fields) with traced patterns.
            inner = copy.copy(pattern)
            inner.rewrite_patterns = [self.wrap(p) for p in pattern.rewrite_patterns]
        return _TracedPattern(self, pattern_name(pattern), inner)

    def _record(self, table: str, op: Operation) -> None:
        if not self.running:
            return
        counts = self.calls[-1].counts if self.calls else self.counts(self._post_walk_name)
        ops = getattr(counts, table)
        ops[op.name] = ops.get(op.name, 0) + 1

    _post_walk_name = "(post-walk)"

    def listener(self, listener: PatternRewriterListener) -> PatternRewriterListener:
        """The walker's `listener` plus the trace's insertion and removal handlers."""
        traced = PatternRewriterListener()
        traced.extend_from_listener(listener)
        traced.operation_insertion_handler.append(lambda op: self._record("created", op))
        traced.operation_removal_handler.append(lambda op: self._record("erased", op))
        return traced

    def traced_post_walk(self, post_walk: Any) -> Any:
        name = f"(post-walk {getattr(post_walk, '__name__', type(post_walk).__name__)})"

        def run(region: Any, listener: PatternRewriterListener) -> bool:
            counts = self.counts(name)
            before = self._post_walk_name
            self._post_walk_name = name
            start = time.perf_counter()
            try:
                changed = post_walk(region, listener)
            finally:
                counts.seconds += time.perf_counter() - start
                self._post_walk_name = before
            counts.tried += 1
            counts.applied += bool(changed)
            return changed

        return run

    # -- the PassInstrument side -----------------------------------------------------------------
    def enter_pass_ctx(self) -> None:
        super().enter_pass_ctx()
        self.runs, self.applications, self.calls = [], [], []

    def entered(self, frame: PassFrame) -> None:
        frame.state = PassPatterns(frame.info.name, frame.depth)
        if not self.running:
            _TRACES.append(self)
            PatternRewriteWalker.rewrite_region = _traced_rewrite_region

    def _uninstall(self) -> None:
        if self in _TRACES:
            _TRACES.remove(self)
            if not _TRACES:
                PatternRewriteWalker.rewrite_region = _ORIGINAL_REWRITE_REGION

    def left(self, frame: PassFrame, mod: Any) -> None:
        if len(self.running) == 1:  # the outermost watched run ends
            self._uninstall()

    def failed(self, frame: PassFrame) -> None:
        self.calls = []
        if not self.running:
            self._uninstall()

    def exit_pass_ctx(self) -> None:
        self.running = []
        self._uninstall()
        if self.print_on_exit:
            stream = sys.stderr if self.stream is None else self.stream
            stream.write(self.render())
            stream.flush()

    def render(self) -> str:
        """The report: per pass run, a row per pattern; then the applications when `log`."""
        return render_patterns(self.runs, self.applications if self.log else None)


HEADER = "\n".join(["===" + "-" * 73 + "===", " " * 26 + "... Pattern rewrite report ...",
                    "===" + "-" * 73 + "==="])
COLUMNS = ("tried", "applied", "created", "erased", "time (ms)")


def pattern_rows(run: PassPatterns) -> list[tuple[str, str, str, str, str, str]]:
    """`(pattern, tried, applied, created, erased, time in ms)` as printed, one per pattern."""
    return [(name, str(c.tried), str(c.applied), str(c.created_total), str(c.erased_total),
             f"{c.seconds * 1e3:.3f}") for name, c in run.patterns.items()]


def render_patterns(runs: list[PassPatterns], applications: list[Application] | None = None) -> str:
    """The pattern report text, ending in a newline."""
    lines = [HEADER]
    for run in runs:
        rows = pattern_rows(run)
        lines.append(f"{run.name} (depth {run.depth})")
        widths = [max(len(row[i]) for row in [("pattern", *COLUMNS), *rows]) for i in range(6)]
        for row in [("pattern", *COLUMNS), *rows]:
            lines.append("  " + "  ".join([row[0].ljust(widths[0]), *(v.rjust(w) for v, w in zip(row[1:], widths[1:]))]))
    for app in applications or ():
        where = f" at {app.location}" if app.location else ""
        lines.append(f"applied: {app.pass_name}: {app.pattern} on {app.op_name}{where}")
    return "\n".join(lines) + "\n"
