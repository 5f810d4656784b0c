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


def ufunc_program(body: BodyProgram | None, value: SSAValue, in_args: list, out_args: list, captured: list,
                  views: list, n_in: int, n_operands: int, reuse_views: list[bool]) -> Callable[[list], None] | None:
    """For an elementwise op with one output whose body yields an input as it is (one `np.copyto`) or
    is a chain of ufuncs, the first over block arguments, captured values and body constants, each
    later one over the one before it (used only there) and constants (a bias-add, a ReLU, a sigmoid,
    a softmax's `exp(x - max)`): a function of the operand arrays that makes their loop-space views
    and calls the ufuncs into the output view, nothing else (no environment of SSA values, as
    `compile_structured`'s general path has). Every link but the last writes the output's type (the
    next reads it there), so an input the output was planned over is read only by the first call.
    While `reuse_views[0]`, the views made for the last call's arrays are reused for the same arrays.
    None for any other body."""
    if not all(v.linear for v in views):
        return None
    operands_of = ({arg: i for i, arg in enumerate(in_args)} | {arg: n_in + i for i, arg in enumerate(out_args)}
                   | {arg: n_operands + i for i, arg in enumerate(captured)})
    constants, links, previous = {}, [], None
    for result, fn, operands in body.steps if body is not None else ():
        if isinstance(result.owner, arith.ConstantOp) and not operands:
            constants[result] = fn()
            continue
        if getattr(fn, "nout", None) != 1 or previous is not None and (
                not previous.has_one_use() or previous.type != out_args[0].type or list(operands).count(previous) != 1):
            return None
        args = []
        for v in operands:
            if v in constants:
                args.append(("constant", constants[v]))
            elif previous is not None and v is previous:
                args.append(("previous", None))
            elif previous is None and v in operands_of:
                args.append(("operand", operands_of[v]))
            else:
                return None
        links.append((fn, args))
        previous = result
    if links and previous is not value or not links and value not in in_args:
        return None
    last: list = [None]  # (the arrays, the calls) of the last call

    def calls_for(arrays: list) -> list:
        entry = last[0]
        if entry is not None and len(entry[0]) == len(arrays) and all(x is y for x, y in zip(entry[0], arrays)):
            return entry[1]
        out = views[n_in](arrays[n_in], writeable=True)

        def array(i):
            return views[i](arrays[i]) if i < n_operands and isinstance(arrays[i], np.ndarray) else arrays[i]

        if not links:
            calls = [(None, (out, array(operands_of[value])), out)]
        else:
            calls = [(fn, [out if kind == "previous" else array(x) if kind == "operand" else x for kind, x in args],
                      out) for fn, args in links]
        if reuse_views[0]:
            last[0] = (tuple(arrays), calls)
        return calls

    def run(arrays: list) -> None:
        for fn, args, out in calls_for(arrays):
            if fn is None:
                np.copyto(args[0], args[1], casting="unsafe")
            else:
                fn(*args, out=out, casting="unsafe")

    if len(links) == 1:  # (ufunc, loop-space argument views, output view): conv_epilogue slices these
        run.ufunc_call = lambda arrays: calls_for(arrays)[0]
    run.ufunc_chain, run.direct_copy = len(links) > 1, not links  # (tests: the path is taken)
    return run
