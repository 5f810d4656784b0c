"""The two-process mode's fallback to threads while it is starved (runtime/parallel/spmd_fallback.py): the
policy on hand-made run figures, and a program whose every run counts as starved running its calls
on threads, probing, and answering as the nn level throughout."""

from __future__ import annotations

import os

import numpy as np
import pytest

from xrelay.frontend import bind_params_by_name, resnet
from xrelay.lowering import lower
from xrelay.runtime import run
from xrelay.runtime.parallel import spmd
from xrelay.runtime.parallel import spmd_fallback
from xrelay.runtime.executor.linalg_exec import compile_linalg
from xrelay.runtime.parallel.spmd_fallback import Starvation


def calls_on_threads(policy: Starvation, figures: list[tuple[int, int] | None]) -> list[bool]:
    """Per call, whether `policy` ran it on threads; `figures[i]` is (run ns, waited ns) of a call it
    ran in two processes (None where it is expected to use threads)."""
    choices = []
    for figure in figures:
        on_threads = policy.use_threads()
        choices.append(on_threads)
        if not on_threads:
            policy.record(*figure)
    return choices


def test_two_starved_runs_in_a_row_fall_back_and_a_probe_decides(monkeypatch):
    monkeypatch.setattr(spmd_fallback, "FIRST_BACKOFF", 2)
    monkeypatch.setattr(spmd_fallback, "MAX_BACKOFF", 4)
    policy = Starvation()
    ok, starved = (100, 10), (100, 30)  # 10% and 30% of the run waiting (the limit is 25%)
    # One starved run alone changes nothing; two in a row: 2 calls on threads, then a probe.
    assert calls_on_threads(policy, [starved, ok, starved, starved, None, None]) == [False] * 4 + [True] * 2
    assert policy.fallbacks == 1
    # A starved probe doubles the backoff (4), a second one stays at the maximum (4).
    assert calls_on_threads(policy, [starved, *[None] * 4, starved, *[None] * 4]) == \
        [False, *[True] * 4, False, *[True] * 4]
    assert policy.fallbacks == 3
    # A probe that is not starved returns to two processes and resets the backoff to 2.
    assert calls_on_threads(policy, [ok, ok, starved, starved, None, None]) == [False] * 4 + [True] * 2


@pytest.mark.skipif(spmd.why_not_platform() is not None, reason="no two-process mode here")
def test_starved_program_runs_on_threads_then_probes_with_the_same_answers(blas_workers, monkeypatch):
    blas_workers(2)
    monkeypatch.setattr(spmd_fallback, "STARVED_SHARE", -1.0)  # every run counts as starved
    monkeypatch.setattr(spmd_fallback, "FIRST_BACKOFF", 3)
    module, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32))
    program = compile_linalg(lower(bind_params_by_name(module, params), to="linalg"))
    program.threading = "processes"
    try:
        two_process_runs = []
        for seed in range(8):
            data = np.random.default_rng(seed).standard_normal((1, 3, 32, 32)).astype(np.float32)
            expected = run(module, dict(params, data=data))
            expected = expected[0] if isinstance(expected, list) else expected
            np.testing.assert_allclose(program(data)[0], expected, rtol=1e-4, atol=1e-6)
            two_process_runs.append(program._processes.runs)
        # Call 1 forks (run 0), calls 2-3 run in two processes (both starved), 4-6 on threads,
        # 7 probes (starved again: 6 calls on threads from 8 on).
        assert two_process_runs == [0, 1, 2, 2, 2, 2, 3, 3]
        assert program._processes.starvation.fallbacks == 2
    finally:
        program.close()


@pytest.mark.skipif(spmd.why_not_platform() is not None, reason="no two-process mode here")
def test_default_threading_forks_at_the_third_call_and_not_on_one_thread(blas_workers):
    """`threading = "auto"` (the default): on 2 threads the first two calls run on threads, the third
    forks; on 1 thread nothing forks. Every call equals the nn level; closing ends the process."""
    module, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32))
    linalg = lower(bind_params_by_name(module, params), to="linalg")
    rng = np.random.default_rng(9)
    for count in (1, 2):
        blas_workers(count)
        program = compile_linalg(linalg)
        assert program.threading == "auto"
        forked = []
        try:
            for _ in range(4):
                data = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
                expected = run(module, dict(params, data=data))
                expected = expected[0] if isinstance(expected, list) else expected
                np.testing.assert_allclose(program(data)[0], expected, rtol=1e-4, atol=1e-6)
                group = program.__dict__.get("_processes")
                forked.append(bool(group) and group.pid is not None)
            assert forked == ([False] * 4 if count == 1 else [False, False, True, True])
        finally:
            pid = group.pid if group else None
            program.close()
        if pid is not None:
            with pytest.raises(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)  # reaped by close()
