"""Elementwise linalg ops whose body is a copy, one ufunc or a chain of ufuncs, run as those numpy calls
between loop-space views without `linalg_structured.compile_structured`'s general path (no environment of
SSA values); and `copy_into`, the copy those and the general path write outputs with."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects import arith
from xdsl.ir import SSAValue

from xrelay.runtime.kernels.body_program import BodyProgram


SHORT_AXIS = 16
"""A copy whose output's innermost axis is at most this long runs one copy per index of it
(`copy_into`) when the source has a longer contiguous axis."""


def copy_into(out: np.ndarray, value) -> None:
    """`np.copyto(out, value)`. numpy's copy loop runs along the output's innermost axis: when that
    axis is short and the source is contiguous along another, longer one (a channel shuffle in NHWC
    swaps (g, C/g) into (C/g, g): 4-element loops), one copy per index of the short axis runs along
    the source's contiguous axis instead."""
    if (isinstance(value, np.ndarray) and value.shape == out.shape and 1 < out.shape[-1] <= SHORT_AXIS
            and value.strides[-1] != value.itemsize
            and any(s == value.itemsize and n > SHORT_AXIS for s, n in zip(value.strides, value.shape))):
        for j in range(out.shape[-1]):
            np.copyto(out[..., j], value[..., j], casting="unsafe")
        return
    np.copyto(out, value, casting="unsafe")


def _one_ufunc_program(body: BodyProgram, in_args: list, out_args: list, captured: list, views: list,
                       n_in: int, n_operands: int, reuse_views: list[bool]) -> Callable[[list], None] | None:
    """For an elementwise op with one output whose body is one ufunc over block arguments, body
    constants and captured values (a bias-add, a ReLU, a residual add): a function of the operand
    arrays that makes their loop-space views and calls the ufunc into the output view, and nothing
    else (no environment of SSA values, as `compile_structured`'s general path has). While
    `reuse_views[0]`, the views made for the last call's arrays are kept and reused when the next call
    passes the same arrays (a planned program's buffers). None for any other body."""
    if not body.steps or not isinstance(body.steps[-1][1], np.ufunc) or not all(v.linear for v in views):
        return None
    constants = {}
    for result, fn, _ in body.steps[:-1]:
        if not isinstance(result.owner, arith.ConstantOp):
            return None
        constants[result] = fn()
    _, ufunc, operands = body.steps[-1]
    sources: list[tuple[str, int, object]] = []  # (kind, operand index, constant)
    for value in operands:
        if value in constants:
            sources.append(("constant", -1, constants[value]))
        elif value in in_args:
            sources.append(("operand", in_args.index(value), None))
        elif value in out_args:
            sources.append(("operand", n_in + out_args.index(value), None))
        elif value in captured:
            sources.append(("captured", n_operands + captured.index(value), None))
        else:
            return None
    out_view = views[n_in]

    last: list = [None]  # (the arrays, the ufunc's arguments, its output view) of the last call

    def call(arrays: list) -> tuple[np.ufunc, list, np.ndarray]:
        entry = last[0]
        if entry is not None and len(entry[0]) == len(arrays) and all(x is y for x, y in zip(entry[0], arrays)):
            return ufunc, entry[1], entry[2]
        args = []
        for kind, i, constant in sources:
            if kind == "constant":
                args.append(constant)
            elif kind == "operand" and isinstance(arrays[i], np.ndarray):
                args.append(views[i](arrays[i]))
            else:
                args.append(arrays[i])
        out = out_view(arrays[n_in], writeable=True)
        if reuse_views[0]:
            last[0] = (tuple(arrays), args, out)
        return ufunc, args, out

    def run(arrays: list) -> None:
        fn, args, out = call(arrays)
        fn(*args, out=out, casting="unsafe")

    run.ufunc_call = call  # (ufunc, loop-space argument views, output view): conv_epilogue slices these
    return run


def _ufunc_chain_program(body: BodyProgram | None, value: SSAValue, in_args: list, out_args: list, views: list,
                         n_in: int, reuse_views: list[bool]) -> Callable[[list], None] | None:
    """For an elementwise op with one output whose body yields an input as it is (one `np.copyto`), or is a chain of one-result ufuncs, the first over block arguments and scalar
    constants, each later one over the one before it (used only there) and scalar constants, every
    link of the output's type (each call writes into the output view, the next
    reads it there): a function of the operand arrays that makes the loop-space views (kept for the
    same arrays while `reuse_views[0]`) and makes those calls, nothing else. None for any other body.
    Later links read no operand array, so an input the output was planned over is read only by the
    first call."""
    if not all(v.linear for v in views):
        return None
    operands_of = {arg: i for i, arg in enumerate(in_args)} | {arg: n_in + i for i, arg in enumerate(out_args)}
    if body is None or not body.steps:
        if value not in in_args:
            return None
        links: list = []
        source = operands_of[value]
    else:
        constants, links, previous = {}, [], None
        for result, fn, operands in body.steps:
            if isinstance(result.owner, arith.ConstantOp) and not operands:
                constants[result] = fn()
                continue
            if not (isinstance(fn, np.ufunc) and fn.nout == 1 and result.type == out_args[0].type):
                return None
            args = []
            for v in operands:
                if v in constants and np.ndim(constants[v]) == 0:
                    args.append(("constant", constants[v]))
                elif previous is not None and v is previous:
                    args.append(("previous", None))
                elif previous is None and v in operands_of:
                    args.append(("operand", operands_of[v]))
                else:
                    return None
            if previous is not None and (not previous.has_one_use()
                                         or sum(kind == "previous" for kind, _ in args) != 1):
                return None
            links.append((fn, args))
            previous = result
        if len(links) < 2 or previous is not value:
            return None  # (one ufunc: `_one_ufunc_program`)
        source = None
    last: list = [None]  # (the arrays, the calls) of the last call

    def calls_for(arrays: list) -> list:
        entry = last[0]
        if entry is not None and len(entry[0]) == len(arrays) and all(x is y for x, y in zip(entry[0], arrays)):
            return entry[1]
        out = views[n_in](arrays[n_in], writeable=True)

        def array(i):
            return views[i](arrays[i]) if isinstance(arrays[i], np.ndarray) else arrays[i]

        if source is not None:
            calls = [(None, (out, array(source)))]
        else:
            calls = [(fn, tuple(out if kind == "previous" else array(x) if kind == "operand" else x
                                for kind, x in args)) for fn, args in links]
        calls = [(fn, call_args, out) for fn, call_args in calls]
        if reuse_views[0]:
            last[0] = (tuple(arrays), calls)
        return calls

    def run(arrays: list) -> None:
        for fn, args, out in calls_for(arrays):
            if fn is None:
                np.copyto(args[0], args[1], casting="unsafe")
            else:
                fn(*args, out=out, casting="unsafe")

    run.ufunc_chain, run.direct_copy = bool(links), source is not None  # (tests: the path is taken)
    return run
