"""NestingInstrument: the stack of running passes, kept once for every instrument that needs it.

Passes nest: a Sequential runs its children, and a pass may run other passes in its body. The
PassContext calls `run_before_pass` when a pass starts and `run_after_pass` (it returned) or
`run_after_pass_failed` (it raised) when it ends, innermost first (docs/architecture.md §4). An
instrument that pairs the two ends of a pass run (what did this pass receive? how deep is it?)
derives `NestingInstrument` and overrides small hooks instead of pushing and popping by itself:

- `entered(frame)`: a pass starts. `frame.info` is its PassInfo, `frame.received` the module it
  receives, `frame.depth` the number of passes running around it (0 for a top-level pass, 1 for a
  child of a Sequential). Whatever the instrument keeps for this run goes in `frame.state`.
- `left(frame, mod)`: the pass returned `mod`.
- `failed(frame)`: the pass raised, or an instrument's hook raised after its `run_before_pass`
  (`sys.exception()` is the error). Every started pass ends in exactly one of `left` or `failed`.
- `ended_unseen(info, mod, failed)`: a pass ended whose start this instrument did not see (it was
  installed by `override_instruments` from inside the pass, as TVM allows, or its context was entered
  again meanwhile). Ignored by default.

The frame is pushed when `entered` returns and popped when `left` returns or before `failed` runs,
so a hook that raises leaves the stack right: if `entered` raises, the pass never started for this
instrument (the PassContext calls no end hook for it); if `left` raises, the PassContext calls
`run_after_pass_failed` for this instrument and pass, and `failed(frame)` follows. A pass that
`should_run` vetoes gets no hook and no frame. `running` is the stack, outermost first; entering a
context (`enter_pass_ctx`) starts it empty. A subclass that overrides `__init__` or
`enter_pass_ctx` calls the base's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xrelay.instrument.pass_instrument import PassInstrument


@dataclass(eq=False, slots=True)
class PassFrame:
    """One running pass: its PassInfo, the module it received, its depth, and the instrument's state."""

    info: Any
    received: Any
    depth: int
    state: Any = None


class NestingInstrument(PassInstrument):
    """A PassInstrument that tracks the running passes as `PassFrame`s (see the module docstring)."""

    def __init__(self) -> None:
        self.running: list[PassFrame] = []

    # -- hooks for subclasses ------------------------------------------------------------------
    def entered(self, frame: PassFrame) -> None:
        """A pass starts (its frame is pushed when this returns)."""

    def left(self, frame: PassFrame, mod: Any) -> None:
        """The pass returned `mod` (its frame is popped when this returns)."""

    def failed(self, frame: PassFrame) -> None:
        """The pass raised (its frame is already popped); `sys.exception()` is the error."""

    def ended_unseen(self, info: Any, mod: Any, failed: bool) -> None:
        """A pass ended (returned, or raised if `failed`) whose start this instrument did not see."""

    # -- the PassInstrument protocol -----------------------------------------------------------
    def enter_pass_ctx(self) -> None:
        self.running = []

    def run_before_pass(self, mod: Any, info: Any) -> None:
        frame = PassFrame(info, mod, len(self.running))
        self.entered(frame)
        self.running.append(frame)

    def run_after_pass(self, mod: Any, info: Any) -> None:
        frame = self._top(info)
        if frame is None:
            self.ended_unseen(info, mod, False)
            return
        self.left(frame, mod)
        self.running.pop()

    def run_after_pass_failed(self, mod: Any, info: Any) -> None:
        frame = self._top(info)
        if frame is None:
            self.ended_unseen(info, mod, True)
            return
        self.running.pop()
        self.failed(frame)

    def _top(self, info: Any) -> PassFrame | None:
        running = self.running
        if running and running[-1].info is info:
            return running[-1]
        return None
