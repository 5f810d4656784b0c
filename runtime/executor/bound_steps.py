"""The one place a placed program binds the same arrays every run (`BoundRuns`).

A program placed by `plan-memory` computes into one arena, so every slot not derived from its
arguments (constants, planned buffers, views of them, results written into them) holds the same
array on every run. `BoundRuns` learns which from the first two runs, which run every step: a slot
no argument reaches (`memory_plan.StepAccess`, recorded while compiling) that holds the same array, or a view of
the same memory, after both is fixed. Later runs start from those bindings, skip the steps that
only bind fixed slots (reshapes, slices, allocations, constants, dropped fills), and run each step
whose slots are all fixed as its kept call (`kept_call`: a planned contraction's matmul, a fused
tail's, a pad's or a convolution's compiled call, made once per thread count), skipping its Python
(operands looked up, views checked, split decided, results bound), or not at all (an insert whose
source the plan computed in its slice)."""

from __future__ import annotations

import numpy as np

from xrelay.runtime.kernels.contraction_plan import PlannedContraction
from xrelay.runtime.kernels.conv_epilogue import ConvStep
from xrelay.runtime.executor.pad_step import PadStep
from xrelay.runtime.executor.plan import FusedTail
from xrelay.runtime.kernels.conv import threaded_matmul
from xrelay.runtime.native.window_kernels import same_view
from xrelay.runtime.parallel.threads import split_parts, split_threads


class BoundRuns:
    """Runs of a placed tensor-level `LinalgProgram` (see the module docstring)."""

    def __init__(self, program):
        self.program = program
        self.first: list | None = None  # the environment the first run left
        self.bound: list | None = None
        """The fixed slots' arrays (None elsewhere): where every run after the second starts."""
        self.fixed: set[int] = set()
        self.replay: list[int] = []  # the indices of the steps a run after the second runs
        self.bodies: dict[int, list] = {}  # per thread count, `replay` with the kept calls

    def run(self, env: list) -> None:
        """Run the program on `env` (`bound` and the arguments, once the first two runs are done)."""
        steps = self.program.steps
        if self.bound is None:
            for step in steps:
                step(env)
            self._learn(env)
            return
        body = self.bodies.get(split_threads())
        if body is not None:
            for step in body:
                step(env)
            return
        for index in self.replay:
            steps[index](env)
        self.bodies[split_threads()] = self._bind(env)

    def _learn(self, env: list) -> None:
        if self.first is None:
            self.first = env
            return
        program, first = self.program, self.first
        self.first = None
        tainted = set(range(len(program.arg_types)))
        for index in sorted(program.accesses):  # what the arguments reach, but for planned memory
            access = program.accesses[index]
            if access.reads & tainted:
                tainted |= access.binds - program.memory.storage.keys()
        self.fixed = {s for s, value in enumerate(env) if s not in tainted and value is not None
                      and (value is first[s] or same_view(value, first[s]))}
        self.bound = [value if s in self.fixed else None for s, value in enumerate(env)]
        accesses = program.accesses
        # (a step with no access was merged into another: it does nothing)
        self.replay = [i for i in sorted(accesses) if accesses[i].writes or not accesses[i].binds <= self.fixed]
        self.bodies[split_threads()] = self._bind(env)

    def _bind(self, env: list) -> list:
        """`replay` as functions of the environment, each step whose slots are all fixed and whose
        calls are kept for this run's arrays (`env`) replaced by them, or dropped when it has nothing
        left to do (an insert of a source computed in its slice)."""
        body = []
        for index in self.replay:
            step, access = self.program.steps[index], self.program.accesses.get(index)
            call = None
            if access is not None and (access.reads | access.binds | access.writes) <= self.fixed:
                call = kept_call(step, env)
            if call is not _nothing:
                body.append(step if call is None else call)
        return body


def _nothing(env: list) -> None:
    pass


def kept_call(step, env: list):
    """`f(env)` doing all of what `step` does with this environment's arrays and this thread count
    (its results being bound already: all its slots are fixed), `_nothing`, or None."""
    in_slice = getattr(step, "in_slice", None)
    if in_slice is not None:
        dest, index, source = in_slice
        return _nothing if same_view(env[dest][index], env[source]) else None
    if isinstance(getattr(step, "planned", None), PlannedContraction):  # (a structured op's step)
        arrays = step.prepare(env)
        kept = step.planned.kept(arrays[:step.n_in], arrays[step.n_in])
        if kept is None or not all(isinstance(m, np.ndarray) for m in kept):
            return None
        lhs, rhs, product = kept
        parts, along = step.planned.split, step.planned.along

        def matmul(env: list) -> None:
            threaded_matmul(lhs, rhs, out=product, threads=parts, along=along)  # (whole: one np.matmul)

        return matmul
    # The step has just run on `env`: what it keeps is for these arrays and this thread count.
    if isinstance(step, FusedTail) and step.kept is not None and step.kept[1] is not None:
        calls, parts = step.kept[1], split_parts(step.split)

        def ufuncs(env: list) -> None:
            calls(parts)

        return ufuncs
    if isinstance(step, ConvStep) and step.native_arrays is not None and step.native_kept is not None:
        call, kept_arrays = step.native_kept[1].call, step.native_arrays
        if call is None or kept_arrays[0] != split_threads() \
                or any(a is not b for a, b in zip(step.prepare(env), kept_arrays[1], strict=True)):
            return None  # (it ran on numpy this time)
        buffer = step.pad.buffer if step.pad is not None else None

        def convolution(env: list) -> None:
            if buffer is not None:
                buffer(env)  # its border
            call()

        return convolution
    if isinstance(step, PadStep) and step.native is not None and step.native[1] is not None:
        copy, parts, buffer = step.native[1], split_parts(step.split), step.buffer

        def pad(env: list) -> None:
            buffer(env)  # its border
            copy(parts)

        return pad
    return None
