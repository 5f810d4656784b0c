"""The linalg executor's two-process mode (`threading = "processes"`, runtime/parallel/spmd.py): the same answers
as the nn level and the thread mode, on ResNet-18 and random branching graphs, over repeated calls;
errors on either process give one ExecutionError and leave the program usable; the second process
goes away with the program and with its parent."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from test_properties import PROFILE, assert_close, branching_graphs, opt_level_3

from xrelay import passes, transform
from xrelay.frontend import bind_params_by_name, resnet
from xrelay.instrument import PassContext
from xrelay.lowering import lower
from xrelay.runtime import run
from xrelay.runtime.kernels import linalg_conv
from xrelay.runtime.parallel import spmd
from xrelay.runtime.executor import plan as split_plan
from xrelay.runtime.executor.linalg_exec import ExecutionError, LinalgProgram, compile_linalg

pytestmark = pytest.mark.skipif(spmd.why_not_platform() is not None, reason="no two-process mode here")


@pytest.fixture(autouse=True)
def two_threads(blas_workers, monkeypatch):
    blas_workers(2)
    monkeypatch.setattr(spmd, "CHECK_BINDINGS", True)  # rank 1's bindings are rank 0's on every run


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture(scope="module")
def resnet18_nhwc():
    module, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 224, 224))
    with transform.PassContext(opt_level=3):
        optimized = transform.Sequential([
            passes.SimplifyInference(), passes.FoldScaleAxis(), passes.FoldConstant(),
            passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}), passes.FoldConstant(),
        ])(bind_params_by_name(module, params))
    return module, params, lower(optimized, to="linalg")


def test_resnet18_equals_nn_level_and_threads_over_calls(resnet18_nhwc):
    module, params, linalg = resnet18_nhwc
    threads, processes = compile_linalg(linalg), compile_linalg(linalg)
    processes.threading = "processes"
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((1, 3, 224, 224)).astype(np.float32) for _ in range(3)]
    expected = run(module, dict(params, data=inputs[0]))
    expected = expected[0] if isinstance(expected, list) else expected
    np.testing.assert_allclose(processes(inputs[0])[0], expected, rtol=1e-4, atol=1e-6)  # first call: forks
    group = processes._processes
    assert alive(group.pid) and group.spmd_steps, "the second process runs the convolutions"
    for data in (*inputs[1:], inputs[0]):  # a different input each call, then the first again
        np.testing.assert_allclose(processes(data)[0], threads(data)[0], rtol=1e-5, atol=1e-7)
    assert alive(group.pid)


@pytest.fixture
def split_everything(monkeypatch):
    """Every step that can split does, however small (programs compiled while this is on)."""
    for name in ("MIN_SPLIT_ELEMENTS", "PROCESSES_MIN_SPLIT_ELEMENTS"):
        monkeypatch.setattr(split_plan, name, 0)
    for name in ("MIN_SPLIT_MACS", "PROCESSES_MIN_SPLIT_MACS"):
        monkeypatch.setattr(linalg_conv, name, 0)


@settings(settings.get_profile(PROFILE), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(branching_graphs())
def test_random_branching_graphs_equal_the_nn_level(split_everything, graph):
    module, inputs, second = graph
    with PassContext(opt_level=3):
        optimised = opt_level_3(module)
    program = compile_linalg(lower(optimised, to="linalg"))
    program.threading = "processes"
    try:
        for data in (inputs, second, inputs):
            reference = run(module, data)
            reference = reference[0] if isinstance(reference, list) else reference
            assert_close(program(data["data"])[0], reference, "two processes")
    finally:
        program.close()


def small_program():
    """ResNet-18 on 64x64 images (its stem and first convolutions split)."""
    module, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 64, 64))
    bound = bind_params_by_name(module, params)
    return module, params, lower(bound, to="linalg")


@pytest.fixture(scope="module")
def small():
    return small_program()


def test_error_on_rank_1_is_one_execution_error_and_the_next_call_works(small):
    module, params, linalg = small
    program = compile_linalg(linalg)
    program.threading = "processes"
    caller = os.getpid()
    index = next(i for i in program.schedule.body if getattr(program.steps[i], "spmd", False))
    original, failures = program.steps[index], []

    def fails_once_on_rank_1(env):
        if os.getpid() != caller and not failures:
            failures.append(1)  # in rank 1's memory: its next run does not fail
            raise ValueError("forced failure")
        original(env)

    fails_once_on_rank_1.spmd = True
    program.steps[index] = fails_once_on_rank_1
    data = np.random.default_rng(4).standard_normal((1, 3, 64, 64)).astype(np.float32)
    expected = run(module, dict(params, data=data))
    expected = expected[0] if isinstance(expected, list) else expected
    np.testing.assert_allclose(program(data)[0], expected, rtol=1e-4, atol=1e-6)  # rank 0 alone, then the fork
    assert index in program._processes.spmd_steps
    with pytest.raises(ExecutionError, match=rf"step {index} failed in the second process .*ValueError: forced failure"):
        program(data)
    for _ in range(2):
        np.testing.assert_allclose(program(data)[0], expected, rtol=1e-4, atol=1e-6)
    program.close()


def test_error_on_rank_0_aborts_rank_1_and_the_next_call_works(small):
    module, params, linalg = small
    program = compile_linalg(linalg)
    program.threading = "processes"
    data = np.random.default_rng(5).standard_normal((1, 3, 64, 64)).astype(np.float32)
    expected = run(module, dict(params, data=data))
    expected = expected[0] if isinstance(expected, list) else expected
    program(data)
    spmd_steps = program._processes.spmd_steps
    index = spmd_steps[len(spmd_steps) // 2]  # rank 1 waits at a barrier of a later step
    original = program.steps[index]
    program.steps[index] = lambda env: (_ for _ in ()).throw(KeyError("rank 0 failed"))  # only rank 0 sees it
    with pytest.raises(KeyError, match="rank 0 failed"):
        program(data)
    program.steps[index] = original
    np.testing.assert_allclose(program(data)[0], expected, rtol=1e-4, atol=1e-6)
    program.close()


def test_the_second_process_goes_with_the_program(small):
    _, _, linalg = small
    program = compile_linalg(linalg)
    program.threading = "processes"
    data = np.zeros((1, 3, 64, 64), np.float32)
    program(data)
    pid = program._processes.pid
    assert alive(pid)
    del program
    gc.collect()
    assert not alive(pid) and not os.path.exists(f"/proc/{pid}")  # gone and reaped


def test_the_second_process_goes_with_its_parent(tmp_path):
    """A caller that exits without closing its program (the interpreter's exit reaps rank 1), and one
    killed outright (rank 1 sees its pipe's end of file): no process is left behind."""
    script = textwrap.dedent("""
        import os, sys
        import numpy as np
        from xrelay.frontend import bind_params_by_name, resnet
        from xrelay.lowering import lower
        from xrelay.runtime.executor.linalg_exec import compile_linalg
        from xrelay.runtime.parallel.threads import set_blas_threads
        set_blas_threads(2)
        module, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32))
        program = compile_linalg(lower(bind_params_by_name(module, params), to="linalg"))
        program.threading = "processes"
        program(np.zeros((1, 3, 32, 32), np.float32))
        print(program._processes.pid, flush=True)
        if sys.argv[1] == "kill":
            os.kill(os.getpid(), 9)
    """)
    path = tmp_path / "caller.py"
    path.write_text(script)
    for how in ("exit", "kill"):
        done = subprocess.run([sys.executable, str(path), how], capture_output=True, text=True, timeout=120)
        pid = int(done.stdout.split()[0])
        for _ in range(300):  # a killed caller's rank 1 leaves within its next check
            if not alive(pid):
                break
            time.sleep(0.01)
        assert not alive(pid), how


def test_a_killed_second_process_is_one_error_then_a_new_one_forks(small):
    module, params, linalg = small
    program = compile_linalg(linalg)
    program.threading = "processes"
    data = np.random.default_rng(6).standard_normal((1, 3, 64, 64)).astype(np.float32)
    expected = run(module, dict(params, data=data))
    expected = expected[0] if isinstance(expected, list) else expected
    program(data)
    first = program._processes.pid
    os.kill(first, signal.SIGKILL)
    with pytest.raises(ExecutionError, match=rf"the second process \(pid {first}\) exited"):
        program(data)
    assert not os.path.exists(f"/proc/{first}")  # reaped
    np.testing.assert_allclose(program(data)[0], expected, rtol=1e-4, atol=1e-6)  # rank 0 alone, then a fork
    np.testing.assert_allclose(program(data)[0], expected, rtol=1e-4, atol=1e-6)
    assert alive(program._processes.pid) and program._processes.pid != first
    program.close()


def test_an_unplanned_program_warns_once_and_runs_on_threads(small):
    module, params, linalg = small
    program = LinalgProgram(linalg, plan=False)
    program.threading = "processes"
    data = np.random.default_rng(7).standard_normal((1, 3, 64, 64)).astype(np.float32)
    expected = run(module, dict(params, data=data))
    expected = expected[0] if isinstance(expected, list) else expected
    with pytest.warns(RuntimeWarning, match="threading='processes' runs on threads instead: the program's memory is not planned"):
        np.testing.assert_allclose(program(data)[0], expected, rtol=1e-4, atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once
        np.testing.assert_allclose(program(data)[0], expected, rtol=1e-4, atol=1e-6)


def test_one_thread_runs_in_the_caller_before_and_after_the_fork(small, blas_workers):
    module, params, linalg = small
    program = compile_linalg(linalg)
    program.threading = "processes"
    data = np.random.default_rng(8).standard_normal((1, 3, 64, 64)).astype(np.float32)
    expected = run(module, dict(params, data=data))
    expected = expected[0] if isinstance(expected, list) else expected
    for k, threads in enumerate((1, 2, 2, 1, 2)):
        blas_workers(threads)
        np.testing.assert_allclose(program(data)[0], expected, rtol=1e-4, atol=1e-6)
        group = program.__dict__.get("_processes")
        assert group is None if k == 0 else alive(group.pid)  # forked on the first call on 2 threads
    program.close()
