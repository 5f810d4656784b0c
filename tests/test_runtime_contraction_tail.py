"""A grouped 1x1 convolution split together with the elementwise tail after it (runtime/kernels/contraction_tail.py,
`contraction_plan.SplitTail`): ShuffleNet's unit end (grouped 1x1 conv, bias-add, residual add, ReLU)
and unit head (grouped 1x1 conv, bias-add, ReLU into the shuffled pad of a depthwise conv) against
numpy written here, on one thread, split over two threads, and in the two-process mode."""

import numpy as np
import pytest
from module_builder import make_module
from test_runtime_shuffle_tail import case, reference as head_reference, unit_head

from xrelay.dialects import nn
from xrelay.lowering import lower
from xrelay.runtime.kernels import conv
from xrelay.runtime.parallel import spmd
from xrelay.runtime.executor import plan as split_plan
from xrelay.runtime.kernels.contraction_plan import ContractionStep, SplitTail
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.executor.plan import FusedTail
from xrelay.runtime.kernels.shuffle_tail import ShuffledTail
from xrelay.runtime.parallel.threads import set_blas_threads

RNG = np.random.default_rng(41)


def unit_end(x_shape, w_hwio, bias, groups):
    """conv2d(groups, 1x1, NHWC) -> bias_add -> + x -> relu."""

    def body(values, emit):
        y = emit(nn.make("nn.conv2d", [values["x"], emit(nn.ConstantOp(w_hwio))], groups=groups,
                         data_layout="NHWC", kernel_layout="HWIO"))
        y = emit(nn.make("nn.bias_add", [y, emit(nn.ConstantOp(bias))], axis=3))
        return [emit(nn.make("nn.relu", [emit(nn.make("nn.add", [y, values["x"]]))]))]

    return make_module({"x": x_shape}, body)


def end_reference(x, w_gcf, bias):
    """The unit end in float64 numpy."""
    n, h, w, _ = x.shape
    g, c, f = w_gcf.shape
    y = np.einsum("nhwgc,gcf->nhwgf", x.reshape(n, h, w, g, c).astype(np.float64), w_gcf).reshape(n, h, w, g * f)
    return np.maximum(y + bias + x, 0)


def end_case(groups, group_channels, h, w, batch=1):
    channels = groups * group_channels
    x = RNG.standard_normal((batch, h, w, channels)).astype(np.float32)
    w_gcf = RNG.standard_normal((groups, group_channels, group_channels)).astype(np.float32)
    hwio = w_gcf.transpose(1, 0, 2).reshape(1, 1, group_channels, channels)
    bias = RNG.standard_normal(channels).astype(np.float32)
    return x, w_gcf, hwio, bias


@pytest.fixture
def split_everything(monkeypatch):
    """Every product and tail splits over two threads (or processes), however small."""
    for name in ("MIN_SPLIT_ELEMENTS", "PROCESSES_MIN_SPLIT_ELEMENTS"):
        monkeypatch.setattr(split_plan, name, 0)
    for name in ("MIN_SPLIT_MATMUL_MACS", "PROCESSES_MIN_SPLIT_MATMUL_MACS"):
        monkeypatch.setattr(conv, name, 0)


def split_tails(program: LinalgProgram) -> list[SplitTail]:
    return [step for step in program.steps if isinstance(step, SplitTail)]


def run_three_times(programs, x, reference):
    for _ in range(3):  # the planned buffers are reused run after run; new data each run
        expected = reference(x)
        for program in programs:
            (got,) = program(x)
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
        x = (x[:, ::-1] * 1.5 - 0.25).astype(np.float32)


def count_together(monkeypatch) -> list:
    """Record each `SplitTail` run that ran the product and the tail together (it bound the tail's rows)."""
    together = []
    original = SplitTail.__call__

    def call(self, env):
        before = self.tail.epilogue
        self.tail.epilogue = lambda env: together.append(self) or before(env)
        try:
            original(self, env)
        finally:
            self.tail.epilogue = before

    monkeypatch.setattr(SplitTail, "__call__", call)
    return together


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("groups, group_channels, h, w, batch",
                         [(4, 5, 7, 6, 1), (3, 3, 5, 9, 1), (2, 7, 1, 5, 1), (4, 34, 14, 14, 1), (2, 4, 6, 5, 2)])
def test_the_unit_end_runs_with_its_tail(groups, group_channels, h, w, batch, threads, split_everything, monkeypatch):
    x, w_gcf, hwio, bias = end_case(groups, group_channels, h, w, batch)
    module = lower(unit_end(x.shape, hwio, bias, groups), to="linalg")
    fused = LinalgProgram(module)
    (step,) = split_tails(fused)
    assert isinstance(step.tail.step, FusedTail) and isinstance(step.contraction, ContractionStep)
    together = count_together(monkeypatch)
    set_blas_threads(threads)
    try:
        run_three_times((fused,), x, lambda x: end_reference(x, w_gcf, bias))
    finally:
        set_blas_threads(1)
    rows = next(n for n in x.shape if n > 1)  # the tail's rows: its first axis of more than one point
    assert len(together) == (3 if threads == 2 and rows >= 4 else 0)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("groups, group_channels, h, w, stride", [(4, 5, 7, 6, 1), (3, 3, 5, 9, 2), (4, 34, 28, 28, 1)])
def test_the_unit_head_runs_with_its_shuffled_tail(groups, group_channels, h, w, stride, threads, split_everything,
                                                   monkeypatch):
    x, w_gcf, hwio, bias, dw = case(groups, group_channels, h, w)
    module = lower(unit_head(x.shape, hwio, bias, dw.reshape(3, 3, 1, -1), groups, stride), to="linalg")
    program = LinalgProgram(module)
    (step,) = split_tails(program)
    assert isinstance(step.tail.step, ShuffledTail)
    together = count_together(monkeypatch)
    set_blas_threads(threads)
    try:
        run_three_times((program,), x, lambda x: head_reference(x, w_gcf, bias, dw, groups, stride))
    finally:
        set_blas_threads(1)
    assert len(together) == (3 if threads == 2 else 0)


@pytest.mark.skipif(spmd.why_not_platform() is not None, reason="no two-process mode here")
def test_the_pair_runs_on_both_processes(blas_workers, split_everything, monkeypatch):
    """In the two-process mode each process multiplies and finishes its half of the rows; the answer
    needs the second process's half."""
    from test_runtime_depthwise_step import check_on_both_processes

    blas_workers(2)
    monkeypatch.setattr(spmd, "CHECK_BINDINGS", True)
    x, w_gcf, hwio, bias = end_case(4, 8, 14, 12)
    module = lower(unit_end(x.shape, hwio, bias, 4), to="linalg")
    check_on_both_processes(module, x, lambda x: end_reference(x, w_gcf, bias), SplitTail, monkeypatch)
