"""Convolutions that run the elementwise tail after them on each block of output rows they finish.

In ResNet-like networks a convolution step is followed by a fused elementwise tail (`plan.FusedTail`:
residual add, bias-add, ReLU, each writing in place). Run as a step of its own, the tail passes
over the whole activation again once the convolution is done, and below `plan.MIN_SPLIT_ELEMENTS`
(every ResNet activation but the stem's) on one core while the other waits. `fuse_conv_epilogues`
moves such a convolution to its tail's step and hands its kernel the tail as an epilogue
(`linalg_conv.ConvGeometry.float_runner`): each thread's part of the output rows, and on one thread
each cache block of them, goes through the tail right after it is computed, while it is in cache,
on the thread that computed it.

The tail's members must each be one ufunc over loop-space views (`linalg_structured._one_ufunc_program`:
bias-add, ReLU, residual add), cut along the loop of the convolution's output rows with coefficient 1;
a part then costs one ufunc call per member on row slices of views made once per run.
A tail of its own that writes into a pad (`TailIntoPad`) and reads the result of a convolution's tail
row for row (ResNet's residual sum, also the next block's residual, then its bias-add and ReLU into
the next convolution's pad) runs on the same blocks of rows, after that tail (`ConvStep.after`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr

from xrelay.runtime.executor import plan as split_plan
from xrelay.runtime.kernels.body_program import REDUCERS
from xrelay.runtime.kernels.conv_pool import BlockedConvPool
from xrelay.runtime.kernels.linalg_conv import WINOGRAD_ALGORITHMS, ConvGeometry, conv_geometry
from xrelay.runtime.kernels.linalg_structured import Structured, contraction_pair
from xrelay.runtime.executor.pad_step import PadStep
from xrelay.runtime.executor.plan import FusedTail
from xrelay.runtime.parallel.threads import run_alone, run_parts, spmd, worth_splitting
from xrelay.runtime.kernels.window_reduce import IDENTITIES, ClippedPooling, pooling_reducer


class RowTail:
    """A `FusedTail` run on ranges of one loop: `bind(env)` prepares every member for this run and
    returns `rows(r0, r1)`, which applies the members in order to rows [r0, r1) of that loop."""

    def __init__(self, members: list[tuple[Callable, Callable, Callable, int]], loop: int, result: SSAValue):
        self.members, self.loop, self.result = members, loop, result
        self.kept: tuple[list, np.ndarray | None, Callable[[int, int], None]] | None = None
        """(each member's arrays, `last_out`, the `rows` made for them) of the last `bind`."""

    @staticmethod
    def of(tail: FusedTail, out_axis: int, row_for_row: bool = False) -> RowTail | None:
        """The tail as a `RowTail` whose rows are axis `out_axis` of its outputs, or None when a member
        is not one ufunc or reads or writes its operands other than row for row along that axis.
        `row_for_row`: a kernel's epilogue (passes/kernels/form_kernels.py), whose members read the
        values made inside the kernel with their own output's map: its rows are the loop its output
        map places at `out_axis`, whichever loop the members' own split would take."""
        members, loops = [], set()
        for chunked, prepare, finish in tail.members:
            call = getattr(chunked.whole, "ufunc_call", None)
            if call is None:
                return None
            n_in = len(chunked.op.inputs)
            if row_for_row:
                row = chunked.op.get_indexing_maps().data[n_in].data.results[out_axis]
                if not isinstance(row, AffineDimExpr):
                    return None
                loops.add(row.position)
            else:
                for i, cut in enumerate(chunked.cuts):
                    if cut is None:
                        continue
                    axis, coefficient, offset, alone = cut
                    if (coefficient, offset, alone) != (1, 0, True) or (i >= n_in and axis != out_axis):
                        return None
                loops.add(chunked.loop)
            members.append((call, prepare, finish, n_in))
        if len(loops) != 1:
            return None
        return RowTail(members, loops.pop(), tail.members[-1][0].op.results[0])

    def bind(self, env: list, last_out: np.ndarray | None = None) -> Callable[[int, int], None]:
        """`rows(r0, r1)` for this run; with `last_out`, the last member writes there instead of in
        place: an array of the result's shape, and the result's slot is bound to it, or of that shape
        with its last axis split in two (a channel shuffle's view of a pad: runtime/kernels/shuffle_tail.py),
        the member's operands viewed with that axis split alike."""
        d = self.loop
        prepared = []
        for index, (_, prepare, finish, n_in) in enumerate(self.members):
            arrays = prepare(env)
            if last_out is not None and index == len(self.members) - 1 and last_out.ndim == self.result.type.get_num_dims():
                arrays[n_in] = last_out
            finish(env, arrays)  # in place: the results are the out buffers
            prepared.append(arrays)
        kept = self.kept
        if (kept is not None and kept[1] is last_out
                and all(len(a) == len(b) and all(x is y for x, y in zip(a, b)) for a, b in zip(prepared, kept[0]))):
            return kept[2]  # the same arrays as the last run's (a planned program): the same views
        calls = []
        for index, ((call, _, _, n_in), arrays) in enumerate(zip(self.members, prepared)):
            last = last_out is not None and index == len(self.members) - 1
            split = last and last_out.ndim > self.result.type.get_num_dims()
            ufunc, args, out = call(arrays)
            if split:
                halves = last_out.shape[out.ndim - 1:]
                args = [a.reshape(a.shape[:-1] + (halves if a.shape[-1] > 1 else (1, 1)))
                        if isinstance(a, np.ndarray) and a.ndim == out.ndim else a for a in args]
                out = last_out
            sliced = [isinstance(a, np.ndarray) and a.ndim == out.ndim and a.shape[d] > 1 for a in args]
            calls.append((ufunc, list(zip(args, sliced)), out))
        before = (slice(None),) * d

        def rows(r0: int, r1: int) -> None:
            index = before + (slice(r0, r1),)
            for ufunc, args, out in calls:
                ufunc(*[a[index] if s else a for a, s in args], out=out[index], casting="unsafe")

        self.kept = (prepared, last_out, rows)
        return rows


class ConvStep:
    """The step of a structured op that is a 2-D convolution (`linalg_conv.conv_geometry`) with one
    output: `prepare(env)` gives its operand arrays, `run(arrays)` computes it as
    `compile_structured` does, `finish(env, arrays)` binds its result. With a `tail` (set by
    `fuse_conv_epilogues`) the step also runs that tail, row block by row block."""

    def __init__(self, op: Structured, geometry: ConvGeometry, runner: Callable, run: Callable,
                 prepare: Callable, finish: Callable, accumulate: bool):
        self.op, self.geometry, self.runner = op, geometry, runner
        self.run, self.prepare, self.finish, self.accumulate = run, prepare, finish, accumulate
        self.n_in = len(op.inputs)
        self.rows = op.results[0].type.get_shape()[geometry.out_axes[2]]
        self.tail: RowTail | None = None
        self.pad: PadStep | None = None
        """With a tail, the pad of the tail's result that this step also does, row block by row block."""
        self.pad_only_reader = False
        """Whether the pad is the only reader of the tail's result: the tail's last member then writes
        into the pad's interior, and the tail's result is that interior."""
        self.pool: tuple[ClippedPooling, Callable, Callable, int] | None = None
        """Without a tail or pad: the pooling of the pad of this step's result that this step computes
        from the unpadded result (`fuse_conv_epilogues`), and the pooling's prepare, finish and input count."""
        self.kept: tuple | None = None
        """(the pad's buffer, its interior view, (the tail's rows, the result, their epilogue with the
        pad's copy) or None) of the last run: kept while the arrays are the same objects, as a planned
        program's are on every run (making it again costs 100-150 us of Python a run)."""
        self.after: TailIntoPad | None = None
        """With a tail and no pad: a tail into a pad that reads the tail's result row for row, run on
        each block of rows after this step's tail (`_fuse_tails_into_pads`)."""
        self.kept_after: tuple | None = None
        """(the tail's rows, the after's rows, both in one call) of the last run."""
        self.blocked: BlockedConvPool | None = None
        """With `pool`, when the pooling is the only reader of the result: both computed block by block
        of rows (`runtime/kernels/conv_pool.py`)."""
        self.constant_weight, self.reuse_views = False, (False,)
        self.winograd = False
        """Whether the runner computes this convolution by Winograd (its static shapes)."""
        self.pointwise = False
        """Whether it is a 1x1 stride-1 convolution without offset (its data is its patch matrix)."""

    @staticmethod
    def of(op: Structured, zero_init: Sequence[bool], constant: Sequence[bool], run: Callable,
           prepare: Callable, finish: Callable, reuse_views: Sequence[bool] = (False,),
           algorithm: str | None = None) -> ConvStep | None:
        """The step of `op` if it is a convolution; `algorithm` as `ConvGeometry.runner` takes it
        ("generic": None, the op is contracted generically)."""
        if len(op.outputs) != 1 or len(op.results) != 1 or algorithm == "generic":
            return None
        pair = contraction_pair(op, 0)
        if pair is None:
            return None
        try:
            ranges = tuple(op.get_static_loop_ranges())
        except NotImplementedError:
            return None
        maps = [m.data for m in op.get_indexing_maps()]
        geometry = conv_geometry(maps, ranges, *pair, len(op.inputs))
        if geometry is None:
            return None
        accumulate = not (zero_init and zero_init[0])
        runner = geometry.runner(ranges, constant, reuse_views, algorithm)
        step = ConvStep(op, geometry, runner, run, prepare, finish, accumulate)
        step.constant_weight = geometry.weight < len(constant) and bool(constant[geometry.weight])
        step.reuse_views = reuse_views
        out_shape = op.results[0].type.get_shape()
        n, f, oh, ow = (out_shape[a] for a in geometry.out_axes)
        c = op.inputs[geometry.weight].type.get_shape()[geometry.weight_axes[1]]
        step.winograd = (algorithm in WINOGRAD_ALGORITHMS if algorithm is not None
                         else geometry.winograd_applies(ranges, constant, (n, c, f, oh, ow)))
        step.pointwise = (tuple(ranges[d] for d in geometry.kernel_loops) == (1, 1)
                          and geometry.strides == (1, 1) and geometry.offset == (0, 0))
        return step

    spmd = True
    """Both processes of the two-process mode may run this step: it writes memory only within
    `run_parts`/`run_split` parts and `run_alone` (runtime/parallel/spmd.py)."""

    def __call__(self, env: list) -> None:
        arrays = self.prepare(env)
        tail, pad = self.tail, self.pad
        if self.pool is not None:
            self._pooled(env, arrays)
            return
        if tail is None and pad is None:
            if not self.runner(arrays[:self.n_in], arrays[self.n_in], self.accumulate):
                run_alone(functools.partial(self.run, arrays))  # contracted generically
            self.finish(env, arrays)
            return
        self.finish(env, arrays)  # the tail reads the result's slot: the out buffer, written below
        if pad is None:
            epilogue = tail.bind(env)
            if self.after is not None:
                epilogue = self._then(epilogue, self.after.rows(env))
        else:
            padded, kept = pad.buffer(env), self.kept
            if kept is None or kept[0] is not padded:  # the same buffer (a planned program's): the same view
                kept = (padded, padded[pad.interior], None)
            interior = kept[1]
            if tail is not None and self.pad_only_reader:
                epilogue = tail.bind(env, interior)
            else:
                rows, result = tail and tail.bind(env), env[pad.source]
                if kept[2] is None or kept[2][0] is not rows or kept[2][1] is not result:
                    kept = (padded, interior, (rows, result, self._copying(rows, result, interior)))
                epilogue = kept[2][2]
            self.kept = kept
        if not self.runner(arrays[:self.n_in], arrays[self.n_in], self.accumulate, epilogue):
            # A kernel the runner does not take (not float, ...): whole, then the tail.
            run_alone(lambda: (self.run(arrays), epilogue(0, self.rows)))

    def _pooled(self, env: list, arrays: list) -> None:
        """The convolution, then its pooling from the unpadded result: the pooling's rows whose
        windows a finished block of convolution rows completes, while they are in cache, on the
        thread that finished the block (`window_reduce.PoolingProgress`; the rows where two threads'
        parts meet by whichever finishes last); in the two-process mode, after the convolution."""
        pool, prepare, finish, n_in = self.pool
        self.finish(env, arrays)
        pooled = prepare(env)
        finish(env, pooled)
        result, target = arrays[self.n_in], pooled[n_in]
        if self.blocked is not None and self.blocked(arrays[:self.n_in], result, target):
            return
        progress = None
        if spmd.rank is None:  # a process sees only its blocks
            progress = pool.progress(result, target)
        if not self.runner(arrays[:self.n_in], result, self.accumulate, progress and progress.finished):
            run_alone(functools.partial(self.run, arrays))  # contracted generically
        left = progress.unclaimed() if progress is not None else [(0, pool.rows_out)]
        split = worth_splitting(int(np.prod(target.shape, dtype=np.int64)), split_plan.MIN_SPLIT_ELEMENTS,
                                split_plan.PROCESSES_MIN_SPLIT_ELEMENTS)
        for start, end in left:
            run_parts(lambda o0, o1, s=start: pool.rows(result, target, s + o0, s + o1), end - start, split)

    def _then(self, first: Callable[[int, int], None], second: Callable[[int, int], None]) -> Callable[[int, int], None]:
        """`first(r0, r1)` then `second(r0, r1)` as one epilogue (kept while both are the same)."""
        kept = self.kept_after
        if kept is not None and kept[0] is first and kept[1] is second:
            return kept[2]

        def both(r0: int, r1: int) -> None:
            first(r0, r1)
            second(r0, r1)

        self.kept_after = (first, second, both)
        return both

    def _copying(self, rows: Callable[[int, int], None] | None, result: np.ndarray, interior: np.ndarray):
        before = (slice(None),) * self.geometry.out_axes[2]

        def rows_and_copy(r0: int, r1: int) -> None:
            if rows is not None:
                rows(r0, r1)
            index = before + (slice(r0, r1),)
            interior[index] = result[index]

        return rows_and_copy


def fuse_conv_epilogues(steps: list, accesses: dict, memory, slot: Callable[[SSAValue], int]) -> int:
    """Give each fused tail that follows a `ConvStep` to it (see the module docstring), and the pad
    of the tail's result, or of the convolution's when it has no tail; returns how many tails and
    pads it moved into convolutions.

    The convolution moves to the tail's step (its own becomes a no-op): the steps between must be
    bindings that read and write nothing (constants, allocations, the tail's earlier members' empty
    steps), so nothing sees the convolution's result or changes its inputs before it now runs; its
    slots are touched at the tail's step, so the memory plan keeps its inputs alive until then. The
    tail must read the convolution's result with the result's own indexing (row r of the tail is row
    r of the convolution), and must not write a buffer the convolution reads."""
    fused = 0
    for t, step in enumerate(steps):
        if not isinstance(step, FusedTail):
            continue
        c = t - 1
        while c >= 0 and _inert(accesses.get(c)):
            c -= 1
        conv = steps[c] if c >= 0 else None
        if not isinstance(conv, ConvStep) or conv.tail is not None or c not in accesses or t not in accesses:
            continue
        if not give_tail(steps, accesses, memory, c, t):
            continue
        fused += 1
        p = t + 1
        while p < len(steps) and _inert(accesses.get(p)):
            p += 1
        if p < len(steps) and give_pad(steps, accesses, memory, slot, t, p):
            fused += 1
    for p, pad in enumerate(steps):  # a pad of a convolution without a tail
        if not (isinstance(pad, PadStep) and pad.constant_fill and not pad.folded_transpose and p in accesses):
            continue
        c = p - 1
        while c >= 0 and _inert(accesses.get(c)):
            c -= 1
        conv = steps[c] if c >= 0 else None
        if not (isinstance(conv, ConvStep) and conv.tail is None and conv.pad is None and c in accesses):
            continue
        result = conv.op.results[0]
        if pad.source != slot(result) or pad.source_shape != tuple(result.type.get_shape()):
            continue
        if _fuse_pool(steps, accesses, memory, slot, c, p, pad):
            fused += 2
            continue
        fused += give_pad(steps, accesses, memory, slot, c, p)
    # A pooling reading the result unpadded (SqueezeNet's stem): strided convolutions only, as the
    # blocked form would replace VGG-19's stride-1 Winograd 3x3s before their pools (3.5x slower).
    for c, conv in enumerate(steps):
        if (isinstance(conv, ConvStep) and conv.tail is None and conv.pad is None and conv.pool is None
                and tuple(conv.geometry.strides) != (1, 1)
                and c in accesses and _fuse_pool(steps, accesses, memory, slot, c, c, None)):
            fused += 1
    fused += _fuse_tail_pads(steps, accesses, memory, slot)
    fused += _fuse_tails_into_transposed_pads(steps, accesses, memory, slot)
    fused += _fuse_tails_into_pads(steps, accesses, memory, slot)
    return fused


def give_tail(steps: list, accesses: dict, memory, c: int, t: int, row_for_row: bool = False) -> bool:
    """Give the fused tail at step `t` to the convolution at step `c` as its epilogue (row block by row
    block); the convolution moves to step `t`. False (nothing changed) when the tail does not read the
    result row for row, writes a buffer the convolution reads, or a member is not one ufunc
    (`row_for_row`: as `RowTail.of` takes it)."""
    conv, step = steps[c], steps[t]
    if not _reads_result_row_for_row(step, conv):
        return False
    conv_access, tail_access = accesses[c], accesses[t]
    buffer = lambda s: memory.storage.get(s, ("slot", s))  # noqa: E731
    written = {buffer(s) for s in conv_access.writes | conv_access.binds}  # its out, which it also reads
    read = {buffer(s) for s in conv_access.reads} - written
    if any(buffer(s) in read for s in tail_access.writes):
        return False
    tail = RowTail.of(step, conv.geometry.out_axes[2], row_for_row)
    if tail is None:
        return False
    conv.tail = tail
    steps[t], steps[c] = conv, _no_op
    tail_access.merge(accesses.pop(c))
    memory.touch(t, sorted(conv_access.reads | conv_access.binds | conv_access.writes))
    return True


def give_pad(steps: list, accesses: dict, memory, slot: Callable[[SSAValue], int], c: int, p: int) -> bool:
    """Give the pad at step `p` of the result of the convolution at step `c` (of its tail's, if it has
    one) to the convolution, which then writes its rows into the pad's interior; False if it does not
    pad that result by a constant."""
    conv, pad = steps[c], steps[p]
    result = conv.tail.result if conv.tail is not None else conv.op.results[0]
    if not (isinstance(pad, PadStep) and pad.constant_fill and not pad.folded_transpose and p in accesses
            and pad.source == slot(result) and pad.source_shape == tuple(result.type.get_shape())):
        return False
    conv.pad = pad
    conv.pad_only_reader = conv.tail is not None and result.has_one_use()
    steps[p] = _no_op
    accesses[c].merge(accesses.pop(p))
    memory.buffers[pad.k].step = c  # the padded buffer is now allocated and written here
    memory.touch(c, [pad.source, pad.out])
    return True


class TailIntoPad:
    """A fused elementwise tail (not after a convolution) whose result only the pad after it reads,
    with that pad: the tail's last member writes into the pad's interior, which is then its result,
    so the pad copies nothing (one pass over the activation less)."""

    spmd = True
    """Both processes of the two-process mode may run this step: the pad's border is filled by
    `run_alone`, the tail's rows written in `run_parts` parts."""

    def __init__(self, tail: FusedTail, rows: RowTail, pad: PadStep):
        self.tail, self.row_tail, self.pad = tail, rows, pad
        self.members = tail.members  # benchmarks/split_profile.py and the like read a tail's members
        self.kept: tuple[np.ndarray, np.ndarray] | None = None
        """(the pad's buffer, its interior view) of the last run."""
        self.through: tuple[tuple[int, ...], tuple[int, ...]] | None = None
        """With a pad that copies a transpose of the tail's result (`PadStep.folded_transpose`): the
        transpose's result shape and the inverse of its permutation, through which the interior is
        viewed as the tail's result (`_fuse_tails_into_transposed_pads`)."""
        self.copies = False
        """Whether the tail's result is also read elsewhere: the tail writes it as it is and each part
        copies its rows into the pad's interior, while they are in cache."""
        self.kept_copy: tuple | None = None
        """(the tail's rows, the result, the interior, both in one call) of the last run."""

    def rows(self, env: list) -> Callable[[int, int], None]:
        """Bind the pad's buffer (its border filled) and the tail for this run: `rows(r0, r1)` writes
        rows [r0, r1) of the tail's result into the pad's interior."""
        padded, kept = self.pad.buffer(env), self.kept
        if kept is None or kept[0] is not padded:  # the same buffer: the same view (and the tail's views)
            inside = padded[self.pad.interior]
            if self.through is not None:
                inside = np.reshape(inside, self.through[0], copy=False).transpose(self.through[1])
            kept = (padded, inside)
            self.kept = kept
        if not self.copies:
            return self.row_tail.bind(env, kept[1])
        rows, result, interior = self.row_tail.bind(env), env[self.pad.source], kept[1]
        copy = self.kept_copy
        if copy is None or copy[0] is not rows or copy[1] is not result or copy[2] is not interior:
            before = (slice(None),) * self.row_tail.loop

            def rows_and_copy(r0: int, r1: int) -> None:
                rows(r0, r1)
                index = before + (slice(r0, r1),)
                interior[index] = result[index]

            copy = (rows, result, interior, rows_and_copy)
            self.kept_copy = copy
        return copy[3]

    def __call__(self, env: list) -> None:
        run_parts(self.rows(env), self.tail.rows, worth_splitting(self.tail.points, split_plan.MIN_SPLIT_ELEMENTS,
                                                                  split_plan.PROCESSES_MIN_SPLIT_ELEMENTS))


def _fuse_tail_pads(steps: list, accesses: dict, memory, slot: Callable[[SSAValue], int]) -> int:
    """Make each fused tail step followed (after bindings) by a pad of its result that nothing else
    reads a `TailIntoPad` (also one whose result is read elsewhere: it then copies its rows into the
    pad); how many."""
    fused = 0
    for p, pad in enumerate(steps):
        if not (isinstance(pad, PadStep) and pad.constant_fill and not pad.folded_transpose and p in accesses):
            continue
        t = p - 1
        while t >= 0 and _inert(accesses.get(t)):
            t -= 1
        if t >= 0 and isinstance(steps[t], FusedTail) and t in accesses and tail_into_pad(steps, accesses, memory, slot, t, p):
            fused += 1
    return fused


def tail_into_pad(steps: list, accesses: dict, memory, slot: Callable[[SSAValue], int], t: int, p: int) -> bool:
    """Make the fused tail at step `t` and the pad at step `p` of its result one `TailIntoPad` at `t`;
    False (nothing changed) when the pad does not pad the tail's result by a constant or the tail
    cannot run by rows."""
    tail, pad = steps[t], steps[p]
    if not (isinstance(pad, PadStep) and pad.constant_fill and not pad.folded_transpose and p in accesses):
        return False
    result = tail.members[-1][0].op.results[0]
    if pad.source != slot(result) or pad.source_shape != tuple(result.type.get_shape()):
        return False
    first = tail.members[0][0]
    cut = first.cuts[len(first.op.inputs)]  # the output axis the tail's loop runs along
    rows = RowTail.of(tail, cut[0]) if cut is not None else None
    if rows is None or (not result.has_one_use() and rows.loop != cut[0]):  # copies along the loop's axis
        return False
    fused_step = TailIntoPad(tail, rows, pad)
    fused_step.copies = not result.has_one_use()
    steps[t], steps[p] = fused_step, _no_op
    accesses[t].merge(accesses.pop(p))
    memory.buffers[pad.k].step = t  # the padded buffer is now allocated and written here
    memory.touch(t, [pad.source, pad.out])
    return True


def _fuse_tails_into_pads(steps: list, accesses: dict, memory, slot: Callable[[SSAValue], int]) -> int:
    """Give each `TailIntoPad` that follows (after bindings) a convolution with a tail and no pad,
    and reads that tail's result row for row along the convolution's output rows, to the convolution
    (`ConvStep.after`): ResNet's residual sum (the convolution's tail) is also the next block's
    residual, so its bias-add and ReLU into the next convolution's pad is a tail of its own. The
    convolution moves to the tail's step, as in `fuse_conv_epilogues`; the tail must write no buffer
    the convolution step reads, and read nothing it writes but its tail's result, row for row."""
    fused = 0
    for q, step in enumerate(steps):
        if not (isinstance(step, TailIntoPad) and q in accesses):
            continue
        c = q - 1
        while c >= 0 and _inert(accesses.get(c)):
            c -= 1
        conv = steps[c] if c >= 0 else None
        if not (isinstance(conv, ConvStep) and conv.tail is not None and conv.pad is None and conv.pool is None
                and conv.after is None and c in accesses):
            continue
        row_tail, axis = step.row_tail, conv.geometry.out_axes[2]
        first = step.tail.members[0][0]
        cut = first.cuts[len(first.op.inputs)]
        if cut is None or cut[0] != axis or first.rows != conv.rows or row_tail.loop != axis:
            continue
        conv_access, tail_access = accesses[c], accesses[q]
        buffer = lambda s: memory.storage.get(s, ("slot", s))  # noqa: E731
        written = {buffer(s) for s in conv_access.writes | conv_access.binds}
        read = {buffer(s) for s in conv_access.reads} - written
        if any(buffer(s) in read or buffer(s) in written for s in tail_access.writes):
            continue
        result = conv.tail.result
        if not _reads_row_for_row(step.tail, result):
            continue
        # Of what the convolution step writes, the tail reads its tail's result (row for row) only.
        reads_written = {s for s in tail_access.reads if buffer(s) in written}
        if any(buffer(s) != buffer(slot(result)) for s in reads_written):
            continue
        if any(value is result and m is not first for m, _, _ in step.tail.members for value in m.op.inputs):
            continue
        conv.after = step
        steps[q], steps[c] = conv, _no_op
        tail_access.merge(accesses.pop(c))
        memory.touch(q, sorted(conv_access.reads | conv_access.binds | conv_access.writes))
        fused += 1
    return fused


def _reads_row_for_row(tail: FusedTail, value: SSAValue) -> bool:
    """Whether the tail's first member reads `value` only through its own output's map, as an operand
    of the output's type (its loop rows are then `value`'s rows)."""
    member = tail.members[0][0].op
    maps = member.get_indexing_maps().data
    out_map, out_type = maps[len(member.inputs)], member.outputs[0].type
    uses = [i for i, v in enumerate(member.inputs) if v is value]
    return bool(uses) and all(value.type == out_type and maps[i] == out_map for i in uses)


def _fuse_tails_into_transposed_pads(steps: list, accesses: dict, memory, slot: Callable[[SSAValue], int]) -> int:
    """Make each pad that copies, through the permutation, the input of a transpose that only
    binds (`pad_step._fold_transpose`) when that input is the single-use result of a fused tail
    (ResNet's input shift, channels-first, before the layout's transpose) a `TailIntoPad` whose
    last member writes into the pad's interior viewed through the inverse permutation: one pass over
    the image instead of two. The fused step runs at the pad's step (the pad's buffer is allocated
    there); the steps between may only bind (the transpose's step)."""
    fused = 0
    for p, pad in enumerate(steps):
        if not (isinstance(pad, PadStep) and pad.folded_transpose and pad.constant_fill and p in accesses):
            continue
        value = pad.transpose.inputs[0]
        t = p - 1  # the steps between write nothing (the transpose's binds a view of the tail's result)
        while t >= 0 and not isinstance(steps[t], FusedTail) and (accesses.get(t) is None or not accesses[t].writes):
            t -= 1
        tail = steps[t] if t >= 0 else None
        if not (isinstance(tail, FusedTail) and t in accesses and value.has_one_use()
                and tail.members[-1][0].op.results[0] is value):
            continue
        first = tail.members[0][0]
        cut = first.cuts[len(first.op.inputs)]
        rows = RowTail.of(tail, cut[0]) if cut is not None else None
        if rows is None:
            continue
        fused_step = TailIntoPad(tail, rows, pad)
        permutation = tuple(pad.transpose.permutation.get_values())
        fused_step.through = (tuple(pad.transpose.results[0].type.get_shape()), tuple(np.argsort(permutation).tolist()))
        tail_access = accesses.pop(t)
        steps[p], steps[t] = fused_step, _no_op
        accesses[p].merge(tail_access)
        memory.touch(p, sorted(tail_access.reads | tail_access.binds | tail_access.writes))
        fused += 1
    return fused


def _fuse_pool(steps: list, accesses: dict, memory, slot: Callable[[SSAValue], int], c: int, p: int,
               pad: PadStep | None) -> bool:
    """Make the convolution at `c` compute the pooling (a fused step of that one op, after bindings)
    that is the only reader of the pad at `p` of its result, from the unpadded result
    (`ClippedPooling`: the pad's value must be the pooling's identity, -inf for a max pool): the
    pad's copy is never made. The convolution moves to the pooling's step, as to a tail's; the steps
    between write nothing and read neither the result nor the pad (bindings, a dropped fill).
    Without a pad (`pad` None, `p` = `c`): the pooling reads the convolution's result itself."""
    conv = steps[c]
    result = slot(conv.op.results[0])
    q = p + 1
    # bindings between may read other slots (a dropped fill's), not these
    unseen = {pad.source, pad.out} if pad is not None else {result}
    while q < len(steps) and (accesses.get(q) is None or not (accesses[q].writes or accesses[q].reads & unseen)):
        q += 1
    step = steps[q] if q < len(steps) else None
    if not (isinstance(step, FusedTail) and len(step.members) == 1 and q in accesses and c in accesses):
        return False
    chunked, prepare, finish = step.members[0]
    op = chunked.op
    found = pooling_reducer(op, REDUCERS)
    if found is None or not (chunked.zero_init and chunked.zero_init[0]):  # accumulating into a fill
        return False
    padded = op.inputs[found[0]]
    if pad is None:
        shape = tuple(conv.op.results[0].type.get_shape())
        if slot(padded) != result:
            return False
        pool = ClippedPooling.of(op, REDUCERS, [0] * len(shape), shape, IDENTITIES.get(found[1]))
    else:
        if slot(padded) != pad.out or not padded.has_one_use():
            return False
        pool = ClippedPooling.of(op, REDUCERS, [index.start for index in pad.interior], pad.source_shape, pad.fill(None))
    if pool is None or pool.row_axis != conv.geometry.out_axes[2]:
        return False
    conv_access, pool_access = accesses[c], accesses[q]
    buffer = lambda s: memory.storage.get(s, ("slot", s))  # noqa: E731
    written = {buffer(s) for s in conv_access.writes | conv_access.binds}
    if any(buffer(s) in {buffer(r) for r in conv_access.reads} - written for s in pool_access.writes):
        return False
    conv.pool = (pool, prepare, finish, len(op.inputs))
    # The pad (the pooling) alone reads the result: it need not be written, unless the convolution
    # runs by Winograd or is a 1x1 GEMM of the data in place, which the blocked form's per-row GEMMs
    # would replace (2.25x Winograd's multiply-adds; a copy of the data into strips).
    if conv.op.results[0].has_one_use() and not conv.winograd and not conv.pointwise:
        conv.blocked = BlockedConvPool.of(conv.geometry, pool, conv.accumulate, conv.constant_weight,
                                          conv.reuse_views)
    steps[q], steps[c], steps[p] = conv, _no_op, _no_op
    pool_access.merge(accesses.pop(c))
    if p != c:
        pool_access.merge(accesses.pop(p))
    memory.touch(q, sorted(conv_access.reads | conv_access.binds | conv_access.writes))
    return True


def _no_op(env: list) -> None:
    pass


def _inert(access) -> bool:
    """Whether a step with this access (None: an emptied step) reads and writes nothing."""
    return access is None or (not access.reads and not access.writes)


def _reads_result_row_for_row(tail: FusedTail, conv: ConvStep) -> bool:
    """Whether the tail's first member reads the convolution's result through its own output's map,
    as an operand of the output's type (so its loop rows are the convolution's output rows)."""
    member = tail.members[0][0].op
    result = conv.op.results[0]
    maps = member.get_indexing_maps().data
    out_map, out_type = maps[len(member.inputs)], member.outputs[0].type
    return any(value is result and value.type == out_type and maps[i] == out_map
               for i, value in enumerate(member.inputs))
