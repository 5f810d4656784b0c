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
from xrelay.instrument.nesting import NestingInstrument, PassFrame
from xrelay.instrument.print_ir import module_changed
from xrelay.output_file import open_output


class ChromeTraceInstrument(NestingInstrument):
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
        super().__init__()
        self.path = path
        self.process_name = process_name
        self.clock = clock
        self.events: list[dict[str, Any]] = []
        self._origin_ns = clock()
        self._pid = os.getpid()
        self._tid = threading.get_native_id()

    def _now_us(self) -> float:
        return (self.clock() - self._origin_ns) / 1000.0

    def enter_pass_ctx(self) -> None:
        super().enter_pass_ctx()
        self.events = []
        self._origin_ns = self.clock()
        self._tid = threading.get_native_id()

    def entered(self, frame: PassFrame) -> None:
        frame.state = (self._now_us(), count_ops(frame.received))  # start, op counts

    def _close(self, frame: PassFrame, args: dict[str, Any]) -> None:
        end = self._now_us()
        start = frame.state[0]
        self.events.append({
            "name": frame.info.name,
            "cat": "pass",
            "ph": "X",
            "ts": start,
            "dur": end - start,
            "pid": self._pid,
            "tid": self._tid,
            "args": {"depth": frame.depth, "opt_level": frame.info.opt_level, **args},
        })

    def left(self, frame: PassFrame, mod: Any) -> None:
        self._close(frame, {
            "changed": module_changed(frame.received, mod),
            "op_count_delta": op_count_delta(count_ops(mod), frame.state[1]),
        })

    def failed(self, frame: PassFrame) -> None:
        error = sys.exc_info()[1]  # called while the pass's exception propagates
        args: dict[str, Any] = {"changed": False, "op_count_delta": {}, "failed": True}
        if error is not None:
            args["error"] = f"{type(error).__name__}: {error}"
        self._close(frame, args)

    def exit_pass_ctx(self) -> None:
        while self.running:  # only if a pass is still running when the context exits
            self._close(self.running.pop(), {"changed": False, "op_count_delta": {}, "unfinished": True})
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
