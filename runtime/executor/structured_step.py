"""The linalg executor's step for a linalg structured op (named or generic), run through
`linalg_structured.compile_structured`: the step binds its operands, copies an out unless it is a
fresh buffer nobody else sees, and (inside a kernel) may drop its init's fill, write over an input,
join a fused tail, or be a convolution or planned contraction step."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir.affine import AffineDimExpr

from xrelay.runtime.executor.memory_plan import fresh_single_use, reusable_input
from xrelay.runtime.executor.plan import ChunkedOp
from xrelay.runtime.kernels.conv_epilogue import ConvStep
from xrelay.runtime.kernels.linalg_structured import Structured, captured_values, compile_structured, is_constant

if TYPE_CHECKING:
    from xrelay.runtime.executor.linalg_exec import LinalgProgram


def result_loop(op: Structured, axis: int | None) -> int | None:
    """The loop `op`'s (first) output indexes by `axis` alone, or None."""
    if axis is None:
        return None
    expr = op.get_indexing_maps().data[len(op.inputs)].data.results[axis]
    return expr.position if isinstance(expr, AffineDimExpr) else None


def compile_structured_step(program: LinalgProgram, op: Structured) -> None:
    """Append the step of a linalg structured op to `program` (or add the op to its fused tail)."""
    slot = program._slot
    zero_init = [program._elide_zero_fill(op, k) for k in range(len(op.outputs))]
    constant = [is_constant(v) for v in op.inputs]
    split, axis = program._split(op)
    run = compile_structured(op, zero_init, constant, reuse_views=program._views_cached,
                             algorithm=program._algorithm(), parts=split, split_axis=axis)
    loop = result_loop(op, axis)
    chunked = ChunkedOp.of(op, run, loop)
    if chunked is not None:
        chunked.split = split if chunked.cuttable else 1
    planned = getattr(run, "fast_only", None)
    if hasattr(planned, "split"):  # a planned contraction
        planned.split = split
        planned.cut_along(loop)
    if isinstance(op, linalg.FillOp) and op.results:
        # Kept so a reduction inside a kernel that overwrites the whole buffer can drop this step.
        res, init = slot(op.results[0]), slot(op.outputs[0])
        program.memory.alias(res, init)
        alias = lambda env, r=res, i=init: env.__setitem__(r, env[i])  # noqa: E731
        program.fill_steps[op] = (len(program.steps), alias)
    operands = [slot(v) for v in (*op.operands, *captured_values(op))]
    n_in, n_operands = len(op.inputs), len(op.operands)
    if op.results:
        # Tensor semantics: results are the updated outs; copy an out unless it is
        # a fresh buffer nobody else sees.
        copy = [not fresh_single_use(v) for v in op.outputs]
        results = [slot(r) for r in op.results]
        reuse = reusable_input(op) if program._kernel is not None else None
        if reuse is not None:  # elementwise: write over an input nobody reads afterwards
            copy = [False]
            program.memory.drop(operands[n_in])  # its tensor.empty is never touched
            operands[n_in] = operands[reuse]
        for r, out_slot, c in zip(results, operands[n_in:n_operands], copy):
            if not c:  # the result is the out buffer, updated in place
                program.memory.alias(r, out_slot, written_at=len(program.steps))

        def prepare(env, operands=operands, n_in=n_in, n_operands=n_operands, copy=copy):
            arrays = [env[i] for i in operands]
            if any(copy):
                arrays[n_in:n_operands] = [np.array(a) if c else a
                                           for a, c in zip(arrays[n_in:n_operands], copy)]
            return arrays

        def finish(env, arrays, results=results, n_in=n_in):
            for r, a in zip(results, arrays[n_in:]):
                env[r] = a

        if chunked is not None and not any(copy):
            program._fuse(op, chunked, prepare, finish)
            return

        def step(env, run=run, prepare=prepare, finish=finish):
            arrays = prepare(env)
            run(arrays)
            finish(env, arrays)

        step.planned = planned  # (what it cuts; bound_steps keeps a planned contraction's matmul)
        step.prepare, step.n_in = prepare, n_in

        if getattr(run, "conv", None) is not None and len(op.results) == 1:  # a convolution
            step = ConvStep(op, run, prepare, finish, zero_init, constant, program._views_cached, split, axis)
    else:
        def step(env, run=run, operands=operands):
            run([env[i] for i in operands])
    program._tail = None
    program.steps.append(step)
