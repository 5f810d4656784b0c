"""Evaluating one linalg structured op (named or generic) over whole numpy arrays.

`compile_structured(op)` reads the op's maps, iterator types and body once and returns a function
of the operand arrays: operands become strided loop-space views (`affine_views.LoopView`; non-linear
maps gather), an elementwise body runs as numpy calls into the output (`elementwise_programs` for a
copy or a chain of ufuncs), a reduction `combine(x, acc)` folds with one `ufunc.reduce` (pooling
windows separably: `window_reduce`), other reductions point by point (`reduction_programs`), and
`acc + a * b` is a contraction: a convolution (`linalg_conv`), a planned batched matmul
(`contraction_plan`), or else a reduction of the product over the loop space."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, memref, tensor
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr

from xrelay.dialects.structured import captured_values
from xrelay.runtime.kernels.body_program import BodyProgram, depends_on, reduction_combine
from xrelay.runtime.kernels.affine_views import (
    ExecutionError,
    LoopView,
    gather_view,
    linear_form,
    unit_axes,
    used_loops,
)
from xrelay.runtime.kernels.contraction_plan import planned_contraction
from xrelay.runtime.kernels.window_reduce import IDENTITIES, window_program
from xrelay.runtime.kernels.linalg_conv import conv_geometry
from xrelay.runtime.kernels.elementwise_programs import copy_into, ufunc_program
from xrelay.runtime.kernels.reduction_programs import reduce_into, sequential_reduction

Structured = LinalgStructuredOperation



# ---------------------------------------------------------------- structured ops


def contraction_pair(op: Structured, k: int) -> tuple[int, int] | None:
    """(i, j) when output k of `op` is a contraction `acc + in_i * in_j` over linear maps, else None."""
    if not any(str(it.data) == "reduction" for it in op.get_iterator_types()):
        return None
    combine = reduction_combine(op, k)
    product = combine[1].owner if combine is not None and combine[0] is np.add else None
    if not isinstance(product, arith.MulfOp | arith.MuliOp):
        return None
    a, b = product.operands
    inputs = list(op.body.block.args[:len(op.inputs)])
    if a is b or a not in inputs or b not in inputs:
        return None
    maps = op.get_indexing_maps().data
    i, j = inputs.index(a), inputs.index(b)
    if not all(linear_form(e) is not None for m in (maps[i], maps[j]) for e in m.data.results):
        return None
    return i, j


def is_constant(value: SSAValue) -> bool:
    """Whether `value` is a dense constant or a global, or a reshape of one (a depthwise weight
    expanded to the grouped form): the same unchanging array on every run."""
    while isinstance(value.owner, tensor.ExpandShapeOp | tensor.CollapseShapeOp | memref.ExpandShapeOp
                     | memref.CollapseShapeOp):
        value = value.owner.operands[0]
    owner = value.owner
    return isinstance(owner, memref.GetGlobalOp) or (
        isinstance(owner, arith.ConstantOp) and isinstance(owner.value, DenseIntOrFPElementsAttr))


def compile_structured(op: Structured, zero_init: Sequence[bool] = (),
                       constant_inputs: Sequence[bool] = (),
                       loop_ranges: Sequence[int] | None = None,
                       reuse_views: list[bool] | None = None, algorithm: str | None = None,
                       parts: int | None = None, split_axis: int | None = None) -> Callable[[list[np.ndarray]], None]:
    """A function that runs `op` given its operand arrays followed by the values its body captures
    (`captured_values`), writing into the output arrays. `zero_init[k]`: output k may be overwritten
    instead of accumulated into (its fill was dropped); `constant_inputs[i]`: input i is the same array
    on every run (derived forms made once); `loop_ranges`: trip counts known otherwise (a raised loop
    nest); while `reuse_views[0]` (a planned program), views made for the same arrays are reused.
    A convolution runs by `ConvGeometry.runner` given its kernel's `algorithm` (None: as the op is;
    "generic": not as a convolution), `parts` and `split_axis`; with one output, `run.conv` is
    (its geometry, that runner)."""
    maps = [m.data for m in op.get_indexing_maps()]
    try:
        ranges = tuple(op.get_static_loop_ranges() if loop_ranges is None else loop_ranges)
    except NotImplementedError as e:
        raise ExecutionError(f"{op.name}: {e}") from None
    iterators = [str(it.data) for it in op.get_iterator_types()]
    reduction_axes = tuple(i for i, it in enumerate(iterators) if it == "reduction")
    n_in = len(op.inputs)
    block = op.body.block
    in_args, out_args = block.args[:n_in], block.args[n_in:]
    yields = block.last_op
    assert isinstance(yields, linalg.YieldOp)
    yielded = list(yields.operands)
    out_maps = maps[n_in:]

    pooled = window_program(op, maps, ranges, reduction_axes, zero_init)
    views = [LoopView(m, ranges) for m in maps]
    # Per output: ("keep",), ("assign", target index) or ("reduce", ufunc, target index, a contraction's
    # runner or None).
    plans = []
    conv = None  # (geometry, runner) of a convolution
    targets: list[SSAValue] = []
    for out_index, value in enumerate(yielded):
        used = used_loops(out_maps[out_index])
        if not reduction_axes and value is out_args[out_index]:
            plans.append(("keep",))
            continue
        if not reduction_axes:
            if len(used) != len(ranges):
                raise ExecutionError(f"{op.name}: a parallel loop is missing from an output map")
            if depends_on(value, set(out_args) - {out_args[out_index]}):
                raise ExecutionError(f"{op.name}: body reads another output")
            plans.append(("assign", len(targets)))
            targets.append(value)
            continue
        combine = reduction_combine(op, out_index)
        if combine is None:
            return sequential_reduction(op, maps, ranges, reduction_axes)
        ufunc, x = combine
        contraction, fast = contraction_pair(op, out_index), None
        if contraction is not None:
            geometry = algorithm != "generic" and conv_geometry(maps, ranges, *contraction, n_in + out_index)
            fast = planned_contraction(maps, ranges, *contraction, n_in + out_index, reuse_views or [False],
                                       unit_axes(op.outputs[out_index].type))
            if geometry:  # the native kernel, else as a planned im2col
                conv = (geometry, geometry.runner(ranges, constant_inputs, algorithm, parts, split_axis))
                fast = _either(conv[1], fast)
        plans.append(("reduce", ufunc, len(targets), fast))  # (a contraction's runner, else the product summed)
        targets.append(x)

    body = BodyProgram(block, targets, ranges) if targets else None
    needs_inputs = body is not None
    captured = captured_values(op)
    n_operands = len(op.operands)
    single_assign = len(plans) == 1 and plans[0][0] == "assign"
    if single_assign and not reduction_axes:
        ufuncs = ufunc_program(body, yielded[0], list(in_args), list(out_args), captured, views, n_in, n_operands,
                               reuse_views or [False])
        if ufuncs is not None:
            return ufuncs

    # One contraction with a fast runner (a conv, a grouped 1x1 conv, a depthwise conv): tried first,
    # before any view of the output is made for the general path.
    fast_only = plans[0][3] if len(plans) == 1 and plans[0][0] == "reduce" else None
    fast_accumulate = not (zero_init and zero_init[0])

    def run(arrays: list) -> None:
        ins, outs = arrays[:n_in], arrays[n_in:n_operands]
        if fast_only is not None and fast_only(ins, outs[0], fast_accumulate):
            return
        env: dict[SSAValue, object] = dict(zip(captured, arrays[n_operands:]))
        out_views = [view(o, writeable=True) if view.linear else None for o, view in zip(outs, views[n_in:], strict=True)]
        if needs_inputs:
            for arg, array, view in zip(in_args, ins, views[:n_in], strict=True):
                if isinstance(array, np.ndarray):
                    env[arg] = view(array) if view.linear else gather_view(array, view.amap, ranges)
                else:
                    env[arg] = array
            for arg, out_view in zip(out_args, out_views, strict=True):
                env[arg] = out_view
        if body is None:
            values = []
        elif single_assign:
            values = body(env, out=out_views[0])
        else:
            values = body(env)
        for k, plan in enumerate(plans):
            if plan[0] == "keep":
                continue
            out_view = out_views[k]
            if out_view is None:
                raise ExecutionError(f"{op.name}: output indexing maps must be linear")
            if plan[0] == "assign":
                if values is not None:
                    copy_into(out_view, values[plan[1]])
            else:
                overwrite = k < len(zero_init) and zero_init[k]  # (its identity's fill dropped: written whole)
                if plan[3] is not fast_only and plan[3](ins, outs[k], not overwrite):
                    continue  # (a contraction's runner; the one output's ran first)
                reduce_into(plan[1], np.broadcast_to(values[plan[2]], ranges), reduction_axes, out_view, overwrite)

    run.fast_only = fast_only  # (a planned contraction: its step keeps the matmul, runtime/executor/bound_steps.py)
    run.conv = conv if fast_only is not None else None  # (its ConvStep, runtime/kernels/conv_epilogue.py)
    if pooled is None:
        return run

    def first_or_run(arrays: list) -> None:  # a pooling: the general path only when it cannot run
        pooled(arrays) or run(arrays)

    first_or_run.native_call = getattr(pooled, "native_call", None)  # (plan.FusedTail: one compiled call)
    return first_or_run


def _either(first: Callable, then: Callable) -> Callable:
    """`run(ins, out, accumulate)` calling `then` (unless None) when `first` returns False."""
    return first if then is None else lambda ins, out, accumulate: first(ins, out, accumulate) or then(ins, out, accumulate)


def overwritten_identity(op: Structured, k: int) -> float | None:
    """The identity of output k's reduction when `compile_structured` writes that output whole once a
    fill of that identity before it is dropped (`zero_init[k]`): a window reduction `window_program`
    runs (a pooling), or a plain reduction (the inputs' maps one loop per axis, every element of the
    output reached) run as one `ufunc.reduce`; the op has one output, a reducer of it and a value not
    read from it, no contraction. None for any other op or output."""
    reduction = [i for i, it in enumerate(op.get_iterator_types()) if str(it.data) == "reduction"]
    combine = reduction_combine(op, k) if reduction and len(op.outputs) == 1 else None
    if combine is None or combine[0] not in IDENTITIES or contraction_pair(op, k) is not None:
        return None  # (several outputs may read each other: argmax's)
    maps = [m.data for m in op.get_indexing_maps()]
    try:
        ranges = op.get_static_loop_ranges()
    except NotImplementedError:
        return None
    if window_program(op, maps, ranges, reduction, [True]) is None:  # else a pooling: it writes its output
        out_map, out_shape = maps[len(op.inputs) + k], op.outputs[k].type.get_shape()
        dims = [e.position for e in out_map.results if isinstance(e, AffineDimExpr)]
        if not all(isinstance(e, AffineDimExpr) for m in maps[:len(op.inputs)] for e in m.results) \
                or len(set(dims)) != len(dims) or not all(isinstance(e, AffineDimExpr) or size == 1
                                                          for e, size in zip(out_map.results, out_shape, strict=True)):
            return None  # (an element the reduction does not reach keeps its fill)
    return IDENTITIES[combine[0]]
