"""Which steps of a program both processes of the two-process mode run (runtime/parallel/spmd.py).

Decided once, after the program's first run (whose bindings the second process inherits): a step
runs on both ranks when its kind writes memory only within `threads.run_parts`/`run_split` parts and
`threads.run_alone` (an `spmd` attribute) and every slot it reads, binds or writes holds, after that
run, an array both processes see at the same address: a constant, a global or a planned buffer
(bound before every run), or a view of the shared mapping. Every other step runs on rank 0 only.
"""

from __future__ import annotations

import bisect

import numpy as np


def shared_slots(program, env: list, bounds: tuple[int, int]):
    """`shared(slot)`: whether `env[slot]`, as the first run left it, is the same array in both
    processes (`bounds`: the shared mapping's first and past-the-end addresses). An array inside the
    memory of one bound before every run (a weight reshaped by a step) is shared: both processes have
    that memory at the same address since the fork. A slot no step binds any more (the pad's buffer of
    a convolution that pools its unpadded result) is too: no step reads it."""
    bound = program._bound
    regions = [bounds, *(np.lib.array_utils.byte_bounds(a) for a in bound if isinstance(a, np.ndarray) and a.size)]
    regions.sort()
    starts = [lo for lo, _ in regions]

    def shared(slot: int) -> bool:
        value = env[slot]
        if value is None:
            return True  # no step reads it: nothing to share
        if bound[slot] is not None and value is bound[slot]:
            return True  # a constant, a global, a planned buffer: bound before every run
        if not isinstance(value, np.ndarray):
            return False
        first, end = np.lib.array_utils.byte_bounds(value)
        # Regions may nest (views among the bound arrays): look at every region starting at or before `first`.
        return any(end <= hi for lo, hi in regions[:bisect.bisect_right(starts, first)] if lo <= first)

    return shared


def spmd_steps(program, env: list, bounds: tuple[int, int]) -> list[int]:
    """The steps of `program`'s body both processes run, in order (see the module docstring)."""
    shared = shared_slots(program, env, bounds)
    chosen = []
    for index in program.schedule.body:
        access = program.accesses.get(index)
        if (access is not None and getattr(program.steps[index], "spmd", False)
                and all(shared(s) for s in access.reads | access.binds | access.writes)):
            chosen.append(index)
    return chosen
