"""ChromeTraceInstrument: every pass run as a Chrome trace event (JSON that Perfetto and chrome://tracing open).

Each pass run becomes one complete event (`"ph": "X"`) with `ts` (start) and `dur` in microseconds since
the context was entered, the process and thread ids, the pass name, and `args`:
`{"depth", "opt_level", "changed", "op_count_delta"}` (whether the pass changed the IR, and the seed
differ's per-op count change). Nested passes are events inside their parent's interval on the same
thread, so the viewers draw the pass tree as a flame chart.

A pass that raises still gets its event, ending at the failure, with `"failed": true` and the error in
`args`, so the events stay balanced. The file (if a path is given) is written when the context exits;
`write(path)` and `trace()` are available at any time. TVM's text tree stays available from
`PassTimingInstrument`, which can run beside this one.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from time import perf_counter_ns
from typing import Any

from xrelay.instrument.op_count import count_ops, op_count_delta
from xrelay.instrument.pass_instrument import PassInstrument
from xrelay.instrument.print_ir import module_changed
from xrelay.output_file import open_output


class _OpenPass:
    __slots__ = ("name", "opt_level", "start", "received", "counts")

    def __init__(self, name: str, opt_level: int, start: float, received: Any, counts: dict[str, int]) -> None:
        self.name = name
        self.opt_level = opt_level
        self.start = start
        self.received = received
        self.counts = counts


class ChromeTraceInstrument(PassInstrument):
    """Records pass runs as Chrome trace events; writes them to `path` (if given) on `exit_pass_ctx`.

    `clock` returns nanoseconds (default `time.perf_counter_ns`; tests pass a fake one).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        process_name: str = "xrelay",
        clock: Callable[[], int] = perf_counter_ns,
    ) -> None:
        self.path = path
        self.process_name = process_name
        self.clock = clock
        self.events: list[dict[str, Any]] = []
        self._open: list[_OpenPass] = []
        self._origin_ns = clock()
        self._pid = os.getpid()
        self._tid = threading.get_native_id()

    def _now_us(self) -> float:
        return (self.clock() - self._origin_ns) / 1000.0

    def enter_pass_ctx(self) -> None:
        self.events = []
        self._open = []
        self._origin_ns = self.clock()
        self._tid = threading.get_native_id()

    def run_before_pass(self, mod: Any, info: Any) -> None:
        self._open.append(_OpenPass(info.name, info.opt_level, self._now_us(), mod, count_ops(mod)))

    def _close(self, args: dict[str, Any]) -> None:
        end = self._now_us()
        run = self._open.pop()
        self.events.append({
            "name": run.name,
            "cat": "pass",
            "ph": "X",
            "ts": run.start,
            "dur": end - run.start,
            "pid": self._pid,
            "tid": self._tid,
            "args": {"depth": len(self._open), "opt_level": run.opt_level, **args},
        })

    def run_after_pass(self, mod: Any, info: Any) -> None:
        run = self._open[-1]
        self._close({
            "changed": module_changed(run.received, mod),
            "op_count_delta": op_count_delta(count_ops(mod), run.counts),
        })

    def run_after_pass_failed(self, mod: Any, info: Any) -> None:
        error = sys.exc_info()[1]  # called while the pass's exception propagates
        args: dict[str, Any] = {"changed": False, "op_count_delta": {}, "failed": True}
        if error is not None:
            args["error"] = f"{type(error).__name__}: {error}"
        self._close(args)

    def exit_pass_ctx(self) -> None:
        while self._open:  # only if a pass is still running when the context exits
            self._close({"changed": False, "op_count_delta": {}, "unfinished": True})
        if self.path is not None:
            self.write(self.path)

    def trace(self) -> dict[str, Any]:
        """The trace as a JSON-ready dict: `{"traceEvents": [...], "displayTimeUnit": "ms"}`, events in
        start order (a parent before the children it starts with), after process/thread name metadata."""
        metadata = [
            {"name": "process_name", "ph": "M", "pid": self._pid, "tid": self._tid,
             "args": {"name": self.process_name}},
            {"name": "thread_name", "ph": "M", "pid": self._pid, "tid": self._tid,
             "args": {"name": "passes"}},
        ]
        events = sorted(self.events, key=lambda event: (event["ts"], -event["dur"], event["args"]["depth"]))
        return {"traceEvents": [*metadata, *events], "displayTimeUnit": "ms"}

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write `trace()` as JSON to `path` (`open_output`: never a partial file; links, devices kept)."""
        with open_output(path) as f:
            json.dump(self.trace(), f, indent=1)
            f.write("\n")
