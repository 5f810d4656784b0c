"""Independent steps of a linalg program run on two threads at once: a schedule computed once.

While `LinalgProgram` compiles, it records per step what the step reads and binds (`StepAccess`:
slots of the environment) and which slots' memory it writes. With a memory plan, `build_schedule`
turns these into dependencies between steps:

- a step waits for the step that bound each slot it reads;
- memory is compared by planned block (a slot without planned memory is a block of its own): a
  step waits for the last earlier writer of every block it reads or writes, and for every earlier
  reader of a block it writes since that write. The plan hands a block to a new buffer once the
  old buffer's last reader has run, so the new buffer's writer waits for those readers.

Steps that read nothing (constants, planned allocations, globals: bindings of arrays fixed when
the program was compiled) run first, in order; `LinalgProgram.use_plan` then hoists the steps that
only bind views of those arrays (runtime/executor/hoist_bindings.py) out of the body into `Schedule.hoisted`. The rest is cut at every step that is an ancestor
or a descendant of every other step but cheap ones (views): nothing costly can run beside it, so
it runs alone (the cheap steps around it keep their order) and may split
itself over the worker threads (`threads.run_parts`). Between two such steps (when lanes are on:
`MIN_REGION_SAVING_NS` is infinite by default, see there), a region of
independent branches (Inception's four, a fire module's two expands) whose estimated work is large
enough is list-scheduled onto two lanes: each step in program order goes to the lane where the
estimates say it finishes first. The calling thread runs one lane and a worker the other; a step
first waits for the steps of the other lane it depends on (a lock each). Steps of a lane do not
split (a split entered while the lanes run runs its parts on its own thread: `threads._Workers`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xrelay.runtime.parallel.threads import run_split

MIN_REGION_SAVING_NS = float("inf")
"""A region runs on two lanes only if the estimates say it saves at least this much (a lane
hand-off and its waits cost tens of microseconds). Infinite, so lanes are off: measured in one
process alternating the same program with and without lanes (2 threads, load 1.2-1.7), each step
splitting itself over both threads beat the lanes on every branchy model: Inception v1 49.0 against
65.7 ms, Inception v2 63.5 / 70.2, DenseNet-121 87.6 / 99.0, SqueezeNet 12.9 / 15.3; ResNet-50 83.2 /
81.3 (noise); ResNet-18 and ShuffleNet form no lanes. A step in a lane does not split, so each of a
branch's convolutions runs on one core while the other lane idles or waits. (Was 60_000.)"""
WAIT_COST_NS = 10_000
"""Estimated cost of one cross-lane wait."""
CHEAP_NS = 1_000
"""Steps estimated at most this long (views, bindings) may run beside anything."""


@dataclass
class StepAccess:
    """What one step touches: slots it reads, slots it binds in the environment, and slots whose
    memory it writes; `cost_ns` estimates its time."""

    reads: set[int] = field(default_factory=set)
    binds: set[int] = field(default_factory=set)
    writes: set[int] = field(default_factory=set)
    cost_ns: float = 0.0

    def merge(self, other: StepAccess) -> None:
        self.reads |= other.reads
        self.binds |= other.binds
        self.writes |= other.writes
        self.cost_ns += other.cost_ns


def dependencies(accesses: Sequence[StepAccess], block_of: Callable[[int], object]) -> list[set[int]]:
    """Per step, the earlier steps it must run after (see the module docstring)."""
    binder: dict[int, int] = {}
    last_writer: dict[object, int] = {}
    readers: dict[object, list[int]] = {}
    deps: list[set[int]] = []
    for i, access in enumerate(accesses):
        mine: set[int] = set()
        for slot in access.reads:
            if slot in binder:
                mine.add(binder[slot])
        read_blocks = {block_of(s) for s in access.reads}
        write_blocks = {block_of(s) for s in access.writes}
        for block in read_blocks | write_blocks:
            if block in last_writer:
                mine.add(last_writer[block])
        for block in write_blocks:
            mine.update(readers.get(block, ()))
        mine.discard(i)
        deps.append(mine)
        for slot in access.binds:
            binder[slot] = i
        for block in read_blocks - write_blocks:
            readers.setdefault(block, []).append(i)
        for block in write_blocks:
            last_writer[block] = i
            readers[block] = []
    return deps


class Lanes:
    """Two lists of steps run at once, one on the calling thread and one on a worker; entries are
    (step index, indices of the locks to wait for, index of the lock to release after or None)."""

    def __init__(self, lanes: list[list[tuple[int, tuple[int, ...], int | None]]], signals: int):
        self.lanes, self.signals = lanes, signals

    def run(self, steps: Sequence[Callable[[list], None]], env: list) -> None:
        locks = [threading.Lock() for _ in range(self.signals)]
        for lock in locks:
            lock.acquire()
        released = [False] * self.signals
        failed: list[bool] = []

        def lane(entries) -> None:
            try:
                for index, waits, signal in entries:
                    for w in waits:
                        locks[w].acquire()  # passes once the other lane released it
                        locks[w].release()
                    if failed:
                        return
                    steps[index](env)
                    if signal is not None:
                        released[signal] = True
                        locks[signal].release()
            except BaseException:
                failed.append(True)
                for k, lock in enumerate(locks):  # let the other lane finish instead of waiting
                    if not released[k]:
                        released[k] = True
                        lock.release()
                raise

        run_split(2, [lambda: lane(self.lanes[0]), lambda: lane(self.lanes[1])])


class Schedule:
    """The prologue of bindings, then stages: a step index (run alone) or `Lanes`; `body` is every
    step not in the prologue, in program order."""

    def __init__(self, prologue: list[int], stages: list[int | Lanes], body: list[int]):
        self.prologue, self.stages, self.body = prologue, stages, body
        self.hoisted: list[int | Callable[[list], None]] = []
        """Run after the prologue: steps of the body that only bind views of arrays known once the
        prologue has run (indices; no longer in `body` or `stages`), and functions binding the results
        they read (runtime/executor/hoist_bindings.py)."""

    @property
    def concurrent_steps(self) -> int:
        """How many steps run on lanes."""
        return sum(len(lane) for s in self.stages if isinstance(s, Lanes) for lane in s.lanes)

    def bind(self, steps: Sequence[Callable[[list], None]], env: list) -> None:
        """Run the prologue: the bindings of arrays fixed when the program was compiled, then the
        hoisted bindings."""
        for index in self.prologue:
            steps[index](env)
        for entry in self.hoisted:
            if isinstance(entry, int):
                steps[entry](env)
            else:
                entry(env)

    def hoist(self, hoisted: list[int | Callable[[list], None]]) -> None:
        """Take the steps of `hoisted` (bound by the caller already) out of the body and the stages."""
        self.hoisted = hoisted
        gone = {entry for entry in hoisted if isinstance(entry, int)}
        self.body = [i for i in self.body if i not in gone]
        self.stages = [s for s in self.stages if not (isinstance(s, int) and s in gone)]

    def run(self, steps: Sequence[Callable[[list], None]], env: list) -> None:
        """Run the stages on an environment the prologue has bound."""
        for stage in self.stages:
            if isinstance(stage, Lanes):
                stage.run(steps, env)
            else:
                steps[stage](env)


def build_schedule(accesses: Sequence[StepAccess], block_of: Callable[[int], object]) -> Schedule:
    """The schedule of a program's steps (see the module docstring)."""
    n = len(accesses)
    deps = dependencies(accesses, block_of)
    prologue = [i for i in range(n) if not accesses[i].reads and not deps[i]]
    in_prologue = set(prologue)
    body = [i for i in range(n) if i not in in_prologue]
    # Ancestors and descendants as bit sets over the body's steps.
    position = {step: k for k, step in enumerate(body)}
    ancestors = [0] * len(body)
    for k, step in enumerate(body):
        bits = 0
        for d in deps[step]:
            if d in position:
                bits |= ancestors[position[d]] | (1 << position[d])
        ancestors[k] = bits
    descendants = [0] * len(body)
    for k in range(len(body) - 1, -1, -1):
        for d in deps[body[k]]:
            if d in position:
                descendants[position[d]] |= descendants[k] | (1 << k)
    # Cheap steps (views of weights, whose users are far away) do not keep a step from running alone.
    costly = sum(1 << k for k, step in enumerate(body) if accesses[step].cost_ns > CHEAP_NS)
    stages: list[int | Lanes] = []
    region: list[int] = []
    for k, step in enumerate(body):
        if costly & ~(ancestors[k] | descendants[k] | (1 << k)) == 0:
            stages.extend(_region(region, deps, accesses))
            stages.append(step)
            region = []
        else:
            region.append(step)
    stages.extend(_region(region, deps, accesses))
    return Schedule(prologue, stages, body)


def _region(steps: list[int], deps: list[set[int]], accesses: Sequence[StepAccess]) -> list[int | Lanes]:
    """The steps of a region as two `Lanes` when that is estimated to save enough, else one by one."""
    if len(steps) < 2:
        return list(steps)
    lane_of: dict[int, int] = {}
    finish: dict[int, float] = {}
    free = [0.0, 0.0]
    for step in steps:
        ready = max((finish[d] for d in deps[step] if d in finish), default=0.0)
        cost = accesses[step].cost_ns
        ends = []
        for lane in (0, 1):
            crossing = sum(1 for d in deps[step] if d in lane_of and lane_of[d] != lane)
            ends.append(max(free[lane], ready) + cost + crossing * WAIT_COST_NS)
        lane = 0 if ends[0] <= ends[1] else 1
        lane_of[step], finish[step], free[lane] = lane, ends[lane], ends[lane]
    total = sum(accesses[s].cost_ns for s in steps)
    if 1 not in lane_of.values() or total - max(free) < MIN_REGION_SAVING_NS:
        return list(steps)
    signal_of: dict[int, int] = {}
    lanes: list[list[tuple[int, tuple[int, ...], int | None]]] = [[], []]
    waits_of = {}
    for step in steps:
        waits = []
        for d in sorted(deps[step]):
            if d in lane_of and lane_of[d] != lane_of[step]:
                waits.append(signal_of.setdefault(d, len(signal_of)))
        waits_of[step] = tuple(waits)
    for step in steps:
        lanes[lane_of[step]].append((step, waits_of[step], signal_of.get(step)))
    return [Lanes(lanes, len(signal_of))]
