"""Benchmarks that measure the executor itself: split_profile.py's per-step labels, handoff.py's timings,
change_ab.py's arguments, conv_pieces.py's pieces of a convolution step, spmd_step_profile.py's
per-rank step times in the two-process mode."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from tests.test_runtime_plan import conv_nhwc_hwcf, conv_reference
from xrelay.dialects import make_context
from xrelay.runtime.executor.linalg_exec import LinalgProgram


def test_step_label_names_a_convolution_by_kernel_stride_channels_and_output():
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    from split_profile import step_label

    text = conv_nhwc_hwcf((1, 17, 13, 3), (5, 3, 3, 7), 2, 0.0)  # output 7x6
    program = LinalgProgram(Parser(make_context(), text).parse_module())
    labels = [step_label(step) for step in program.steps]
    assert [label for label in labels if label] == ["conv 5x3/2 3->7 out 7x6"]


def test_handoff_benchmark_times_the_worker_start_and_the_wait_of_every_split():
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    from handoff import measure

    for prelude in (0, None):
        delays, waits = measure(prelude, splits=3, gap_us=0)
        assert len(delays) == len(waits) == 3
        assert all(d >= 0 for d in delays) and all(w >= 0 for w in waits)


def test_change_ab_names_a_missing_change_flag_or_pass_in_one_line(capsys):
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    from change_ab import main

    for argv, message in (
        (["--model", "onnx:squeezenet"], "give the change"),
        (["--off", "xrelay.runtime.executor.memory_plan.NO_SUCH_FLAG"], "--off xrelay.runtime.executor.memory_plan.NO_SUCH_FLAG: no such"),
        (["--off", "xrelay.no_such_module.FLAG"], "--off xrelay.no_such_module.FLAG: no such"),
        (["--without-pass", "NoSuchPass"], "--without-pass NoSuchPass: no such pass"),
        (["--off", "xrelay.runtime.executor.plan.PROCESSES_MIN_SPLIT_ELEMENTS=1 <<"], "not a Python literal"),
        (["--off", "xrelay.runtime.executor.plan.FusedTail", "--both"], "--both needs --threading"),
    ):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.startswith("change_ab.py: ") and message in err and err.count("\n") == 1


def strided_conv_step(rng: np.random.Generator):
    """A 5x3 stride-2 NHWC conv's data, weight, `ConvStep` and environment after one run."""
    from xrelay.runtime.kernels.conv_epilogue import ConvStep

    x = rng.standard_normal((1, 17, 13, 3)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 7)).astype(np.float32)
    program = LinalgProgram(Parser(make_context(), conv_nhwc_hwcf(x.shape, w.shape, 2, 0.0)).parse_module())
    env: list = [None] * len(program.slots)
    env[0], env[1] = x, w
    for step in program.steps:
        step(env)
    (conv,) = [step for step in program.steps if isinstance(step, ConvStep)]
    return x, w, conv, env


def test_conv_pieces_gemm_of_the_copied_patches_is_the_convolution():
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    from conv_pieces import patches_and_weights, time_pieces

    x, w, conv, env = strided_conv_step(np.random.default_rng(7))
    view, matrix = patches_and_weights(conv, conv.prepare(env))
    assert view.shape == (1, 7, 6, 5, 3, 3) and matrix.shape == (45, 7)
    gemm = np.ascontiguousarray(view).reshape(-1, 45) @ matrix
    np.testing.assert_allclose(gemm.reshape(1, 7, 6, 7), conv_reference(x, w, 2, 0.0), rtol=1e-4, atol=1e-4)
    times = time_pieces(conv, env, rounds=2)
    assert set(times) == {"step", "kernel alone", "patch copy", "GEMM (numpy)"} and min(times.values()) > 0


def test_conv_pieces_ort_model_is_the_steps_convolution():
    """conv_pieces.py --ort: the one-node ONNX model of a step's convolution computes that convolution
    (checked against numpy written here, with a Relu when the step has a tail), and its timing gives
    one positive figure per convolution."""
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    import onnxruntime as ort
    from conv_pieces import conv_model, conv_spec, ort_conv_times

    rng = np.random.default_rng(8)
    x, w, conv, env = strided_conv_step(rng)
    spec = conv_spec(conv, conv.prepare(env))
    assert spec == {"x": [1, 3, 17, 13], "w": [7, 3, 5, 3], "strides": [2, 2], "dilations": [1, 1], "relu": False}
    bias = rng.standard_normal(7).astype(np.float32)
    for relu in (False, True):
        model = conv_model({**spec, "relu": relu}, w.transpose(3, 2, 0, 1).copy(), bias)
        session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        (got,) = session.run(None, {"x": x.transpose(0, 3, 1, 2).copy()})
        want = conv_reference(x, w, 2, 0.0) + bias
        want = np.maximum(want, 0) if relu else want
        np.testing.assert_allclose(got.transpose(0, 2, 3, 1), want, rtol=1e-4, atol=1e-4)
    times = ort_conv_times([spec, {**spec, "relu": True}], threads=1, rounds=10)
    assert len(times) == 2 and min(times) > 0


def test_step_label_names_fused_tails_pads_and_a_tail_writing_a_shuffled_pad():
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    from split_profile import step_label
    from tests.test_runtime_shuffle_tail import case, unit_head

    from xrelay.lowering import lower

    x, _, hwio, bias, dw = case(2, 3, 5, 4)
    module = lower(unit_head(x.shape, hwio, bias, dw.reshape(3, 3, 1, -1), 2, 1), to="linalg")
    fused = [label for label in map(step_label, LinalgProgram(module).steps) if label]
    # the tail runs with the grouped convolution before it (runtime/kernels/contraction_tail.py)
    assert "grouped 1x1 conv + tail of 2 ops 1x5x4x6 +shuffled pad" in fused
    assert not any(label.startswith("pad") for label in fused)
    # the shuffle's input also read elsewhere: the pad copies it in a step of its own
    module = lower(unit_head(x.shape, hwio, bias, dw.reshape(3, 3, 1, -1), 2, 1, shuffle_read_twice=True),
                   to="linalg")
    unfused = [label for label in map(step_label, LinalgProgram(module).steps) if label]
    assert "grouped 1x1 conv + tail generic(addf)+generic(maximumf) 1x5x4x6" in unfused
    assert "pad 1x5x4x3x2 -> 1x7x6x6 (transposed)" in unfused


def test_step_label_names_depthwise_and_planned_matmul_steps_and_their_kinds():
    """split_profile.py names a depthwise convolution's step by its einsum (merged at stride 1, over
    the window view at stride 2) and multiply-adds (5x4 or 3x2 outputs x 6 channels x 9 taps), the
    grouped 1x1 convolution's planned matmul by its shape, and counts both as contractions."""
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    from split_profile import step_kinds, step_label
    from tests.test_runtime_shuffle_tail import case, unit_head

    from xrelay.lowering import lower

    for stride, einsum, macs in ((1, "merged", 5 * 4 * 6 * 9), (2, "window", 3 * 2 * 6 * 9)):
        x, _, hwio, bias, dw = case(2, 3, 5, 4)
        program = LinalgProgram(lower(unit_head(x.shape, hwio, bias, dw.reshape(3, 3, 1, -1), 2, stride), to="linalg"))
        named = {type(step).__name__: (kind, step_label(step)) for step, kind in zip(program.steps, step_kinds(program))}
        assert named["DepthwiseStep"] == ("structured op (conv, matmul, ...)",
                                          f"depthwise conv, {einsum} einsum, {macs} MACs")
        assert named["ContractionStep"] == ("structured op (conv, matmul, ...)",
                                            "matmul 2x20x3 (batch x rows x cols) (at its tail's step when they split)")
        assert named["SplitTail"][0] == "matmul + its elementwise tail (fused)"


def test_ort_node_profile_times_every_node_of_a_model():
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    from onnx import helper
    from split_profile import ort_node_profile
    from tests.onnx_models import model

    proto = model([helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]), helper.make_node("Softmax", ["t"], ["y"])],
                  {"x": [3, 5]}, ["y"])
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    nodes = ort_node_profile(proto.SerializeToString(), {"x": x}, threads=1, runs=3)
    assert sorted((op, dims) for _, op, dims, _ in nodes) == [("Softmax", "5x3"), ("Transpose", "5x3")]
    assert all(micros >= 0 for *_, micros in nodes)


def test_spmd_step_profile_times_each_rank_of_the_two_process_mode(blas_workers, monkeypatch, capsys):
    """spmd_step_profile.StepClock installed before the fork: per run, both ranks record the steps
    they run (rank 1 only the steps both run), each phase's parts and barriers (in pairs, as many on
    each rank), and times that add up; the report names the convolution."""
    from xrelay.dialects import nn
    from xrelay.frontend import GraphBuilder
    from xrelay.lowering import lower
    from xrelay.runtime.kernels import linalg_conv
    from xrelay.runtime.parallel import spmd
    from xrelay.runtime.parallel import spmd_fallback

    if spmd.why_not_platform() is not None:
        pytest.skip("no two-process mode here")
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    from spmd_step_profile import ALONE, BARRIER, BARRIERS, PARTS, RAN, WALL, StepClock
    from split_profile import step_label

    blas_workers(2)
    monkeypatch.setattr(linalg_conv, "PROCESSES_MIN_SPLIT_MACS", 0)
    monkeypatch.setattr(spmd_fallback, "STARVED_SHARE", float("inf"))  # every call in two processes, however slow
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 8, 8, 8)).astype(np.float32)
    w = rng.standard_normal((3, 3, 8, 16)).astype(np.float32)
    b = GraphBuilder(None)
    conv = b.op(nn.Conv2DOp, b.param("x", x.shape, x.dtype), b.op(nn.ConstantOp, w), padding=(1, 1, 1, 1),
                data_layout="NHWC", kernel_layout="HWIO")
    program = LinalgProgram(lower(b.finish(*b.op(nn.OPS["nn.relu"], conv).results), to="linalg"))
    program.threading = "processes"
    clock = StepClock(max_runs=8)
    clock.install()
    try:
        program(x)  # runs on threads, then forks
        padded = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
        expected = np.maximum(sum(np.einsum("nhwc,cf->nhwf", padded[:, i:i + 8, j:j + 8], w[i, j])
                                  for i in range(3) for j in range(3)), 0)
        for _ in range(3):
            np.testing.assert_allclose(program(x)[0], expected, rtol=1e-4, atol=1e-4)
        group = program._processes
        labels = [step_label(getattr(step, "_step", step)) for step in program.steps]
        conv_step = next(i for i, label in enumerate(labels) if label.startswith("conv 3x3/1 8->16 out 8x8"))
        assert conv_step in group.spmd_steps
        others = [i for i in range(len(program.steps)) if i not in group.spmd_steps]
        for run in range(1, 4):
            table = clock.table[run - 1]
            assert table[0, conv_step, RAN] == table[1, conv_step, RAN] == 1
            assert table[0, conv_step, BARRIERS] == table[1, conv_step, BARRIERS] >= 2
            assert table[0, conv_step, BARRIERS] % 2 == 0
            assert (table[:, conv_step, PARTS] > 0).all()
            assert (table[1, others] == 0).all()  # rank 1 runs only the steps both run
            assert (table[1, :, ALONE] == 0).all()
            for rank in (0, 1):
                spent = table[rank, conv_step, PARTS] + table[rank, conv_step, BARRIER] + table[rank, conv_step, ALONE]
                assert spent <= table[rank, conv_step, WALL]
        assert (clock.table[3:] == 0).all()  # no fourth run
        clock.report(labels, range(1, 4), 5)
    finally:
        clock.uninstall()
        program.close()
    assert "conv 3x3/1 8->16 out 8x8" in capsys.readouterr().out
