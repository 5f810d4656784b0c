"""PassMemoryInstrument: each pass's peak Python memory, measured with `tracemalloc`.

For every pass run it records how far the traced memory rose above its level when the pass started
(`peak`, the pass's working set) and how much more is allocated when it ends (`retained`, mostly the
module it returns). Nested passes are measured inside their parent's window. tracemalloc slows
allocation-heavy Python code down (often 2x), so enable it only when looking at memory; it starts
tracing on `enter_pass_ctx` unless tracing is already on, and stops what it started on `exit_pass_ctx`.
"""

from __future__ import annotations

import tracemalloc
from dataclasses import dataclass
from typing import Any

from xrelay.instrument.nesting import NestingInstrument, PassFrame

_MIB = 1024.0 * 1024.0


@dataclass
class PassMemory:
    """One pass run: `order` (start order), `depth`, `name`, `peak` and `retained` bytes."""

    order: int
    depth: int
    name: str
    start: int
    peak: int = 0
    retained: int = 0
    failed: bool = False


class PassMemoryInstrument(NestingInstrument):
    """Records a `PassMemory` per pass run in `records`; `render()` prints them as a tree."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[PassMemory] = []
        self._started_tracing = False

    def enter_pass_ctx(self) -> None:
        super().enter_pass_ctx()
        self.records = []
        if not tracemalloc.is_tracing():
            tracemalloc.start()
            self._started_tracing = True

    def exit_pass_ctx(self) -> None:
        if self._started_tracing:
            tracemalloc.stop()
            self._started_tracing = False

    def _fold_peak(self, ending: PassMemory | None = None) -> int:
        # The peak since the last reset belongs to every pass running during that window, and to
        # the one ending now (a failed pass's frame is already off the stack).
        current, peak = tracemalloc.get_traced_memory()
        runs = [frame.state for frame in self.running if frame.state is not None]
        if ending is not None:
            runs.append(ending)
        for run in runs:
            run.peak = max(run.peak, peak - run.start)
        tracemalloc.reset_peak()
        return current

    def entered(self, frame: PassFrame) -> None:
        if not tracemalloc.is_tracing():  # someone stopped it: measure nothing rather than garbage
            return
        current = self._fold_peak()
        frame.state = PassMemory(len(self.records), frame.depth, frame.info.name, current)
        self.records.append(frame.state)

    def _finish(self, frame: PassFrame, failed: bool) -> None:
        run = frame.state
        if run is None or not tracemalloc.is_tracing():
            return
        run.retained = self._fold_peak(run) - run.start
        run.failed = failed

    def left(self, frame: PassFrame, mod: Any) -> None:
        self._finish(frame, False)

    def failed(self, frame: PassFrame) -> None:
        self._finish(frame, True)

    def render(self) -> str:
        """One line per pass run, in start order, one tab per depth:
        `NAME: peak {MiB:.2f} MiB, retained {MiB:+.2f} MiB` (`[failed]` appended for a failed pass)."""
        return "".join(
            f"{chr(9) * run.depth}{run.name}: peak {run.peak / _MIB:.2f} MiB, retained {run.retained / _MIB:+.2f} MiB"
            f"{' [failed]' if run.failed else ''}\n"
            for run in self.records
        )
