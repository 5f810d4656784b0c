"""Pass statistics with MLIR's meaning (`Pass::Statistic`, `--mlir-pass-statistics`).

A pass declares named counters with a description and increments them while it runs:

    FOLDED = Statistic("num-folded", "Number of ops evaluated into constants")

    @register_xrelay_pass("fold-constant", opt_level=2, statistics=(FOLDED,))
    ...
        FOLDED.add()

A counter counts for the innermost pass run that each collecting instrument (`PassStatisticsInstrument`,
the pipeline report) is watching; with none installed `add` loops over an empty list, so passes pay
nothing for their counters. The report has MLIR's two displays, printed on stderr after the run:

- `list`: one entry per pass name, the counters of all its runs summed, passes sorted by name, only
  passes that have counters;
- `pipeline`: the tree of pass runs (a Sequential's children, the InferType a pass runs after itself)
  in the order they started, every run with its own counters.

    ===-------------------------------------------------------------------------===
                             ... Pass statistics report ...
    ===-------------------------------------------------------------------------===
    FoldConstant
      (S) 12 num-folded            - Number of ops evaluated into constants
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO, Any

from xrelay.instrument.nesting import NestingInstrument, PassFrame

DISPLAY_MODES = ("list", "pipeline")

_DECLARED: dict[str, tuple[Statistic, ...]] = {}
_COLLECTORS: list[StatisticsCollector] = []  # collectors watching a pass run


@dataclass(frozen=True)
class Statistic:
    """A named pass counter (`name` in MLIR's kebab-case, `description` one line)."""

    name: str
    description: str

    def add(self, amount: int = 1) -> None:
        """Count `amount` for the innermost watched pass run (nothing when no instrument watches)."""
        for collector in _COLLECTORS:
            counts = collector.running[-1].state.counts
            counts[self] = counts.get(self, 0) + amount


def declare_statistics(pass_name: str, statistics: Iterable[Statistic]) -> None:
    """Make `statistics` the counters a pass named `pass_name` (its PassInfo name) reports, zeros
    included, as MLIR shows every statistic a pass declares."""
    _DECLARED[pass_name] = tuple(statistics)


def declared_statistics(pass_name: str) -> tuple[Statistic, ...]:
    """The counters declared for `pass_name` (empty when none)."""
    return _DECLARED.get(pass_name, ())


@dataclass(eq=False)
class PassRun:
    """One run of a pass: its name, depth, counters (declared ones first, zeros included) and the runs
    nested in it."""

    name: str
    depth: int
    counts: dict[Statistic, int] = field(default_factory=dict)
    children: list[PassRun] = field(default_factory=list)
    failed: bool = False


class StatisticsCollector(NestingInstrument):
    """Collects every pass run's counters into `runs` (the tree's roots); the base of
    `PassStatisticsInstrument` and of the pipeline report. Entering the context starts a new record."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[PassRun] = []

    def enter_pass_ctx(self) -> None:
        super().enter_pass_ctx()
        self.runs = []

    def entered(self, frame: PassFrame) -> None:
        run = PassRun(frame.info.name, frame.depth)
        (self.running[-1].state.children if self.running else self.runs).append(run)
        frame.state = run
        if not self.running:
            _COLLECTORS.append(self)

    def _close(self, frame: PassFrame) -> None:
        run = frame.state
        counted = run.counts
        run.counts = {stat: counted.get(stat, 0) for stat in declared_statistics(run.name)}
        run.counts.update(counted)

    def _stop_watching(self) -> None:
        if self in _COLLECTORS:
            _COLLECTORS.remove(self)

    def left(self, frame: PassFrame, mod: Any) -> None:
        self._close(frame)
        if len(self.running) == 1:  # the outermost watched run ends
            self._stop_watching()

    def failed(self, frame: PassFrame) -> None:
        frame.state.failed = True
        self._close(frame)
        if not self.running:
            self._stop_watching()

    def exit_pass_ctx(self) -> None:
        self.running = []
        self._stop_watching()


def _walk(runs: list[PassRun]) -> Iterable[PassRun]:
    for run in runs:
        yield run
        yield from _walk(run.children)


def statistics_by_pass(runs: list[PassRun]) -> dict[str, dict[Statistic, int]]:
    """Pass name -> its counters summed over all its runs, for the passes that have counters."""
    totals: dict[str, dict[Statistic, int]] = {}
    for run in _walk(runs):
        if run.counts:
            summed = totals.setdefault(run.name, {})
            for stat, value in run.counts.items():
                summed[stat] = summed.get(stat, 0) + value
    return dict(sorted(totals.items()))


def statistic_lines(counts: dict[Statistic, int], indent: int) -> list[str]:
    """MLIR's `(S) VALUE NAME - DESCRIPTION` lines, sorted by name, values and names aligned."""
    if not counts:
        return []
    stats = sorted(counts, key=lambda stat: stat.name)
    value_width = max(len(str(counts[stat])) for stat in stats)
    name_width = max(len(stat.name) for stat in stats)
    return [f"{' ' * indent}(S) {counts[stat]:>{value_width}} {stat.name:<{name_width}} - {stat.description}"
            for stat in stats]


HEADER = "\n".join(["===" + "-" * 73 + "===", " " * 25 + "... Pass statistics report ...", "===" + "-" * 73 + "==="])


def render_statistics(runs: list[PassRun], display: str = "pipeline") -> str:
    """The report text (see the module docstring) ending in a newline."""
    if display not in DISPLAY_MODES:
        raise ValueError(f"pass statistics display must be one of {', '.join(DISPLAY_MODES)}, got {display!r}")
    lines = [HEADER]
    if display == "list":
        for name, counts in statistics_by_pass(runs).items():
            lines.append(f"  {name}")
            lines.extend(statistic_lines(counts, 4))
    else:
        for run in _walk(runs):
            lines.append(" " * (2 * run.depth) + run.name)
            lines.extend(statistic_lines(run.counts, 2 * run.depth + 2))
    return "\n".join(lines) + "\n"


class PassStatisticsInstrument(StatisticsCollector):
    """Prints the pass statistics report (`display`: "list" or "pipeline") on `stream` (default stderr)
    when the context is left; `render()` gives the text at any time after a run."""

    def __init__(self, display: str = "pipeline", stream: IO[str] | None = None, print_on_exit: bool = True) -> None:
        if display not in DISPLAY_MODES:
            raise ValueError(f"PassStatisticsInstrument: display must be one of {', '.join(DISPLAY_MODES)}, "
                             f"got {display!r}")
        super().__init__()
        self.display = display
        self.stream = stream
        self.print_on_exit = print_on_exit

    def render(self) -> str:
        """The report of the last run."""
        return render_statistics(self.runs, self.display)

    def exit_pass_ctx(self) -> None:
        super().exit_pass_ctx()
        if self.print_on_exit:
            stream = sys.stderr if self.stream is None else self.stream
            stream.write(self.render())
            stream.flush()
