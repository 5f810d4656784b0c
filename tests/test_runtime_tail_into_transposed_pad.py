"""A fused tail whose result a pad copies through a transpose (ResNet's channels-first input shift,
then the layout's transpose and the stem's pad) writes into the pad's interior through the inverse
permutation (runtime/kernels/conv_epilogue.py `_fuse_tails_into_transposed_pads`), and an elementwise op over
a channels-first image of 3 channels is cut along its rows, not its channels (runtime/executor/plan.py
`split_loop`). Checked against numpy written here, on 1 and 2 threads and in two processes."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.runtime.parallel import spmd
from xrelay.runtime.executor import plan as split_plan
from xrelay.runtime.kernels.conv_epilogue import TailIntoPad
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.executor.pad_step import PadStep
from xrelay.runtime.executor.plan import FusedTail

RNG = np.random.default_rng(41)


def source(c: int, h: int, w: int, low, high, shift_returned: bool = False) -> str:
    """x (1, c, h, w) + a per-channel constant -> transpose to (1, h, w, c) -> pad with -0.5 (and the
    shifted x, with `shift_returned`)."""
    x, t = f"tensor<1x{c}x{h}x{w}xf32>", f"tensor<1x{h}x{w}x{c}xf32>"
    padded = [n + lo + hi for n, lo, hi in zip((1, h, w, c), low, high)]
    p = f"tensor<{'x'.join(map(str, padded))}xf32>"
    shift = ", ".join(f"[[{v!r}]]" for v in (np.arange(c, dtype=np.float32) * 0.25 - 0.5).tolist())
    return f"""
func.func @main(%x: {x}) -> ({p}{f", {x}" if shift_returned else ""}) {{
  %shift = arith.constant dense<[{shift}]> : tensor<{c}x1x1xf32>
  %e0 = tensor.empty() : {x}
  %s = linalg.generic {{indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (b, 0, 0)>,
      affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
      ins(%x, %shift : {x}, tensor<{c}x1x1xf32>) outs(%e0 : {x}) {{
  ^bb0(%v: f32, %k: f32, %o: f32):
    %m = arith.addf %v, %k : f32
    linalg.yield %m : f32
  }} -> {x}
  %e1 = tensor.empty() : {t}
  %t = linalg.transpose ins(%s : {x}) outs(%e1 : {t}) permutation = [0, 2, 3, 1]
  %p = tensor.pad %t low[{", ".join(map(str, low))}] high[{", ".join(map(str, high))}] {{
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    %c = arith.constant -0.5 : f32
    tensor.yield %c : f32
  }} : {t} to {p}
  func.return %p{", %s" if shift_returned else ""} : {p}{f", {x}" if shift_returned else ""}
}}
"""


def expected(x: np.ndarray, low, high) -> np.ndarray:
    c = x.shape[1]
    shift = (np.arange(c, dtype=np.float32) * 0.25 - 0.5).reshape(c, 1, 1)
    return np.pad((x + shift).transpose(0, 2, 3, 1), list(zip(low, high)), constant_values=-0.5)


CASES = [  # (c, h, w, low, high)
    (3, 12, 9, (0, 3, 3, 0), (0, 3, 3, 0)),   # ResNet's stem pad, small
    (3, 7, 5, (0, 1, 2, 0), (0, 2, 1, 0)),    # uneven
    (2, 5, 6, (0, 0, 1, 1), (0, 1, 0, 1)),    # 2 channels, the channels padded too
    (16, 6, 4, (0, 1, 1, 0), (0, 1, 1, 0)),   # enough channels to be the rows
]


def fused(program) -> list[TailIntoPad]:
    return [step for step in program.steps if isinstance(step, TailIntoPad) and step.through is not None]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c, h, w, low, high", CASES)
def test_tail_writes_into_the_transposed_pad(threads, c, h, w, low, high, blas_workers, monkeypatch):
    monkeypatch.setattr(split_plan, "MIN_SPLIT_ELEMENTS", 0)  # 2 threads: a part per thread
    program = LinalgProgram(Parser(make_context(), source(c, h, w, low, high)).parse_module())
    assert len(fused(program)) == 1
    assert not any(isinstance(step, PadStep | FusedTail) for step in program.steps)
    blas_workers(threads)
    for _ in range(3):
        x = RNG.standard_normal((1, c, h, w)).astype(np.float32)
        np.testing.assert_allclose(program(x)[0], expected(x, low, high), rtol=1e-6, atol=1e-6)


def test_a_shift_also_returned_is_copied_through_the_transpose():
    """The tail's result read elsewhere too: it is written as it is, and the pad copies it."""
    c, h, w, low, high = CASES[0]
    program = LinalgProgram(Parser(make_context(), source(c, h, w, low, high, True)).parse_module())
    assert not fused(program)
    assert any(isinstance(step, PadStep) and step.folded_transpose for step in program.steps)
    x = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    padded, shifted = program(x)
    np.testing.assert_allclose(padded, expected(x, low, high), rtol=1e-6, atol=1e-6)
    shift = (np.arange(c, dtype=np.float32) * 0.25 - 0.5).reshape(c, 1, 1)
    np.testing.assert_allclose(shifted, x + shift, rtol=1e-6, atol=1e-6)


BIG = (3, 160, 140, (0, 3, 3, 0), (0, 3, 3, 0))  # 67200 points: big enough to split (LONG_SPLIT_LOOP_MIN_POINTS)


def test_a_few_channels_first_are_not_the_rows():
    """The shift's loop: its rows (2) rather than its 3 channels (1), which are too few for two parts."""
    c, h, w, low, high = BIG
    program = LinalgProgram(Parser(make_context(), source(c, h, w, low, high)).parse_module())
    (step,) = fused(program)
    assert step.tail.members[0][0].loop == 2
    x = RNG.standard_normal((1, c, h, w)).astype(np.float32)
    np.testing.assert_allclose(program(x)[0], expected(x, low, high), rtol=1e-6, atol=1e-6)
    (step,) = fused(LinalgProgram(Parser(make_context(), source(16, 64, 64, low, high)).parse_module()))
    assert step.tail.members[0][0].loop == 1  # 16 channels: enough rows
    (step,) = fused(LinalgProgram(Parser(make_context(), source(*CASES[0])).parse_module()))
    assert step.tail.members[0][0].loop == 1  # too small to split at all: the first loop


@pytest.mark.skipif(spmd.why_not_platform() is not None, reason="no two-process mode here")
def test_tail_into_the_transposed_pad_in_two_processes(blas_workers, monkeypatch):
    monkeypatch.setattr(spmd, "CHECK_BINDINGS", True)
    for name in ("MIN_SPLIT_ELEMENTS", "PROCESSES_MIN_SPLIT_ELEMENTS"):
        monkeypatch.setattr(split_plan, name, 0)
    blas_workers(2)
    c, h, w, low, high = BIG
    program = LinalgProgram(Parser(make_context(), source(c, h, w, low, high)).parse_module())
    program.threading = "processes"
    try:
        (step,) = fused(program)
        for _ in range(4):  # the first call forks
            x = RNG.standard_normal((1, c, h, w)).astype(np.float32)
            np.testing.assert_allclose(program(x)[0], expected(x, low, high), rtol=1e-6, atol=1e-6)
        assert program.steps.index(step) in program._processes.spmd_steps
    finally:
        program.close()
