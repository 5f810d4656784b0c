"""The order a planned linalg program runs its steps in: a prologue of bindings, then the body.

While `LinalgProgram` compiles, it records per step what the step reads and binds (`StepAccess`:
slots of the environment) and which slots' memory it writes. With a memory plan, `build_schedule`
turns these into dependencies between steps (`dependencies`: a step waits for the step that bound
each slot it reads, for the last earlier writer of every planned block it reads or writes, and for
every earlier reader of a block it writes since that write). Steps that read nothing and depend on
nothing (constants, planned allocations, globals: bindings of arrays fixed when the program was
compiled) form the prologue, run once when the plan is bound; `LinalgProgram.use_plan` then hoists
the steps that only bind views of those arrays (runtime/executor/hoist_bindings.py) out of the body
into `Schedule.hoisted`. The body runs in program order; each step may split itself over the worker
threads (`threads.run_parts`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field


@dataclass
class StepAccess:
    """What one step touches: slots it reads, slots it binds in the environment, and slots whose
    memory it writes."""

    reads: set[int] = field(default_factory=set)
    binds: set[int] = field(default_factory=set)
    writes: set[int] = field(default_factory=set)

    def merge(self, other: StepAccess) -> None:
        self.reads |= other.reads
        self.binds |= other.binds
        self.writes |= other.writes


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


class Schedule:
    """The prologue of bindings, then `body`: every step not in the prologue, in program order."""

    def __init__(self, prologue: list[int], body: list[int]):
        self.prologue, self.body = prologue, body
        self.hoisted: list[int | Callable[[list], None]] = []
        """Run after the prologue: steps of the body that only bind views of arrays known once the
        prologue has run (indices; no longer in `body`), and functions binding the results they read
        (runtime/executor/hoist_bindings.py)."""

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
        """Take the steps of `hoisted` (bound by the caller already) out of the body."""
        self.hoisted = hoisted
        gone = {entry for entry in hoisted if isinstance(entry, int)}
        self.body = [i for i in self.body if i not in gone]

    def run(self, steps: Sequence[Callable[[list], None]], env: list) -> None:
        """Run the body on an environment the prologue has bound."""
        for index in self.body:
            steps[index](env)


def build_schedule(accesses: Sequence[StepAccess], block_of: Callable[[int], object]) -> Schedule:
    """The schedule of a program's steps (see the module docstring)."""
    deps = dependencies(accesses, block_of)
    prologue = [i for i in range(len(accesses)) if not accesses[i].reads and not deps[i]]
    in_prologue = set(prologue)
    return Schedule(prologue, [i for i in range(len(accesses)) if i not in in_prologue])
