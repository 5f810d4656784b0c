"""Which steps both processes of the two-process mode run (runtime/parallel/spmd_steps.py), and the step kinds
that became shareable: a planned contraction (`contraction_plan.ContractionStep`: a dense layer, a
grouped convolution whose im2col is copied part by part), a weight reshaped by a step of the body, a
convolution that computes its max pool from the unpadded result. Each is checked against numpy
written here, in the thread mode and in two processes, and shown to need the second process's
parts (with them skipped, the answer is wrong)."""

from __future__ import annotations

import numpy as np
import pytest
from op_levels import single_op_module

from xrelay import passes, transform
from xrelay.dialects import nn
from xrelay.frontend import GraphBuilder, bind_params_by_name, resnet
from xrelay.lowering import lower
from xrelay.runtime import run
from xrelay.runtime.kernels import conv
from xrelay.runtime.kernels import linalg_conv
from xrelay.runtime.parallel import spmd
from xrelay.runtime.parallel import spmd_fallback
from xrelay.runtime.parallel import threads
from xrelay.runtime.executor import plan as split_plan
from xrelay.runtime.kernels.contraction_plan import ContractionStep
from xrelay.runtime.kernels.conv_epilogue import ConvStep
from xrelay.runtime.executor.linalg_exec import LinalgProgram, compile_linalg

pytestmark = pytest.mark.skipif(spmd.why_not_platform() is not None, reason="no two-process mode here")

RNG = np.random.default_rng(12)


@pytest.fixture(autouse=True)
def split_everything(blas_workers, monkeypatch):
    """Two threads; every step that can split does, however small; rank 1's bindings checked."""
    blas_workers(2)
    monkeypatch.setattr(spmd, "CHECK_BINDINGS", True)
    for name in ("MIN_SPLIT_ELEMENTS", "PROCESSES_MIN_SPLIT_ELEMENTS"):
        monkeypatch.setattr(split_plan, name, 0)
    for name in ("MIN_SPLIT_MACS", "PROCESSES_MIN_SPLIT_MACS"):
        monkeypatch.setattr(linalg_conv, name, 0)
    for name in ("MIN_SPLIT_MATMUL_MACS", "PROCESSES_MIN_SPLIT_MATMUL_MACS"):
        monkeypatch.setattr(conv, name, 0)


def grouped_nhwc_reference(x: np.ndarray, w: np.ndarray, groups: int) -> np.ndarray:
    """NHWC x HWIO stride-1 unpadded grouped convolution in float64, tap by tap and group by group."""
    kh, kw, cg, f = w.shape
    fg = f // groups
    oh, ow = x.shape[1] - kh + 1, x.shape[2] - kw + 1
    out = np.zeros((x.shape[0], oh, ow, f))
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                out[..., g * fg:(g + 1) * fg] += np.einsum(
                    "nhwc,cf->nhwf", x[:, i:i + oh, j:j + ow, g * cg:(g + 1) * cg].astype(np.float64),
                    w[i, j, :, g * fg:(g + 1) * fg].astype(np.float64))
    return out


def grouped_conv_case():
    """A 3x3 grouped convolution, NHWC: its im2col matrix is a copy of the data (made part by part)."""
    x = RNG.standard_normal((1, 11, 9, 6)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 3, 8)).astype(np.float32)
    module = single_op_module("nn.conv2d", [x, w], dict(groups=2, data_layout="NHWC", kernel_layout="HWIO"))
    return module, (x, w), lambda x, w: grouped_nhwc_reference(x, w, 2)


def grouped_conv_constant_weight_case():
    """`grouped_conv_case` with the weight a constant, which a step of the body reshapes (groups split
    off its filters): a view of memory both processes have had since the fork."""
    x = RNG.standard_normal((1, 11, 9, 6)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 3, 8)).astype(np.float32)
    b = GraphBuilder(None)
    conv = b.op(nn.Conv2DOp, b.param("x", x.shape, x.dtype), b.op(nn.ConstantOp, w), groups=2,
                data_layout="NHWC", kernel_layout="HWIO")
    return b.finish(*conv.results), (x,), lambda x: grouped_nhwc_reference(x, w, 2)


def dense_case():
    """A dense layer: both matrices are views of the arrays (kept between runs)."""
    x, w = RNG.standard_normal((3, 40)).astype(np.float32), RNG.standard_normal((24, 40)).astype(np.float32)
    return single_op_module("nn.dense", [x, w], {}), (x, w), lambda x, w: x.astype(np.float64) @ w.T


def skipping_rank_1_parts(monkeypatch):
    """Make the second process meet every phase without running its parts."""
    original = spmd.Rank.split

    def split(self, calls):
        if self.rank == 1 and self.step_spmd and not self.in_phase and len(calls) >= 2:
            self.barrier()
            self.barrier()
            return True
        return original(self, calls)

    monkeypatch.setattr(spmd.Rank, "split", split)


@pytest.mark.parametrize("case", [grouped_conv_case, grouped_conv_constant_weight_case, dense_case])
def test_contraction_step_runs_on_both_processes(case, monkeypatch):
    module, arrays, reference = case()
    linalg = lower(module, to="linalg")
    threads, processes = LinalgProgram(linalg), LinalgProgram(linalg)
    processes.threading = "processes"
    try:
        index = next(i for i, step in enumerate(processes.steps) if isinstance(step, ContractionStep))
        for call in range(3):  # the first call forks; then new inputs every call
            inputs = arrays if call == 0 else [a * (call + 1) + 0.5 for a in arrays]
            expected = reference(*inputs)
            for program in (threads, processes):
                np.testing.assert_allclose(program(*inputs)[0], expected, rtol=1e-4, atol=1e-4)
        assert index in processes._processes.spmd_steps
    finally:
        processes.close()
    skipping_rank_1_parts(monkeypatch)
    skipped = LinalgProgram(linalg)
    skipped.threading = "processes"
    try:
        skipped(*arrays)  # the first call runs in one process, then forks
        other = [a * 2 for a in arrays]  # (rank 1's part of the result would still be the first call's)
        assert not np.allclose(skipped(*other)[0], reference(*other), rtol=1e-4, atol=1e-4)
    finally:
        skipped.close()


def test_copied_matrix_in_parts_on_one_and_two_threads(blas_workers):
    """The im2col copy made part by part over worker threads, and whole on one thread."""
    module, (x, w), reference = grouped_conv_case()
    program = LinalgProgram(lower(module, to="linalg"))
    for count in (1, 2):
        blas_workers(count)
        np.testing.assert_allclose(program(x, w)[0], reference(x, w), rtol=1e-4, atol=1e-4)


def test_stem_convolution_with_its_max_pool_and_reshaped_weights_run_on_both_processes():
    """ResNet-18 on 64x64 images, optimised and NHWC: the stem convolution computes its max pool from
    the unpadded result (the pad's buffer is never bound), and the dense layer reads its weight
    through a view step; both run on both processes, and the answers equal the nn level."""
    module, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 64, 64))
    with transform.PassContext(opt_level=3):
        optimized = transform.Sequential([
            passes.SimplifyInference(), passes.FoldScaleAxis(), passes.FoldConstant(), passes.MaxPoolFirst(),
            passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}), passes.FoldConstant(),
        ])(bind_params_by_name(module, params))
    program = compile_linalg(lower(optimized, to="linalg"))
    program.threading = "processes"
    try:
        stem = next(i for i, step in enumerate(program.steps) if isinstance(step, ConvStep) and step.pool is not None)
        dense = next(i for i, step in enumerate(program.steps) if isinstance(step, ContractionStep))
        for seed in (5, 6):
            data = np.random.default_rng(seed).standard_normal((1, 3, 64, 64)).astype(np.float32)
            expected = run(module, dict(params, data=data))
            expected = expected[0] if isinstance(expected, list) else expected
            np.testing.assert_allclose(program(data)[0], expected, rtol=1e-4, atol=1e-6)
        assert {stem, dense} <= set(program._processes.spmd_steps)
    finally:
        program.close()


def test_epilogue_after_a_split_by_filters_is_split_by_rows(monkeypatch):
    """A 3x3 convolution with fewer output pixels than filters splits its filters; its fused bias-add
    + ReLU then runs as a second phase split by rows: with the second process skipping only that
    phase, rows of the answer are wrong."""
    monkeypatch.setattr(threads, "PROCESSES_MIN_SPLIT_EPILOGUE", 0)
    x = RNG.standard_normal((1, 6, 6, 16)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 16, 64)).astype(np.float32)
    bias = RNG.standard_normal(64).astype(np.float32)
    b = GraphBuilder(None)
    conv = b.op(nn.Conv2DOp, b.param("x", x.shape, x.dtype), b.op(nn.ConstantOp, w), padding=(1, 1, 1, 1),
                data_layout="NHWC", kernel_layout="HWIO")
    biased = b.op(nn.OPS["nn.bias_add"], conv, b.op(nn.ConstantOp, bias), axis=3)
    linalg = lower(b.finish(*b.op(nn.OPS["nn.relu"], biased).results), to="linalg")

    def reference(x):
        padded = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
        out = sum(np.einsum("nhwc,cf->nhwf", padded[:, i:i + 6, j:j + 6], w[i, j]) for i in range(3) for j in range(3))
        return np.maximum(out + bias, 0)

    original = spmd.Rank.split
    for skip in (False, True):
        if skip:
            def split(self, calls):  # rank 1 meets the second phase of a step without running its parts
                if self.rank == 1 and self.step_spmd and not self.in_phase and self.phase >= 2 and len(calls) >= 2:
                    self.barrier()
                    self.barrier()
                    return True
                return original(self, calls)

            monkeypatch.setattr(spmd.Rank, "split", split)
        program = LinalgProgram(linalg)
        program.threading = "processes"
        try:
            assert any(isinstance(step, ConvStep) and step.tail is not None for step in program.steps)
            program(x)  # the first call forks
            second = x * 2 - 1
            close = np.allclose(program(second)[0], reference(second), rtol=1e-4, atol=1e-4)
            assert close != skip
        finally:
            program.close()


def test_contiguous_share_of_a_weight_matrix_is_made_once():
    matrix = RNG.standard_normal((12, 10)).astype(np.float32)
    shares: dict = {}
    share = linalg_conv.contiguous_share(shares, matrix, 5, 10)
    assert share.flags.c_contiguous and np.array_equal(share, matrix[:, 5:10])
    assert linalg_conv.contiguous_share(shares, matrix, 5, 10) is share
    other = matrix * 2
    assert np.array_equal(linalg_conv.contiguous_share(shares, other, 5, 10), other[:, 5:10])


def test_convolution_split_by_filters_with_contiguous_weight_shares(monkeypatch):
    """Few output pixels and many filters: each process multiplies the patches by its share of the
    constant weight's filters, a contiguous copy made once (`linalg_conv.contiguous_share`); new
    inputs give numpy's answer, and with the second process skipping its parts,
    a wrong one."""
    monkeypatch.setattr(spmd_fallback, "STARVED_SHARE", float("inf"))  # every call in two processes, however short
    made = []  # the shares rank 0 asked for
    share = linalg_conv.contiguous_share
    monkeypatch.setattr(linalg_conv, "contiguous_share", lambda shares, m, f0, f1: made.append((f0, f1)) or
                        share(shares, m, f0, f1))
    x = RNG.standard_normal((1, 5, 5, 24)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 24, 96)).astype(np.float32)
    b = GraphBuilder(None)
    conv = b.op(nn.Conv2DOp, b.param("x", x.shape, x.dtype), b.op(nn.ConstantOp, w), padding=(1, 1, 1, 1),
                data_layout="NHWC", kernel_layout="HWIO")
    linalg = lower(b.finish(conv), to="linalg")

    def reference(x):
        padded = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
        return sum(np.einsum("nhwc,cf->nhwf", padded[:, i:i + 5, j:j + 5], w[i, j]) for i in range(3) for j in range(3))

    for skip in (False, True):
        if skip:
            skipping_rank_1_parts(monkeypatch)
        program = LinalgProgram(linalg)
        program.threading = "processes"
        try:
            (index,) = [i for i, step in enumerate(program.steps) if isinstance(step, ConvStep)]
            program(x)  # the first call forks
            assert index in program._processes.spmd_steps
            for seed in range(3):
                data = np.random.default_rng(seed).standard_normal(x.shape).astype(np.float32)
                close = np.allclose(program(data)[0], reference(data), rtol=1e-4, atol=1e-4)
                assert close != skip
        finally:
            program.close()
    assert set(made) == {(0, 48)}  # rank 0's share of the 96 filters


def test_winograd_convolution_with_its_max_pool_runs_on_both_processes(monkeypatch):
    """Inception v2's 3x3/1 convolution before a 3x3/2 max pool (pad 1), the pool its only reader: the
    step keeps its Winograd kernel (not the blocked form), split over
    both processes, then pools; numpy's answer on new inputs, a wrong one with the second process
    skipping its parts."""
    monkeypatch.setattr(spmd_fallback, "STARVED_SHARE", float("inf"))
    x = RNG.standard_normal((1, 18, 18, 8)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 8, 12)).astype(np.float32)
    b = GraphBuilder(None)
    conv = b.op(nn.Conv2DOp, b.param("x", x.shape, x.dtype), b.op(nn.ConstantOp, w), padding=(1, 1, 1, 1),
                data_layout="NHWC", kernel_layout="HWIO")
    pool = b.op(nn.MaxPool2DOp, conv, pool_size=(3, 3), strides=(2, 2), padding=(1, 1, 1, 1), layout="NHWC")
    linalg = lower(b.finish(pool), to="linalg")

    def reference(x):
        padded = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
        out = sum(np.einsum("nhwc,cf->nhwf", padded[:, i:i + 18, j:j + 18], w[i, j]) for i in range(3) for j in range(3))
        out = np.pad(out, ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=-np.inf)
        return np.max([out[:, i:i + 17:2, j:j + 17:2] for i in range(3) for j in range(3)], axis=0)

    for skip in (False, True):
        if skip:
            skipping_rank_1_parts(monkeypatch)
        program = LinalgProgram(linalg)
        program.threading = "processes"
        try:
            (index,) = [i for i, step in enumerate(program.steps) if isinstance(step, ConvStep)]
            step = program.steps[index]
            assert step.pool is not None and step.winograd and step.blocked is None
            program(x)  # the first call forks
            assert index in program._processes.spmd_steps
            for seed in range(3):
                data = np.random.default_rng(seed).standard_normal(x.shape).astype(np.float32)
                close = np.allclose(program(data)[0], reference(data), rtol=1e-4, atol=1e-4)
                assert close != skip
        finally:
            program.close()
