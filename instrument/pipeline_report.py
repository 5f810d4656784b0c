"""PipelineReport: every pass run of a pipeline, written as one self-contained HTML page to explore.

The page (`instrument/report_page.py`) lists the pass runs as a tree in the order they started: the
children of a Sequential and the passes a pass runs inside itself, opt-level skips and disabled passes
(of a `pipeline` given to the report), vetoed passes (an instrument's `should_run` said False) and failed
ones marked, passes that changed the IR highlighted, wall time as bars. For the selected pass it shows the
IR before and after side by side with the changes highlighted and unchanged regions folded, its op-count
delta, statistics, rewrite patterns and, when asked, its numerical drift.

What a pass did comes from the instruments that print it, run as parts of the report: `IRDiff` (the diff
`--print-ir-diff` prints; large constants elided, so the page holds no weights, and no full copy of the
IR per pass), `OpCountDiff`, a statistics collector (`--pass-statistics`), `PatternTrace` and, with
`drift=True` or inputs, `NumericalBisect`. A part given to the report already installed in the context
(`patterns=`, `numerical=`) is read, not run twice. A pass's time includes the instruments' work in the
passes nested in it.
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from typing import Any

from xrelay.instrument.ir_diff import IRDiff
from xrelay.instrument.nesting import NestingInstrument, PassFrame
from xrelay.instrument.op_count import OpCountDiff
from xrelay.instrument.pass_context import PassContext
from xrelay.instrument.pass_instrument import PassInstrument
from xrelay.instrument.pattern_trace import PatternTrace, pattern_rows
from xrelay.instrument.print_ir import module_changed
from xrelay.instrument.statistics import StatisticsCollector


@dataclass(eq=False)
class PassNode:
    """One pass in the report: a run, or a pass that did not run (`status` says why)."""

    name: str
    depth: int
    status: str = "ran"  # ran | failed | vetoed | skipped | disabled | not-reached
    reason: str = ""
    seconds: float = 0.0
    changed: bool = False
    diff: str = ""
    op_delta: dict[str, int] = field(default_factory=dict)
    statistics: list[tuple[str, int, str]] = field(default_factory=list)
    patterns: list[tuple[str, ...]] = field(default_factory=list)
    drift: dict[str, Any] | None = None
    children: list[PassNode] = field(default_factory=list)
    expected: list[tuple[str, str, str]] | None = None  # a known Sequential's children: (name, status, reason)


def _sequentials(pipeline: Any, found: dict[int, Any]) -> dict[int, Any]:
    """Every Sequential in `pipeline` by the id of its PassInfo."""
    children = getattr(pipeline, "passes", None)
    if children is not None:
        found[id(pipeline.info)] = pipeline
        for child in children:
            _sequentials(child, found)
    return found


def _merged(node: PassNode, failed: bool) -> list[PassNode]:
    """The runs under a known Sequential with its skipped children put where they are in its list (and,
    when it failed, those it did not reach)."""
    runs, merged, index = node.children, [], 0
    for name, status, reason in node.expected or ():
        if status != "ran":
            merged.append(PassNode(name, node.depth + 1, status, reason))
            continue
        while index < len(runs) and runs[index].name != name:  # passes run before it as `required`
            merged.append(runs[index])
            index += 1
        if index < len(runs):
            merged.append(runs[index])
            index += 1
        elif failed:
            merged.append(PassNode(name, node.depth + 1, "not-reached", "an earlier pass failed"))
    return merged + runs[index:]


class _Recorder(NestingInstrument):
    """Builds the PassNode tree; reads the other parts, which ran their hooks for the same pass first."""

    def __init__(self, report: PipelineReport) -> None:
        super().__init__()
        self.report = report
        self.roots: list[PassNode] = []

    def enter_pass_ctx(self) -> None:
        super().enter_pass_ctx()
        self.roots = []

    def add(self, node: PassNode) -> None:
        (self.running[-1].state[0].children if self.running else self.roots).append(node)

    def entered(self, frame: PassFrame) -> None:
        report = self.report
        node = PassNode(frame.info.name, frame.depth)
        self.add(node)
        sequential = report.known_sequentials.get(id(frame.info))
        if sequential is None and frame.depth == 0 and report.pipeline is not None \
                and frame.info.name == report.pipeline.info.name:
            sequential = report.pipeline  # the same pipeline, built again (xrelay-opt: once per input module)
        if sequential is not None:
            context = PassContext.current()
            node.expected = [(child.info.name, *_skip_status(context, child.info)) for child in sequential.passes]
        marks = (len(report.ir_diff.diffs), len(report.op_count.get_pass_to_op_diff()),
                 len(report.numerical.checks) if report.numerical is not None else 0)
        stats = report.statistics.running[-1].state
        patterns = report.patterns.running[-1].state if report.patterns.running else None
        frame.state = (node, marks, stats, patterns)

    def _finish(self, frame: PassFrame, mod: Any, failed: bool) -> None:
        report = self.report
        node, (diffs, deltas, checks), stats, patterns = frame.state
        node.seconds = report.elapsed
        node.statistics = [(stat.name, value, stat.description) for stat, value in stats.counts.items()]
        if patterns is not None:
            node.patterns = pattern_rows(patterns)
        if node.expected is not None:
            node.children = _merged(node, failed)
        if failed:
            node.status = "failed"
            return
        node.changed = module_changed(frame.received, mod)
        if len(report.ir_diff.diffs) > diffs:
            node.diff = report.ir_diff.diffs[-1][2]
        if len(report.op_count.get_pass_to_op_diff()) > deltas:
            node.op_delta = report.op_count.get_pass_to_op_diff()[-1][2]
        if report.numerical is not None and len(report.numerical.checks) > checks:
            check = report.numerical.checks[-1]
            node.drift = {"max_abs": check.max_abs, "max_rel": check.max_rel, "drifted": check.drifted,
                          "error": check.error}

    def left(self, frame: PassFrame, mod: Any) -> None:
        self._finish(frame, mod, failed=False)

    def failed(self, frame: PassFrame) -> None:
        self._finish(frame, None, failed=True)


def _skip_status(context: PassContext, info: Any) -> tuple[str, str]:
    if info.name in context.disabled_pass:
        return "disabled", "named by disabled_pass"
    if context.pass_enabled(info):
        return "ran", ""
    return "skipped", f"opt_level {info.opt_level} > the context's {context.opt_level}"


class PipelineReport(PassInstrument):
    """Records every pass run (see the module docstring) and writes the page with `write(path)`.

    `pipeline`: the Sequential the report is about, so that its skipped and disabled children show;
    `drift` / `inputs`: run `NumericalBisect` (inputs by `@main` argument name, the rest seeded) unless
    `numerical` (an installed one) is given; `patterns`: an installed PatternTrace to read;
    `max_constant_elements`: constants above it are elided in the diffs (16 as `--print-ir-diff`).
    """

    def __init__(self, pipeline: Any = None, *, drift: bool = False, inputs: dict[str, Any] | None = None,
                 numerical: Any = None, patterns: PatternTrace | None = None,
                 max_constant_elements: int = 16, title: str = "xrelay pipeline") -> None:
        self.title = title
        self.pipeline = pipeline
        self.known_sequentials = _sequentials(pipeline, {}) if pipeline is not None else {}
        self.ir_diff = IRDiff(print_diffs=False, max_constant_elements=max_constant_elements)
        self.op_count = OpCountDiff()
        self.statistics = StatisticsCollector()
        parts: list[PassInstrument] = [self.ir_diff, self.op_count, self.statistics]
        self.patterns = patterns
        if patterns is None:
            self.patterns = PatternTrace()
            parts.append(self.patterns)
        self.numerical = numerical
        if numerical is None and (drift or inputs):
            from xrelay.instrument.numerical_bisect import NumericalBisect

            self.numerical = NumericalBisect(inputs, verbose=False, stream=io.StringIO())  # the page shows it
            parts.append(self.numerical)
        self.recorder = _Recorder(self)
        self.parts = [*parts, self.recorder]
        self._clock: list[float] = []
        self.elapsed = 0.0
        self._asked: tuple[Any, int] | None = None  # a pass asked should_run, not yet started

    @property
    def roots(self) -> list[PassNode]:
        """The recorded top-level passes."""
        return self.recorder.roots

    def _stop_clock(self) -> None:
        if self._clock:
            self.elapsed = time.perf_counter() - self._clock.pop()

    def _vetoed_check(self, info: Any = None) -> None:
        asked = self._asked
        if asked is not None and asked[0] is not info:
            self.recorder.add(PassNode(asked[0].name, asked[1], "vetoed", "an instrument's should_run said False"))
        self._asked = None

    # -- the PassInstrument protocol, forwarded to the parts -----------------------------------------
    def enter_pass_ctx(self) -> None:
        self._clock, self._asked = [], None
        for part in self.parts:
            part.enter_pass_ctx()

    def exit_pass_ctx(self) -> None:
        self._vetoed_check()
        for part in self.parts:
            part.exit_pass_ctx()

    def should_run(self, mod: Any, info: Any) -> bool:
        self._vetoed_check()
        self._asked = (info, len(self.recorder.running))
        return True

    def run_before_pass(self, mod: Any, info: Any) -> None:
        self._vetoed_check(info)
        for part in self.parts:
            part.run_before_pass(mod, info)
        self._clock.append(time.perf_counter())

    def run_after_pass(self, mod: Any, info: Any) -> None:
        self._stop_clock()
        self._vetoed_check()
        for part in self.parts:
            part.run_after_pass(mod, info)

    def run_after_pass_failed(self, mod: Any, info: Any) -> None:
        self._stop_clock()
        self._vetoed_check()
        for part in self.parts:
            part.run_after_pass_failed(mod, info)

    # -- output ---------------------------------------------------------------------------------------
    def data(self) -> dict[str, Any]:
        """The page's content: `passes` in preorder, each with its parent's index."""
        from xrelay.instrument.report_page import report_data

        return report_data(self.roots, self.title, drift=self.numerical is not None)

    def write(self, path: str) -> None:
        """Write the page to `path`."""
        from xrelay.instrument.report_page import write_page

        write_page(path, self.data())
