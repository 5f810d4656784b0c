"""Convolutions that run their kernel's elementwise epilogue (`plan.FusedTail`: residual add,
bias-add, ReLU) and destination pad on the output rows they finish, instead of in passes of their own.

For a `kernel.dispatch` of a convolution and its epilogue, `give_tail` hands the convolution the tail
(`linalg_conv.ConvGeometry.runner`'s `epilogue`): the native kernels apply it to each value before
storing it (`native_epilogue`), the numpy fallback to the rows once computed. The tail's members must
each be one ufunc over loop-space views (`elementwise_programs.ufunc_program`), cut along the
loop of the convolution's output rows with coefficient 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr

from xrelay.runtime.native.conv_kernels import EpilogueOp, NativeEpilogue
from xrelay.runtime.native.window_kernels import chain_ops
from xrelay.runtime.kernels.linalg_structured import Structured
from xrelay.runtime.executor.pad_step import PadStep
from xrelay.runtime.executor.plan import FusedTail
from xrelay.runtime.parallel.threads import run_parts, split_parts, split_threads


class RowTail:
    """A `FusedTail` run on ranges of one loop: `bind(env)` prepares every member for this run and
    returns `rows(r0, r1)`, which applies the members in order to rows [r0, r1) of that loop."""

    def __init__(self, members: list[tuple[Callable, Callable, Callable, int]], loop: int, result: SSAValue):
        self.members, self.loop, self.result = members, loop, result
        self.kept: tuple[list, np.ndarray | None, Callable[[int, int], None]] | None = None
        """(each member's arrays, `last_out`, the `rows` made for them) of the last `bind`."""

    @staticmethod
    def of(tail: FusedTail, out_axis: int) -> RowTail | None:
        """A kernel's epilogue (passes/kernels/form_kernels.py) as a `RowTail` whose rows are axis
        `out_axis` of its outputs: its members read the values made inside the kernel with their own
        output's map, so its rows are the loop the output maps place at `out_axis` (every operand is
        sliced as a loop-space view); None when a member is not one ufunc or the maps place
        different loops there."""
        members, loops = [], set()
        for chunked, prepare, finish in tail.members:
            call = getattr(chunked.whole, "ufunc_call", None)
            n_in = len(chunked.op.inputs)
            row = chunked.op.get_indexing_maps().data[n_in].data.results[out_axis]
            if call is None or not isinstance(row, AffineDimExpr):
                return None
            loops.add(row.position)
            members.append((call, prepare, finish, n_in))
        if len(loops) != 1:
            return None
        return RowTail(members, loops.pop(), tail.members[-1][0].op.results[0])

    def bind(self, env: list, last_out: np.ndarray | None = None) -> Callable[[int, int], None]:
        """`rows(r0, r1)` for this run; with `last_out` (an array of the result's shape), the last
        member writes there instead of in place, and the result's slot is bound to it."""
        d = self.loop
        prepared = []
        for index, (_, prepare, finish, n_in) in enumerate(self.members):
            arrays = prepare(env)
            if last_out is not None and index == len(self.members) - 1:
                arrays[n_in] = last_out
            finish(env, arrays)  # in place: the results are the out buffers
            prepared.append(arrays)
        kept = self.kept
        if (kept is not None and kept[1] is last_out
                and all(len(a) == len(b) and all(x is y for x, y in zip(a, b)) for a, b in zip(prepared, kept[0]))):
            return kept[2]  # the same arrays as the last run's (a planned program): the same views
        calls = []
        for (call, _, _, _), arrays in zip(self.members, prepared):
            ufunc, args, out = call(arrays)
            sliced = [isinstance(a, np.ndarray) and a.ndim == out.ndim and a.shape[d] > 1 for a in args]
            calls.append((ufunc, list(zip(args, sliced)), out))
        before = (slice(None),) * d

        def rows(r0: int, r1: int) -> None:
            index = before + (slice(r0, r1),)
            for ufunc, args, out in calls:
                ufunc(*[a[index] if s else a for a, s in args], out=out[index], casting="unsafe")

        rows.calls = calls  # what `native_epilogue` reads
        self.kept = (prepared, last_out, rows)
        return rows


class ConvStep:
    """The step of a structured op that is a 2-D convolution (`linalg_conv.conv_geometry`, depthwise
    too) with one output: `prepare(env)` gives its operand arrays, `run(arrays)` computes it as
    `compile_structured` does, `finish(env, arrays)` binds its result; `run.conv` is its geometry and
    runner (made for its kernel's split: `split` parts cutting output axis `split_axis`). With a `tail`
    (set by `give_tail`) the step also runs that tail, row block by row block."""

    def __init__(self, op: Structured, run: Callable, prepare: Callable, finish: Callable, zero_init: Sequence[bool],
                 constant: Sequence[bool], reuse_views: Sequence[bool], split: int | None, split_axis: int | None):
        (self.geometry, self.runner), self.op, self.run, self.prepare, self.finish = run.conv, op, run, prepare, finish
        self.accumulate = not (zero_init and zero_init[0])
        self.n_in = len(op.inputs)
        self.rows = op.results[0].type.get_shape()[self.geometry.out_axes[2]]
        self.tail: RowTail | None = None
        self.pad: PadStep | None = None
        """With a tail, the pad of the tail's result that this step also does, row block by row block."""
        self.pad_only_reader = False
        """Whether the pad is the only reader of the tail's result: the tail's last member then writes
        into the pad's interior, and the tail's result is that interior."""
        self.kept: tuple | None = None
        """(the pad's buffer, its interior view, (the tail's rows, the result, their epilogue with the
        pad's copy) or None) of the last run: kept while the arrays are the same objects, as a planned
        program's are on every run."""
        self.reuse_views, self.split, self.split_axis = reuse_views, split, split_axis
        self.native_kept: tuple | None = None
        """(the Python epilogue of the last run, its `native_epilogue`)."""
        self.constant_weight = self.geometry.weight < len(constant) and bool(constant[self.geometry.weight])
        """Whether the weight is a constant (its layout for the kernel is made once)."""
        self.native_arrays: list | None = None
        """(the thread count, the operand arrays) of the last run, when the native kernel ran it with the
        kept epilogue."""

    def __call__(self, env: list) -> None:
        arrays = self.prepare(env)
        tail, pad = self.tail, self.pad
        self.finish(env, arrays)  # the tail reads the result's slot: the out buffer, written below
        copy = None  # where the native kernel also stores the final values
        if tail is None and pad is None:
            epilogue = rows = None
        elif pad is None:
            epilogue = rows = tail.bind(env)
        else:
            epilogue, rows, copy, self.kept = _into_pad(pad, env, self.kept, tail, self.pad_only_reader,
                                                        self.geometry.out_axes[2])
        native = self.native_kept
        if native is None or native[0] is not epilogue:
            made = (native_epilogue(epilogue, rows, copy, arrays[self.n_in], self.geometry.as_nchw)
                    if epilogue is not None else NativeEpilogue(None, []))  # none: its own output, whichever
            if (tail is None and copy is not None and isinstance(made, NativeEpilogue)
                    and self.op.results[0].has_one_use()):
                made.out, made.copy = made.copy, None  # the pad is the only reader: its interior only
            native = self.native_kept = (epilogue, made)
        epilogue = native[1]
        if isinstance(epilogue, NativeEpilogue):
            kept_arrays = self.native_arrays
            if epilogue.call is not None and kept_arrays is not None and kept_arrays[0] == split_threads() \
                    and all(a is b for a, b in zip(arrays, kept_arrays[1])):
                epilogue.call()  # the same arrays as the native kernel's last run: its same call
                return
            epilogue.call = self.native_arrays = None
        if not self.runner(arrays[:self.n_in], arrays[self.n_in], self.accumulate, epilogue):
            # A kernel the runner does not take (not float, ...): whole, then the tail.
            self.run(arrays)
            if epilogue:
                epilogue(0, self.rows)
        elif (isinstance(epilogue, NativeEpilogue) and epilogue.call is not None and self.reuse_views[0]
              and self.constant_weight):  # (the call holds the weight as the kernel laid it out)
            self.native_arrays = (split_threads(), list(arrays))  # a planned program: the same arrays every run


def give_tail(steps: list, accesses: dict, memory, c: int, t: int) -> bool:
    """Give the fused tail at step `t` to the convolution at step `c` as its epilogue (row block by row
    block); the convolution moves to step `t`. False (nothing changed) when the tail does not read the
    result row for row, writes a buffer the convolution reads, or a member is not one ufunc
    (`RowTail.of`)."""
    conv, step = steps[c], steps[t]
    if not _reads_result_row_for_row(step, conv):
        return False
    conv_access, tail_access = accesses[c], accesses[t]
    buffer = lambda s: memory.storage.get(s, ("slot", s))  # noqa: E731
    written = {buffer(s) for s in conv_access.writes | conv_access.binds}  # its out, which it also reads
    read = {buffer(s) for s in conv_access.reads} - written
    if any(buffer(s) in read for s in tail_access.writes):
        return False
    tail = RowTail.of(step, conv.geometry.out_axes[2])
    if tail is None:
        return False
    conv.tail = tail
    steps[t], steps[c] = conv, _no_op
    tail_access.merge(accesses.pop(c))
    return True


def give_pad(steps: list, accesses: dict, memory, slot: Callable[[SSAValue], int], c: int, p: int) -> bool:
    """Give the pad at step `p` of the result of the convolution at step `c` (of its tail's, if it has
    one) to the convolution, which then writes its rows into the pad's interior; False if it does not
    pad that result by a constant or the convolution is grouped."""
    conv, pad = steps[c], steps[p]
    result = conv.tail.result if conv.tail is not None else conv.op.results[0]
    if not (isinstance(pad, PadStep) and conv.geometry.group_axes is None and pad.constant_fill and pad.permutation is None and p in accesses
            and pad.source == slot(result) and pad.source_shape == tuple(result.type.get_shape())):
        return False
    conv.pad = pad
    conv.pad_only_reader = conv.tail is not None and result.has_one_use()
    steps[p] = _no_op
    accesses[c].merge(accesses.pop(p))
    memory.buffers[pad.k].step = c  # the padded buffer is now allocated and written here
    return True


class TailIntoPad:
    """A fused elementwise tail (not after a convolution) whose result only the pad after it reads,
    with that pad: the tail's last member writes into the pad's interior, which is then its result,
    so the pad copies nothing (one pass over the activation less)."""

    def __init__(self, tail: FusedTail, rows: RowTail, pad: PadStep):
        self.tail, self.row_tail, self.pad = tail, rows, pad
        self.members = tail.members  # benchmarks/split_profile.py and the like read a tail's members
        self.kept: tuple | None = None
        """(the pad's buffer, its interior view, the rows with their copy or None) of the last run."""
        self.copies = False
        """Whether the tail's result is also read elsewhere: the tail writes it as it is and each part
        copies its rows into the pad's interior, while they are in cache."""

    def rows(self, env: list) -> Callable[[int, int], None]:
        """Bind the pad's buffer (its border filled) and the tail for this run: `rows(r0, r1)` writes
        rows [r0, r1) of the tail's result into the pad's interior."""
        rows, _, _, self.kept = _into_pad(self.pad, env, self.kept, self.row_tail, not self.copies,
                                          self.row_tail.loop)
        return rows

    def __call__(self, env: list) -> None:
        run_parts(self.rows(env), self.tail.rows, split_parts(self.tail.split))


def tail_into_pad(steps: list, accesses: dict, memory, slot: Callable[[SSAValue], int], t: int, p: int) -> bool:
    """Make the fused tail at step `t` and the pad at step `p` of its result one `TailIntoPad` at `t`;
    False (nothing changed) when the pad does not pad the tail's result by a constant or the tail
    cannot run by rows."""
    tail, pad = steps[t], steps[p]
    if not (isinstance(pad, PadStep) and pad.constant_fill and pad.permutation is None and p in accesses):
        return False
    result = tail.members[-1][0].op.results[0]
    if pad.source != slot(result) or pad.source_shape != tuple(result.type.get_shape()):
        return False
    first = tail.members[0][0]
    rows = RowTail.of(tail, first.out_axis)  # rows along the output axis the tail's loop is
    if rows is None or (not result.has_one_use() and rows.loop != first.out_axis):  # copies along the loop's axis
        return False
    fused_step = TailIntoPad(tail, rows, pad)
    fused_step.copies = not result.has_one_use()
    steps[t], steps[p] = fused_step, _no_op
    accesses[t].merge(accesses.pop(p))
    memory.buffers[pad.k].step = t  # the padded buffer is now allocated and written here
    return True


def _no_op(env: list) -> None:
    pass


def _into_pad(pad: PadStep, env: list, kept: tuple | None, tail: RowTail | None, only_reader: bool, axis: int):
    """(epilogue, the tail's rows, where the epilogue also stores or None, the new `kept`) for rows of
    a result (the tail's, or with no tail the convolution's) that go into `pad`'s interior: with
    `only_reader` the tail's last member writes there, else each block of rows is copied there along
    `axis`. `kept` is (the pad's buffer, its interior view, (rows, result, their copy) or None) of
    the last run, kept while the arrays are the same objects (as a planned program's are)."""
    padded = pad.buffer(env)
    if kept is None or kept[0] is not padded:
        kept = (padded, padded[pad.interior], None)
    interior = kept[1]
    if tail is not None and only_reader:
        rows = tail.bind(env, interior)
        return rows, rows, None, kept
    rows, result = tail and tail.bind(env), env[pad.source]
    if kept[2] is None or kept[2][0] is not rows or kept[2][1] is not result:
        kept = (padded, interior, (rows, result, _rows_and_copy(rows, result, interior, axis)))
    return kept[2][2], rows, interior, kept


def _rows_and_copy(rows: Callable[[int, int], None] | None, result: np.ndarray, interior: np.ndarray,
                   axis: int) -> Callable[[int, int], None]:
    """`rows(r0, r1)` (if not None), then rows [r0, r1) (along `axis`) of `result` copied into `interior`."""
    before = (slice(None),) * axis

    def rows_and_copy(r0: int, r1: int) -> None:
        if rows is not None:
            rows(r0, r1)
        index = before + (slice(r0, r1),)
        interior[index] = result[index]

    return rows_and_copy


def _reads_result_row_for_row(tail: FusedTail, conv: ConvStep) -> bool:
    """Whether the tail's first member reads the convolution's result through its own output's map,
    as an operand of the output's type (so its loop rows are the convolution's output rows)."""
    member = tail.members[0][0].op
    result = conv.op.results[0]
    maps = member.get_indexing_maps().data
    out_map, out_type = maps[len(member.inputs)], member.outputs[0].type
    return any(value is result and value.type == out_type and maps[i] == out_map
               for i, value in enumerate(member.inputs))


def native_epilogue(epilogue: Callable[[int, int], None], rows: Callable | None, copy: np.ndarray | None,
                    out: np.ndarray, as_nchw: Callable[[np.ndarray], np.ndarray | None]):
    """`epilogue` (which runs `rows`, a `RowTail`'s, if not None, then copies the rows into `copy` if
    not None) as a `NativeEpilogue` for the native convolution kernels (`runtime/native/conv_kernels.py`),
    whose values are the convolution's `out`; `epilogue` itself when it is not one the kernels can
    apply: a chain of ufunc calls from `out` (`window_kernels.chain_ops`) ending in a view of its shape."""
    calls = getattr(rows, "calls", None) if rows is not None else []
    if calls is None:
        return epilogue
    parsed = chain_ops([(ufunc, [a for a, _ in args], written) for ufunc, args, written in calls], out)
    if parsed is None or parsed[2].shape != out.shape:
        return epilogue
    ops = []
    for ufunc, other, reversed, save in parsed[1]:
        if isinstance(other, np.ndarray):
            if other.dtype != np.float32 or other.ndim != out.ndim:
                return epilogue
            other = as_nchw(np.broadcast_to(other, out.shape))
            if other is None:
                return epilogue
            other = other.transpose(0, 2, 3, 1)
        ops.append(EpilogueOp(ufunc, other, reversed, save))
    final, copied = as_nchw(parsed[2]), as_nchw(copy) if copy is not None else None
    if final is None or (copy is not None and copied is None):
        return epilogue
    return NativeEpilogue(epilogue, ops, final, copied)
