"""When the two-process mode (runtime/parallel/spmd.py) runs calls on threads instead: while it is starved.

The two processes meet at barriers several dozen times a run. When another process holds a core,
the scheduler keeps one of the three runnable processes off a core for a time slice at a time (on
this VM 1-4 ms), and the other rank waits for it at the next barrier: a run costs more than in the
thread mode, whose worker threads hand their parts over through the GIL and locks and degrade
less (ResNet-18 with one core held by a spinning process: 55.6 ms on threads, 60.9 ms in two
processes at the last stop).

`Starvation` watches each run's share of time the first process spent waiting at barriers for the
second: normally a few percent. After `STARVED_RUNS` runs in a row above `STARVED_SHARE`, the next
`backoff` calls run on threads (the second process sleeps); then one call probes the two-process
mode again. A probe that is starved again doubles the backoff (up to `MAX_BACKOFF`), one that is
not returns to the two-process mode and resets it.
"""

from __future__ import annotations

STARVED_SHARE = 0.25
"""A run is starved when the first process waited at barriers for more than this share of it."""
STARVED_RUNS = 2
"""This many starved runs in a row (or one starved probe) turn the fallback on."""
FIRST_BACKOFF = 8
MAX_BACKOFF = 256
"""Calls run on threads before the next probe: `FIRST_BACKOFF`, doubling up to `MAX_BACKOFF`."""


class Starvation:
    """One program's fallback state (see the module docstring)."""

    def __init__(self):
        self.starved_in_a_row = 0
        self.backoff = FIRST_BACKOFF
        self.on_threads = 0
        """Calls still to run on threads before the next probe."""
        self.probing = False
        self.fallbacks = 0
        """How many times the fallback turned on (benchmarks and tests read it)."""

    def use_threads(self) -> bool:
        """Whether this call runs on threads; counts it."""
        if self.on_threads <= 0:
            return False
        self.on_threads -= 1
        self.probing = self.on_threads == 0  # the next call probes the two-process mode
        return True

    def record(self, run_ns: int, waited_ns: int) -> None:
        """After a call run in two processes: it took `run_ns`, the first process waiting `waited_ns`."""
        starved = waited_ns > STARVED_SHARE * run_ns
        probe, self.probing = self.probing, False
        if not starved:
            self.starved_in_a_row = 0
            if probe:
                self.backoff = FIRST_BACKOFF
            return
        self.starved_in_a_row += 1
        if probe or self.starved_in_a_row >= STARVED_RUNS:
            if probe:
                self.backoff = min(2 * self.backoff, MAX_BACKOFF)
            self.on_threads = self.backoff
            self.starved_in_a_row = 0
            self.fallbacks += 1
