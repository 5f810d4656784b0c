"""PassTimingInstrument: per-pass wall time as TVM's nested text tree.

As in TVM (src/ir/instrument.cc, `PassProfileThreadLocalStore`), the profile is one tree per
thread, shared by every PassTimingInstrument: `run_before_pass` pushes an entry (start time)
under the innermost open one, `run_after_pass` pops it (duration), `exit_pass_ctx` drops the
recorded tree, and `render()` (a static method, as in TVM) prints it. So two timing
instruments in one context nest each pass under itself, and any of them exiting clears what
the others recorded. Beyond TVM: a pass that raises is popped too (`run_after_pass_failed`,
duration up to the failure), so the stack stays balanced and `render()` keeps working.
"""

from __future__ import annotations

import sys
import threading
from time import perf_counter_ns
from typing import Any

from xrelay.instrument.nesting import NestingInstrument, PassFrame

NO_PROFILE_WARNING = "Warning: no passes have been profiled, did you enable pass profiling?"


def now_us() -> float:
    """The clock, in microseconds (tests replace this module attribute with a fake clock)."""
    return perf_counter_ns() / 1000.0


class _Profile:
    __slots__ = ("name", "start", "duration", "children")

    def __init__(self, name: str, start: float) -> None:
        self.name = name
        self.start = start
        self.duration = 0.0
        self.children: list[_Profile] = []


class _ProfileStore(threading.local):
    """TVM's PassProfileThreadLocalEntry: the placeholder root and the stack of open passes."""

    def __init__(self) -> None:
        self.root = _Profile("root", 0.0)
        self.stack: list[_Profile] = []


_store = _ProfileStore()


def _percent(part: float, whole: float) -> str:
    """`part / whole * 100` printed as C++ `std::fixed << std::setprecision(2)` prints the double.

    Division by zero follows IEEE as in TVM: x/0 is "inf", and 0/0 is the x86-64 default NaN,
    which has its sign bit set, so glibc prints "-nan".
    """
    if whole == 0:
        if part == 0:
            return "-nan"
        return "inf" if part > 0 else "-inf"
    return f"{part / whole * 100.0:.2f}"


class PassTimingInstrument(NestingInstrument):
    """Times every pass run (microseconds); `render()` returns TVM's profile text.

    The profile's stack is TVM's, per thread and shared by every timing instrument, so the end of a
    pass this instrument did not see start (`ended_unseen`: installed from inside the pass) pops it too.
    """

    def entered(self, frame: PassFrame) -> None:
        store = _store
        parent = store.stack[-1] if store.stack else store.root
        profile = _Profile(frame.info.name, now_us())
        parent.children.append(profile)
        store.stack.append(profile)

    def _pop_profile(self) -> None:
        end = now_us()
        stack = _store.stack
        if not stack:
            raise RuntimeError("PassTimingInstrument: mismatched enter/exit for pass profiling")
        profile = stack.pop()
        profile.duration = end - profile.start

    def left(self, frame: PassFrame, mod: Any) -> None:
        self._pop_profile()

    def failed(self, frame: PassFrame) -> None:
        self._pop_profile()

    def ended_unseen(self, info: Any, mod: Any, failed: bool) -> None:
        self._pop_profile()

    def exit_pass_ctx(self) -> None:
        # TVM clears the recorded tree only; passes still open (the context was left or its
        # instruments overridden from inside a pass) stay on the stack and are popped as usual.
        _store.root.children.clear()

    @staticmethod
    def render() -> str:
        """The profile tree: one line per pass run, depth first, one tab per nesting level:
        `name: {total:.0f}us [{self:.0f}us] ({total/all*100:.2f}%; {total/parent*100:.2f}%)`,
        each line ending in a newline. Warns on stderr and returns "" when nothing was profiled;
        raises RuntimeError while a timed pass is still running.
        """
        store = _store
        if store.stack:
            raise RuntimeError("PassTimingInstrument: cannot print pass profile while still in a pass!")
        top_level = store.root.children
        if not top_level:
            print(NO_PROFILE_WARNING, file=sys.stderr)
            return ""
        all_total = sum(profile.duration for profile in top_level)
        lines: list[str] = []
        # (depth, parent total, profile); reversed pushes give a pre-order walk, as in TVM.
        pending = [(0, all_total, profile) for profile in reversed(top_level)]
        while pending:
            depth, parent_total, profile = pending.pop()
            total = profile.duration
            self_time = total
            for child in reversed(profile.children):
                self_time -= child.duration
                pending.append((depth + 1, total, child))
            lines.append(
                f"{chr(9) * depth}{profile.name}: {total:.0f}us [{self_time:.0f}us] "
                f"({_percent(total, all_total)}%; {_percent(total, parent_total)}%)\n"
            )
        return "".join(lines)
