"""The order a planned linalg program runs its steps in: a prologue of bindings, then the body.

While `LinalgProgram` compiles, it records per step what the step reads and binds (`StepAccess`:
slots of the environment) and which slots' memory it writes. Steps that read and write nothing
(constants, planned allocations, globals: arrays fixed when the program was compiled) form the
prologue, run once when the plan is bound; `LinalgProgram.use_plan` then hoists the steps that only
bind views of those arrays (runtime/executor/hoist_bindings.py) into `Schedule.hoisted`. The body
runs in program order.
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


def build_schedule(accesses: Sequence[StepAccess]) -> Schedule:
    """The schedule of a program's steps (see the module docstring)."""
    prologue = [i for i, access in enumerate(accesses) if not access.reads and not access.writes]
    in_prologue = set(prologue)
    return Schedule(prologue, [i for i in range(len(accesses)) if i not in in_prologue])
