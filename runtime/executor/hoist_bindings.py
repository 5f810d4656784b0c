"""Steps that only bind views of a planned program's fixed arrays, run once when the plan is bound.

`hoist(program)` moves a binding step (a reshape or slice, a dropped fill, a transpose folded into
a pad) into the schedule's prologue when every slot it reads holds, on every run, an array known
once the plan is bound: a prologue binding, a pad's planned buffer (`LinalgProgram.planned_slots`),
or a result its step binds to a known operand's array (`LinalgProgram.same_as`, for steps whose
`binds_out_operands` says that each result slot they bind holds their out operand's array as bound
when they run). It stays hoisted only if what it bound is a view of what it read. The known
slots are kept as `LinalgProgram.fixed_slots` (runtime/executor/bound_steps.py)."""

from __future__ import annotations

import functools
from collections import Counter

import numpy as np


def _bind_same(slot: int, operand: int, env: list) -> None:
    env[slot] = env[operand]


def _bind_planned(slot: int, planned: list, k: int, env: list) -> None:
    env[slot] = planned[k]


def hoist(program, bound: list) -> list:
    """Hoist `program`'s binding steps (see the module docstring) on `bound`, the environment after the
    schedule's prologue; returns what `Schedule.bind` replays after the prologue, in order: a step
    index, or a function binding a result it reads in `env` (`f(env)`)."""
    schedule, steps, accesses = program.schedule, program.steps, program.accesses
    binders = Counter()
    faithful: dict[int, bool] = {}
    for index, access in accesses.items():
        for s in access.binds:
            binders[s] += 1
            faithful[s] = faithful.get(s, True) and getattr(steps[index], "binds_out_operands", False)
    body = set(schedule.body)
    fixed = {s for s in range(len(bound)) if bound[s] is not None and binders[s] <= 1}
    fixed -= {s for i in body if i in accesses for s in accesses[i].binds}
    replay: list = []

    def resolve(s: int, chain: list) -> bool:
        """Whether slot `s` holds a known array on every run; results on the way are bound in `bound`
        (and their bindings appended to `chain`)."""
        if s in fixed:
            return True
        k = program.planned_slots.get(s)
        if k is not None:  # a pad's result: its planned buffer (`PadStep.buffer`, whichever step calls it)
            if program._planned[k] is None:
                return False
            binding = functools.partial(_bind_planned, s, program._planned, k)
        else:
            operand = program.same_as.get(s)
            if operand is None or not faithful.get(s, False) or not resolve(operand, chain):
                return False
            binding = functools.partial(_bind_same, s, operand)
        binding(bound)
        chain.append(binding)
        fixed.add(s)
        return True

    for index in schedule.body:
        step, access = steps[index], accesses.get(index)
        if (not getattr(step, "binding", False) or access is None or access.writes or not access.binds
                or any(binders[s] != 1 for s in access.binds)):
            continue
        chain: list = []
        resolved = all(resolve(s, chain) for s in access.reads)
        replay += chain  # facts either way: a later step may read these results too
        if not resolved:
            continue
        step(bound)
        sources = [bound[s] for s in access.reads]
        if all(isinstance(bound[s], np.ndarray) and any(np.may_share_memory(bound[s], a) for a in sources)
               for s in access.binds):
            replay.append(index)
            fixed |= access.binds
        else:  # it copied: it stays in the body
            for s in access.binds:
                bound[s] = None
    # Every other result the body binds that is known so, bound too (runtime/executor/bound_steps.py).
    for index in schedule.body:
        access = accesses.get(index)
        if access is not None and index not in replay:
            for s in sorted(access.reads | access.binds | access.writes):
                chain = []
                resolve(s, chain)
                replay += chain
    program.fixed_slots = fixed
    return replay
