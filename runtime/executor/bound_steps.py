"""A planned program's body with its steps' kernel calls bound once.

After a run in the thread mode, `bind(program, env)` replaces each step whose slots all hold the same
arrays on every run (`LinalgProgram.fixed_slots`, runtime/executor/hoist_bindings.py) by its kept call:
a planned contraction's matmul, a fused tail's, a pad's or a convolution's compiled call. A run then
skips the step's Python (operands looked up, views checked, split decided, results bound);
`LinalgProgram.__call__` runs that body while the thread count and bindings are the same."""

from __future__ import annotations

import numpy as np

from xrelay.runtime.kernels.contraction_plan import ContractionStep
from xrelay.runtime.kernels.conv_epilogue import ConvStep
from xrelay.runtime.executor.pad_step import PadStep, copy_key
from xrelay.runtime.executor.plan import FusedTail
from xrelay.runtime.kernels.conv import threaded_matmul
from xrelay.runtime.parallel.threads import split_parts, split_threads

def bind(program, env: list) -> list:
    """`program`'s body as functions of the environment, each step whose slots are all fixed and whose
    calls are kept for this run's arrays (`env`, as a run on one thread left it) replaced by them."""
    fixed = getattr(program, "fixed_slots", None) or set()
    body = []
    for index in program.schedule.body:
        step, access = program.steps[index], program.accesses.get(index)
        call = None
        if access is not None and (access.reads | access.binds | access.writes) <= fixed:
            call = kept_call(step, env)
        body.append(step if call is None else call)
    return body


def kept_call(step, env: list):
    """`f(env)` doing all of what `step` does with this environment's arrays and this thread count
    (its results being bound already), or None."""
    if isinstance(step, ContractionStep):
        arrays = step.prepare(env)
        kept = step.planned.kept(arrays[:step.n_in], arrays[step.n_in])
        if kept is None or not all(isinstance(m, np.ndarray) for m in kept):
            return None
        lhs, rhs, product = kept
        parts, along = step.planned.split, step.planned.along
        if split_parts(parts) == 1:
            def matmul(env: list) -> None:
                np.matmul(lhs, rhs, out=product)
        else:
            def matmul(env: list) -> None:
                threaded_matmul(lhs, rhs, out=product, threads=parts, along=along)

        return matmul
    if isinstance(step, FusedTail):
        kept = step.kept
        if kept is None or kept[1] is None:
            return None
        for (_, prepare, _), before in zip(step.members, kept[0], strict=True):
            arrays = prepare(env)
            if len(arrays) != len(before) or any(a is not b for a, b in zip(arrays, before)):
                return None
        calls, parts = kept[1], split_parts(step.split)

        def ufuncs(env: list) -> None:
            calls(parts)

        return ufuncs
    if isinstance(step, ConvStep) and step.native_arrays is not None and step.native_kept is not None:
        call, kept_arrays = step.native_kept[1].call, step.native_arrays
        if call is None or kept_arrays[0] != split_threads() \
                or any(a is not b for a, b in zip(step.prepare(env), kept_arrays[1], strict=True)):
            return None
        pad = step.pad
        padded = env[pad.out] if pad is not None else None  # (as the run bound it: `buffer` would fill it)
        if pad is not None and pad.planned[pad.k] is not padded:
            return None  # not a planned buffer: a fresh one every run

        def convolution(env: list) -> None:
            if pad is not None and pad.buffer(env) is not padded:  # (its border, unless the plan keeps it)
                step(env)  # a fresh buffer (an unplanned pad): the step makes its call again
                return
            call()

        return convolution
    if isinstance(step, PadStep) and step.native is not None and step.native[1] is not None:
        padded = env[step.out]  # (as the run bound it: `buffer` would fill it)
        if step.planned[step.k] is not padded:
            return None  # not a planned buffer: a fresh one every run
        if copy_key(*step.source_of(env, padded[step.interior])) != step.native[0]:
            return None
        copy, parts, buffer = step.native[1], split_parts(step.split), step.buffer

        def pad(env: list) -> None:
            if buffer(env) is not padded:  # (its border, unless the plan keeps it)
                step(env)  # a fresh buffer (an unplanned pad): the step copies into it
                return
            copy(parts)

        return pad
    return None
