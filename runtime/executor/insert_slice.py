"""The step of a `tensor.insert_slice` (a concatenation's inputs written into their slices).

A placed source (runtime/executor/memory_plan.py, `place_in_slices`) was computed in its slice of the
destination, so the insert copies nothing; the step then only binds its result to the destination.
In a planned program the destination and the source are the same arrays on every run, so whether
the source is already the slice is decided once per pair of arrays (`cached`), not by making the
slice's view and comparing it on every run.
"""

from __future__ import annotations

import numpy as np

from xrelay.runtime.executor.memory_plan import is_same_view

def insert_step(src: int, dst: int, out: int, index: tuple[slice, ...], copy: bool, view_shape: tuple[int, ...],
                cached: list[bool]):
    """A step writing `env[src]` into slice `index` of `env[dst]` (a copy of it when `copy`) and
    binding the result to slot `out`. While `cached[0]` (a planned program) it remembers the last
    destination and source whose slice it found to be the source already."""
    placed: list = [None]

    def insert(env: list) -> None:
        dest, source = env[dst], env[src]
        last = placed[0]
        if not copy and last is not None and last[0] is dest and last[1] is source:
            env[out] = dest
            return
        array = np.array(dest) if copy else dest
        if is_same_view(array[index], source):  # the source was computed in place
            if cached[0] and not copy:
                placed[0] = (dest, source)
        else:
            array[index] = source.reshape(view_shape)
        env[out] = array

    return insert
