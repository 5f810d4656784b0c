"""A convolution step (and a tail written into a pad) keeps the epilogue it made for the last run while
its arrays are the same objects (runtime/kernels/conv_epilogue.py `ConvStep.kept`): a planned program's
later runs reuse it and still compute numpy's answer written here for new inputs, on 1 and 2
threads and in two processes; arrays that change (a pad buffer, a tail's operand) make a new one."""

from __future__ import annotations

import numpy as np
from module_builder import formed
import pytest
from xdsl.parser import Parser

from tests.test_runtime_conv_epilogue import expected_outputs, source
from tests.test_runtime_tail_into_pad import source as tail_into_pad_source
from xrelay.dialects import make_context
from xrelay.runtime.kernels.conv_epilogue import ConvStep, TailIntoPad
from xrelay.runtime.executor.linalg_exec import LinalgProgram


def conv_program(relu_also_returned: bool, winograd: bool, plan: bool = True):
    rng = np.random.default_rng(8)
    h, c, f = 12, 8, 8
    w = rng.standard_normal((3, 3, c, f)).astype(np.float32)
    bias = rng.standard_normal((1, 1, 1, f)).astype(np.float32)
    text = source(h, c, f, w if winograd else None, bias, relu_also_returned)
    program = LinalgProgram(formed(Parser(make_context(), text).parse_module(), placed=plan))
    (step,) = [s for s in program.steps if isinstance(s, ConvStep)]
    assert step.tail is not None and step.pad is not None and step.pad_only_reader is not relu_also_returned

    def inputs(seed: int):
        r = np.random.default_rng(seed)
        x, res = (r.standard_normal((1, h, h, n)).astype(np.float32) for n in (c, f))
        return (x, res) if winograd else (x, res, w)

    def expected(args):
        return expected_outputs(args[0], args[1], w, bias)[:2 if relu_also_returned else 1]

    return program, step, inputs, expected


def run_three_times(program, step, inputs, expected) -> list:
    """`step.kept` and its tail's after each of three calls with new values in the same argument
    arrays (a tail reading an argument reads the same array each run), each answer checked."""
    kept, args = [], None
    for seed in range(3):
        new = inputs(seed)
        if args is None:
            args = new
        for array, values in zip(args, new):
            array[...] = values
        for got, want in zip(program(*args), expected(args), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        kept.append((step.kept, step.tail.kept))
    return kept


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("relu_also_returned", [False, True])
@pytest.mark.parametrize("winograd", [True, False])
def test_conv_step_reuses_its_epilogue_for_new_inputs(threads, relu_also_returned, winograd, blas_workers):
    program, step, inputs, expected = conv_program(relu_also_returned, winograd)
    blas_workers(threads)
    kept = run_three_times(program, step, inputs, expected)
    # The planned buffers are the same on every run: the same interior view and epilogue each time.
    assert kept[0][0] is not None and kept[1][0] is kept[0][0] and kept[2][0] is kept[0][0]
    assert kept[0][1] is not None and all(k[1][2] is kept[0][1][2] for k in kept)  # the tail's rows
    if relu_also_returned:
        assert kept[0][0][2][0] is kept[0][1][2]  # with the pad's copy
    else:
        assert kept[0][1][1] is kept[0][0][1]  # the tail's last member writes into the interior


def test_conv_step_makes_a_new_epilogue_for_new_arrays(blas_workers):
    """New argument arrays, and unplanned buffers (new arrays every run): every run makes its
    epilogue anew, and writes where this run's buffers are."""
    for plan in (True, False):
        program, step, inputs, expected = conv_program(relu_also_returned=True, winograd=True, plan=plan)
        blas_workers(1)
        kept = []
        for seed in range(3):
            args = inputs(seed)
            for got, want in zip(program(*args), expected(args), strict=True):
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
            kept.append((step.kept, step.tail.kept))
        assert kept[0][1][2] is not kept[1][1][2] and kept[1][1][2] is not kept[2][1][2]  # the tail reads %r
        assert (kept[0][0][0] is kept[1][0][0]) is plan  # the pad's buffer


def test_tail_into_pad_reuses_its_views_for_new_inputs(blas_workers):
    shape, low, high = (1, 9, 7, 16), (0, 1, 2, 0), (0, 1, 1, 0)
    program = LinalgProgram(formed(Parser(make_context(), tail_into_pad_source(shape, 3, low, high, False)).parse_module()))
    (step,) = [s for s in program.steps if isinstance(s, TailIntoPad)]
    blas_workers(1)
    rng = np.random.default_rng(5)
    x, b = np.empty(shape, np.float32), rng.standard_normal((1, 1, 1, 16)).astype(np.float32)
    kept = []
    for _ in range(3):
        x[...] = rng.standard_normal(shape)
        want = np.pad(np.maximum(x.astype(np.float64) + b, 0), list(zip(low, high)), constant_values=0.5)
        np.testing.assert_allclose(program(x, b)[0], want, rtol=1e-6, atol=1e-6)
        kept.append((step.kept, step.row_tail.kept))
    assert kept[0][0] is not None and all(k[0] is kept[0][0] for k in kept)
    assert all(k[1][2] is kept[0][1][2] for k in kept)  # the same rows function: the views made once
    assert kept[0][1][1] is kept[0][0][1]  # writing into the kept interior


