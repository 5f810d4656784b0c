"""PassTimingInstrument: per-pass wall time as TVM's nested text tree.

`run_before_pass` pushes a profile entry (start time), `run_after_pass` pops it (duration);
`render()` prints the tree depth first in TVM's exact format; `exit_pass_ctx` clears it.
Beyond TVM: a pass that raises is popped too (`run_after_pass_failed`, duration up to the
failure), so the stack stays balanced and `render()` keeps working.
"""

from __future__ import annotations

import sys
from time import perf_counter_ns
from typing import Any

from xrelay.instrument.pass_instrument import PassInstrument


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


def _ratio_percent(part: float, whole: float) -> float:
    # C++ double division as in TVM: x/0 is inf (or nan for 0/0) rather than an error.
    if whole == 0:
        return float("nan") if part == 0 else float("inf") if part > 0 else float("-inf")
    return part / whole * 100.0


class PassTimingInstrument(PassInstrument):
    """Times every pass run (microseconds); `render()` returns TVM's profile text."""

    def __init__(self) -> None:
        self._root = _Profile("root", 0.0)
        self._stack: list[_Profile] = []

    def run_before_pass(self, mod: Any, info: Any) -> None:
        parent = self._stack[-1] if self._stack else self._root
        profile = _Profile(info.name, now_us())
        parent.children.append(profile)
        self._stack.append(profile)

    def run_after_pass(self, mod: Any, info: Any) -> None:
        end = now_us()
        if not self._stack:
            raise RuntimeError("PassTimingInstrument: mismatched enter/exit for pass profiling")
        profile = self._stack.pop()
        profile.duration = end - profile.start

    run_after_pass_failed = run_after_pass

    def exit_pass_ctx(self) -> None:
        self._root.children.clear()
        self._stack.clear()

    def render(self) -> str:
        """The profile tree: one line per pass run, depth first, one tab per nesting level:
        `name: {total:.0f}us [{self:.0f}us] ({total/all*100:.2f}%; {total/parent*100:.2f}%)`,
        each line ending in a newline. Warns on stderr and returns "" when nothing was profiled.
        """
        if self._stack:
            raise RuntimeError("PassTimingInstrument: cannot render the pass profile while still in a pass")
        top_level = self._root.children
        if not top_level:
            print("Warning: no passes have been profiled, did you enable pass profiling?", file=sys.stderr)
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
                f"({_ratio_percent(total, all_total):.2f}%; {_ratio_percent(total, parent_total):.2f}%)\n"
            )
        return "".join(lines)
