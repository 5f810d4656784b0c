"""A channel shuffle's pad written by the elementwise tail in front of it: one pass fewer per unit.

A ShuffleNet unit starts with a grouped 1x1 convolution, its bias-add and ReLU (a `plan.FusedTail`
writing in place), then the channel shuffle (reshape, transpose, reshape), which `pad_step` copies
straight into the padded buffer of the depthwise convolution that follows. `fuse_shuffled_pads`
gives that pad to the tail: the tail's last member (the ReLU) writes its result straight into the
padded buffer's interior through the shuffle's permutation (a strided view of the interior with the
result's channel axis split in two, `(G, C/G)` seen as `(C/G, G)` transposed), so the pad's copy of
the whole activation and its step are gone. The ReLU's write becomes strided, as the copy's was.
"""

from __future__ import annotations

import numpy as np

from xrelay.runtime.kernels.conv_epilogue import RowTail
from xrelay.runtime.executor.pad_step import RESHAPES, PadStep
from xrelay.runtime.executor.plan import MIN_SPLIT_ELEMENTS, FusedTail
from xrelay.runtime.parallel.threads import run_parts, worth_splitting

PROCESSES_MIN_SPLIT_ELEMENTS = 1 << 15
"""In the two-process mode a `ShuffledTail` of this many points or more splits its rows over both
processes (ShuffleNet's: 26K-106K points, below `plan.PROCESSES_MIN_SPLIT_ELEMENTS`), so the second
process, which runs the grouped and depthwise convolutions around it in halves, does not wait out
the tail; read when the step is made (both processes must agree)."""


class ShuffledTail:
    """The step of an elementwise tail whose last member writes into a shuffle's pad (see the module
    docstring): `tail`'s members run on ranges of its rows (output axis `tail.loop`), split over the
    worker threads as the `FusedTail` was; the pad's border is filled first."""

    spmd = True
    """Both processes of the two-process mode may run this step (runtime/parallel/spmd.py): it writes in its
    parts and the pad's border by `run_alone`."""

    def __init__(self, tail: RowTail, pad: PadStep, shuffled_shape: tuple[int, ...], inverse: tuple[int, ...],
                 rows: int, points: int):
        self.tail, self.pad, self.shuffled_shape, self.inverse = tail, pad, shuffled_shape, inverse
        self.rows, self.points = rows, points
        self.processes_min_split = PROCESSES_MIN_SPLIT_ELEMENTS
        self.kept: tuple | None = None
        """(padded buffer, each member's operand arrays, `rows` bound for them) of the last run, kept
        while the padded buffer is a planned one: a run with the same arrays binds nothing."""
        self.source: FusedTail | None = None
        """The fused tail this step was made from (runtime/kernels/contraction_tail.py reads its ops)."""

    def __call__(self, env: list) -> None:
        run_parts(self.epilogue(env), self.rows, worth_splitting(self.points, *self.min_split))

    def epilogue(self, env: list):
        """Fill the pad's border and bind the tail for this run: `rows(r0, r1)` runs it on those rows."""
        padded = self.pad.buffer(env)
        rows = self._kept_rows(env, padded)
        if rows is None:
            destination = np.reshape(padded[self.pad.interior], self.shuffled_shape, copy=False).transpose(self.inverse)
            rows = self.tail.bind(env, destination)
            if padded is self.pad.planned[self.pad.k]:
                # bind() has bound every member's results: their operands read as on the next run
                self.kept = (padded, [prepare(env) for _, prepare, _, _ in self.tail.members], rows)
        return rows

    @property
    def min_split(self) -> tuple[int, int]:
        """The points from which it splits over threads and in the two-process mode."""
        return MIN_SPLIT_ELEMENTS, self.processes_min_split

    def _kept_rows(self, env: list, padded: np.ndarray):
        """The kept `rows` when this run's arrays are the kept ones (the members' results bound as
        `RowTail.bind` binds them), else None."""
        kept = self.kept
        if kept is None or kept[0] is not padded:
            return None
        for (_, prepare, finish, _), before in zip(self.tail.members, kept[1]):
            arrays = prepare(env)  # a member reads the slot the one before it has just bound
            if len(arrays) != len(before) or any(a is not b for a, b in zip(arrays, before)):
                return None
            finish(env, arrays)
        return kept[2]


def fuse_shuffled_pads(steps: list, accesses: dict, memory) -> int:
    """Give each pad that copies a channel shuffle (`PadStep.transpose`) to the fused tail computing the
    shuffle's input (see the module docstring); returns how many it gave.

    The tail's result must reach the transpose only through reshapes splitting its last (channel)
    axis in two, every value on the way used once, so nothing else reads the result the last member
    no longer writes; each member must be one ufunc read and written row for row along the first
    axis of more than one point, which is not that last axis. The padded buffer is then allocated
    and written at the tail's step."""
    fused = 0
    for p, pad in enumerate(steps):
        if not (isinstance(pad, PadStep) and pad.transpose is not None and pad.constant_fill and p in accesses):
            continue
        transpose = pad.transpose
        value = transpose.inputs[0]
        while isinstance(value.owner, RESHAPES) and value.has_one_use():
            value = value.owner.operands[0]
        t = next((t for t in range(p - 1, -1, -1) if isinstance(steps[t], FusedTail)
                  and steps[t].members[-1][0].op.results[0] is value), None)
        if t is None or t not in accesses or not value.has_one_use():
            continue
        shape, split = tuple(value.type.get_shape()), tuple(transpose.inputs[0].type.get_shape())
        axis = next((a for a, n in enumerate(shape) if n > 1), len(shape))
        if axis >= len(shape) - 1 or split[:-2] != shape[:-1] or split[-2] * split[-1] != shape[-1]:
            continue
        tail = RowTail.of(steps[t], axis)
        if tail is None or tail.loop != axis:
            continue
        inverse = tuple(int(i) for i in np.argsort(tuple(transpose.permutation.get_values())))
        source = steps[t]
        steps[t] = ShuffledTail(tail, pad, tuple(transpose.results[0].type.get_shape()), inverse, shape[axis],
                                source.points)
        steps[t].source = source
        steps[p] = _no_op
        pad_access = accesses.pop(p)
        # Slots bound after the tail's step (the shuffle's views) are not read there.
        pad_access.reads -= {s for j in range(t + 1, p) if j in accesses for s in accesses[j].binds}
        accesses[t].merge(pad_access)
        memory.buffers[pad.k].step = t  # the padded buffer is now allocated and written here
        memory.touch(t, [pad.out])
        fused += 1
    return fused


def _no_op(env: list) -> None:
    pass
