"""A zero-padded window sum (an average pool's, before its divide by the window counts) computed from
the unpadded data: the pad is never copied.

An average pool lowers to a pad of its data with zeros, a window-sum pooling of the padded copy and a
divide by a constant count per output position (lowering/to_linalg/window.py; the counts carry
count_include_pad, and stay the divide's). Where the pooling is the pad's only reader and no
convolution computes it (`conv_epilogue._fuse_pool` does for a convolution's result, `TailIntoPad`
writes a tail that is the pad's source's only reader into the pad), `fuse_padded_pools` replaces the
pad and the pooling by one `PaddedPoolStep`: the window sums of `window_reduce.ClippedPooling` (each
tap adds only where it lands inside the data: the border's zeros add nothing). ShuffleNet's stride-2
units' 3x3/2 shortcuts are such pools: their pad copied the unit's input (56x56x24, 28x28x136,
14x14x272), which the unit's grouped 1x1 convolution also reads, every run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from xdsl.ir import SSAValue

from xrelay.runtime.executor import plan as split_plan
from xrelay.runtime.kernels.body_program import REDUCERS
from xrelay.runtime.executor.pad_step import PadStep
from xrelay.runtime.executor.plan import FusedTail
from xrelay.runtime.parallel.threads import run_alone, run_parts, worth_splitting
from xrelay.runtime.kernels.window_reduce import ClippedPooling, pooling_reducer

def _call_all(calls: list) -> None:
    for call in calls:
        call()


class PaddedPoolStep:
    """A pooling of a pad's data computed from the unpadded data (`ClippedPooling`), in parts of its
    output rows."""

    spmd = True
    """Both processes of the two-process mode may run this step: it writes only in its parts."""

    def __init__(self, pool: ClippedPooling, source: int, member: tuple, n_in: int):
        self.pool, self.source, self.member, self.n_in = pool, source, member, n_in
        self.members = [member]  # read by benchmarks/split_profile.py and the like
        self.points = int(np.prod(member[0].ranges, dtype=np.int64))
        self.kept: tuple[np.ndarray, np.ndarray, list] | None = None
        """(source, target, the pooling's calls over them) of the last run that ran whole: kept while
        its source and output are the same arrays, as a planned program's are."""

    def __call__(self, env: list) -> None:
        _, prepare, finish = self.member
        arrays = prepare(env)  # (the padded input's slot is never bound: only the output is used)
        finish(env, arrays)
        source, target, pool = env[self.source], arrays[self.n_in], self.pool
        split = worth_splitting(self.points, split_plan.MIN_SPLIT_ELEMENTS, split_plan.PROCESSES_MIN_SPLIT_ELEMENTS)
        if not split:
            kept = self.kept
            if kept is None or kept[0] is not source or kept[1] is not target:
                kept = self.kept = (source, target, pool.calls(source, target, 0, pool.rows_out))
            run_alone(functools.partial(_call_all, kept[2]))
            return
        run_parts(lambda o0, o1: pool.rows(source, target, o0, o1), pool.rows_out, split)


def _next_busy(steps: list, accesses: dict, start: int, unseen: set[int]) -> int:
    """The first step from `start` on that writes anything or reads one of `unseen`."""
    q = start
    while q < len(steps) and (accesses.get(q) is None or not (accesses[q].writes or accesses[q].reads & unseen)):
        q += 1
    return q


def fuse_padded_pools(steps: list, accesses: dict, memory, slot: Callable[[SSAValue], int]) -> int:
    """Replace each constant pad (not a transpose's) whose only reader is a window-sum pooling starting
    from zeros (the fill the pad's border holds: the sum's identity) by a `PaddedPoolStep` at the
    pooling's step, computing from the pad's source; the steps between must write nothing and read
    neither the pad nor its source. Returns how many it fused."""
    fused = 0
    for p, pad in enumerate(steps):
        if not (isinstance(pad, PadStep) and pad.constant_fill and not pad.folded_transpose and p in accesses):
            continue
        q = _next_busy(steps, accesses, p + 1, {pad.source, pad.out})
        step = steps[q] if q < len(steps) else None
        if not (isinstance(step, FusedTail) and len(step.members) == 1 and q in accesses):
            continue
        member = step.members[0]
        chunked = member[0]
        op = chunked.op
        found = pooling_reducer(op, REDUCERS)
        if found is None or found[1] is not np.add or not (chunked.zero_init and chunked.zero_init[0]):
            continue
        padded = op.inputs[found[0]]
        if slot(padded) != pad.out or not padded.has_one_use():
            continue
        pool = ClippedPooling.of(op, REDUCERS, [index.start for index in pad.interior], pad.source_shape,
                                 pad.fill(None))
        if pool is None:
            continue
        buffer = lambda s: memory.storage.get(s, ("slot", s))  # noqa: E731
        if buffer(pad.source) in {buffer(s) for s in accesses[q].writes}:
            continue  # (the source is read at `q` now: a buffer written there must not be it)
        steps[q], steps[p] = PaddedPoolStep(pool, pad.source, member, len(op.inputs)), _no_op
        accesses[q].merge(accesses.pop(p))
        memory.touch(q, sorted(accesses[q].reads | accesses[q].binds | accesses[q].writes))
        fused += 1
    return fused


def _no_op(env: list) -> None:
    pass
