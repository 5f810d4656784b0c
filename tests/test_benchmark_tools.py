"""Benchmarks that measure the executor itself: split_profile.py's per-step labels, handoff.py's timings,
change_ab.py's arguments, workers.py's in-process turns, conv_pieces.py's pieces of a convolution step,
spmd_step_profile.py's per-rank step times in the two-process mode."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from module_builder import formed
from xdsl.parser import Parser

from tests.test_runtime_plan import conv_nhwc_hwcf, conv_reference
from xrelay.dialects import make_context
from xrelay.runtime.executor.linalg_exec import LinalgProgram



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
    ):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.startswith("change_ab.py: ") and message in err and err.count("\n") == 1


def strided_conv_step(rng: np.random.Generator):
    """A 5x3 stride-2 NHWC conv's data, weight, `ConvStep` and environment after one run."""
    from xrelay.runtime.kernels.conv_epilogue import ConvStep

    x = rng.standard_normal((1, 17, 13, 3)).astype(np.float32)
    w = rng.standard_normal((5, 3, 3, 7)).astype(np.float32)
    program = LinalgProgram(formed(Parser(make_context(), conv_nhwc_hwcf(x.shape, w.shape, 2, 0.0)).parse_module()))
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





def test_in_turn_rotates_the_first_call_and_times_inside_around():
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    from contextlib import contextmanager

    from workers import in_turn, medians_line

    order: list[str] = []

    @contextmanager
    def around(name):
        order.append(f"enter {name}")
        yield
        order.append(f"leave {name}")

    calls = {name: (lambda name=name: order.append(name)) for name in ("a", "b", "c")}
    times = in_turn(calls, 2, around=around)
    assert [step for step in order if not step.startswith(("enter", "leave"))] == ["a", "b", "c", "b", "c", "a"]
    assert order[:3] == ["enter a", "a", "leave a"]
    assert {name: len(t) for name, t in times.items()} == {"a": 2, "b": 2, "c": 2}
    # Medians 2 ms and 2.5 ms; b's per-round ratios to a are 2.0 and 1.0, median 1.5 (the medians' ratio is 1.25).
    assert medians_line({"a": [0.001, 0.003], "b": [0.002, 0.003]}, "a") == (
        "a 2.000 ms, b 2.500 ms (median per-round ratio to a 1.500)")
