"""Per-step profile of the linalg executor's two-process mode (runtime/parallel/spmd.py), for split_profile.py.

`StepClock.install()` (before the program's first call in that mode, which forks) instruments the
mode: every step of the program, `spmd.Rank.barrier` and `spmd.Rank.alone` record, per run, per
rank and per step, into a shared mapping made before the fork (so the second process writes where
the first reads):

- wall: from the step's start to its end on that rank;
- barriers: time inside the step's barriers (waiting for the other rank, plus the barrier itself),
  and how many;
- parts: time between a phase's opening and closing barriers (this rank's share of the split work);
- alone: on rank 0, work of a step both run that rank 0 does by itself (`run_alone`: a pad's
  border, an epilogue not split, a copy), while rank 1 waits at the next barrier.

`report()` prints, per step, the medians over the runs: the wall on rank 0, each rank's parts,
rank 0's work alone, each rank's barrier time; and the same summed over the steps only rank 0 runs.
A step whose rank-1 barrier time is large waits for rank 0 (its own steps before it, or its work
alone); one whose rank-0 barrier time is large waits for rank 1 (uneven parts, a slower core).
"""

from __future__ import annotations

import mmap
import time

import numpy as np

FIELDS = ("wall", "barrier", "barriers", "parts", "alone", "ran")
WALL, BARRIER, BARRIERS, PARTS, ALONE, RAN = range(len(FIELDS))


class _TimedStep:
    """A step that adds its wall time to the clock's table (other attributes are the step's)."""

    def __init__(self, step, index: int, clock: StepClock):
        self._step, self._index, self._clock = step, index, clock

    def __getattr__(self, name):
        return getattr(self._step, name)

    def __call__(self, env: list) -> None:
        row = self._clock.row()
        start = time.perf_counter_ns()
        try:
            self._step(env)
        finally:
            if row is not None:
                row[self._index, WALL] += time.perf_counter_ns() - start
                row[self._index, RAN] += 1


class StepClock:
    """Per-run, per-rank, per-step times of a two-process program (see the module docstring)."""

    def __init__(self, max_runs: int = 256):
        self.max_runs = max_runs
        self.table: np.ndarray | None = None  # (run, rank, step, field), int64 ns
        self.program = None
        self.saved: list = []

    def row(self):
        """The current run's (step, field) table of this process's rank, or None outside a run."""
        from xrelay.runtime.parallel import threads

        rank = threads.spmd.rank
        if rank is None or self.table is None or not 0 < rank.run <= self.max_runs:
            return None
        return self.table[rank.run - 1, rank.rank]

    def install(self) -> None:
        """Instrument `spmd` (class-level): the next program that forks is the one profiled."""
        from xrelay.runtime.parallel import spmd

        clock = self
        fork, barrier, alone = spmd.TwoProcesses._fork, spmd.Rank.barrier, spmd.Rank.alone
        self.saved = [(spmd.TwoProcesses, "_fork", fork), (spmd.Rank, "barrier", barrier), (spmd.Rank, "alone", alone)]

        def timed_fork(group, env):
            program = group.program
            steps = len(program.steps)
            memory = mmap.mmap(-1, clock.max_runs * 2 * steps * len(FIELDS) * 8)  # shared across the fork
            clock.table = np.frombuffer(memory, np.int64).reshape(clock.max_runs, 2, steps, len(FIELDS))
            clock.program = program
            program.steps[:] = [_TimedStep(step, i, clock) for i, step in enumerate(program.steps)]
            fork(group, env)

        def timed_barrier(rank):
            row = clock.row()
            start = time.perf_counter_ns()
            if row is not None and rank.in_phase_since is not None:
                row[rank.step, PARTS] += start - rank.in_phase_since
                rank.in_phase_since = None
            opening = rank.seq % 2 == 0  # a phase's barriers come in pairs: seq 1, 3, ... open
            barrier(rank)
            if row is not None:
                end = time.perf_counter_ns()
                row[rank.step, BARRIER] += end - start
                row[rank.step, BARRIERS] += 1
                rank.in_phase_since = end if opening else None

        def timed_alone(rank, call):
            row = clock.row()
            counted = row is not None and rank.rank == 0 and rank.step_spmd and not rank.in_phase
            start = time.perf_counter_ns()
            alone(rank, call)
            if counted:
                row[rank.step, ALONE] += time.perf_counter_ns() - start

        spmd.Rank.in_phase_since = None
        spmd.TwoProcesses._fork = timed_fork
        spmd.Rank.barrier = timed_barrier
        spmd.Rank.alone = timed_alone

    def uninstall(self) -> None:
        for owner, name, value in self.saved:
            setattr(owner, name, value)
        self.saved = []

    def report(self, labels: list[str], runs: range, top: int) -> None:
        """Print the per-step medians over `runs` (run numbers of the group, from 1)."""
        group = self.program._processes
        table = self.table[[r - 1 for r in runs if 0 < r <= self.max_runs]]
        if not len(table):
            print("    (no runs recorded)")
            return
        both = set(group.spmd_steps)
        median = np.median(table, axis=0) / 1e6  # (rank, step, field) in ms
        body = list(self.program.schedule.body)
        alone_steps = [i for i in body if i not in both]
        wall0 = np.median(table[:, 0, :, WALL].sum(axis=1)) / 1e6
        shared_wall = np.median(table[:, 0, sorted(both), WALL].sum(axis=1)) / 1e6
        only0 = np.median(table[:, 0, alone_steps, WALL].sum(axis=1)) / 1e6
        print(f"  per step in the two-process mode, medians over {len(table)} runs (ms); rank 0's steps sum to "
              f"{wall0:.2f} ms: {shared_wall:.2f} in the {len(both)} steps both run, {only0:.2f} in the "
              f"{len(alone_steps)} rank 0 runs alone")
        # What a rank does in a step outside phases, barriers and its work alone: the step's own Python
        # (binding views, preparing parts) and any work it does not split.
        outside = table[:, :, :, WALL] - table[:, :, :, PARTS] - table[:, :, :, BARRIER] - table[:, :, :, ALONE]
        shared = sorted(both)
        for name, values in (("barriers", table[..., BARRIER]), ("parts", table[..., PARTS]),
                             ("alone", table[..., ALONE]), ("outside", outside)):
            per_rank = [np.median(values[:, r, shared].sum(axis=1)) / 1e6 for r in (0, 1)]
            print(f"    sum over the steps both run of {name:8s} rank 0 {per_rank[0]:6.2f} ms, rank 1 {per_rank[1]:6.2f} ms")
        outside = np.median(outside, axis=0) / 1e6
        print(f"    {'step':>5s} {'wall0':>6s} {'parts0':>6s} {'parts1':>6s} {'alone0':>6s} {'wait0':>6s} "
              f"{'wait1':>6s} {'out0':>6s} {'out1':>6s} {'bars':>4s}  what (the {top} slowest on rank 0; "
              "wait = time in barriers, out = outside them, parts and work alone)")
        for i in sorted(both, key=lambda i: -median[0, i, WALL])[:top]:
            m0, m1 = median[0, i], median[1, i]
            print(f"    {i:5d} {m0[WALL]:6.3f} {m0[PARTS]:6.3f} {m1[PARTS]:6.3f} {m0[ALONE]:6.3f} {m0[BARRIER]:6.3f} "
                  f"{m1[BARRIER]:6.3f} {outside[0, i]:6.3f} {outside[1, i]:6.3f} {int(round(m0[BARRIERS] * 1e6)):4d}  "
                  f"{labels[i]}")
        slow = sorted(alone_steps, key=lambda i: -median[0, i, WALL])[:5]
        print("    slowest steps rank 0 runs alone: "
              + ", ".join(f"{i} {median[0, i, WALL]:.3f} ({labels[i] or 'other'})" for i in slow))
