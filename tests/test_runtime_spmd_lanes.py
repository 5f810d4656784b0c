"""Independent branches one per process in the two-process mode (runtime/parallel/spmd_lanes.py): the regions
and branches found on hand-made dependencies (a step of unknown accesses a barrier), the memory plan
keeping a region's buffers apart (and the pads' kept borders made again for it), and
an Inception-like module (four branches concatenated) and random branching graphs run as lanes,
checked against numpy written here and the nn level; with the second process skipping its lane the
answer is wrong."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from test_properties import PROFILE, assert_close, branching_graphs, opt_level_3

from xrelay.dialects import nn
from xrelay.frontend import GraphBuilder
from xrelay.instrument import PassContext
from xrelay.lowering import lower
from xrelay.runtime import run
from xrelay.runtime.parallel import spmd
from xrelay.runtime.parallel import spmd_lanes
from xrelay.runtime.executor.linalg_exec import ExecutionError, LinalgProgram, compile_linalg
from xrelay.runtime.executor.memory_plan import StorageTracker, plan_memory
from xrelay.runtime.executor.pad_step import PadStep
from xrelay.runtime.executor.schedule import StepAccess

RNG = np.random.default_rng(31)


def test_regions_are_cut_where_every_costly_step_depends_or_is_depended_on():
    # 0 -> {1 -> 2, 3, 4 -> 5} -> 6 -> {7, 8}; step 9 reads only constants (no dependency).
    deps = [set(), {0}, {1}, {0}, {0}, {4}, {2, 3, 5}, {6}, {6}, set()]
    costs = [5e3] * 10
    assert spmd_lanes.regions(deps, costs) == [[1, 2, 3, 4, 5], [7, 8, 9]]
    assert spmd_lanes.branches([1, 2, 3, 4, 5], deps) == [[1, 2], [3], [4, 5]]
    cheap = [5e3, 5e3, 5e3, 500.0, 5e3, 5e3, 5e3, 5e3, 5e3, 5e3]  # a cheap step does not keep 1-2 from 4-5
    assert spmd_lanes.regions(deps, cheap)[0] == [1, 2, 3, 4, 5]


def test_two_lanes_deal_the_longest_branch_first_to_the_shorter_lane(monkeypatch):
    monkeypatch.setattr(spmd_lanes, "MIN_REGION_NS", 0)
    monkeypatch.setattr(spmd_lanes, "CHEAP_NS", 50.0)
    costs = [0.0, 300.0, 100.0, 250.0, 120.0, 80.0]
    assert spmd_lanes.two_lanes([[1], [2], [3], [4, 5]], costs) == ([3, 4, 5], [1, 2])  # the longer first
    assert spmd_lanes.two_lanes([[1, 2, 3, 4, 5]], costs) is None  # one branch: nothing to run beside it
    # The longer lane, 450, is 25 longer than half of 850, over 5 costly steps: 5 each.
    monkeypatch.setattr(spmd_lanes, "STEP_SPLIT_NS", 5.0)
    assert spmd_lanes.two_lanes([[1], [2], [3], [4, 5]], costs) == ([3, 4, 5], [1, 2])
    monkeypatch.setattr(spmd_lanes, "STEP_SPLIT_NS", 4.9)  # splitting each step saves more
    assert spmd_lanes.two_lanes([[1], [2], [3], [4, 5]], costs) is None
    monkeypatch.setattr(spmd_lanes, "CHEAP_NS", 90.0)  # 4 costly steps: 6.25 each
    monkeypatch.setattr(spmd_lanes, "STEP_SPLIT_NS", 6.0)
    assert spmd_lanes.two_lanes([[1], [2], [3], [4, 5]], costs) is None
    monkeypatch.setattr(spmd_lanes, "MIN_REGION_NS", 10_000)
    assert spmd_lanes.two_lanes([[1], [2], [3], [4, 5]], costs) is None  # too short to be worth a phase


def test_memory_plan_keeps_buffers_used_within_a_held_range_apart():
    """Buffer 0 (steps 0-1) and buffer 1 (steps 2-3) share a block, unless steps 1-2 are held."""
    def tracker():
        t = StorageTracker()
        for step, slot in ((0, 0), (2, 1), (4, 2)):
            t.fresh(slot, step, (4, 4), np.dtype(np.float32))
        for step, slots in ((1, (0,)), (3, (1,)), (5, (2,))):
            t.touch(step, slots)
        return t

    plain = plan_memory(tracker(), 6, [2])
    assert plain.block_of[0] == plain.block_of[1]
    held = plan_memory(tracker(), 6, [2], hold=[(1, 2)])
    assert held.block_of[0] != held.block_of[1] and held.block_of[2] in (held.block_of[0], held.block_of[1])
    assert held.peak_bytes == 2 * 64


def test_a_step_with_unknown_accesses_is_a_barrier_between_branches():
    """Steps 0 and 2 write buffers of their own and step 3 reads both: independent branches. Step 1
    has no `StepAccess` (what it touches is not known): it depends on step 0 and step 2 on it, so the
    region holds one branch and no lanes are planned."""
    tracker = StorageTracker()
    for slot in range(3):
        tracker.fresh(slot, 0, (4,), np.dtype(np.float32))
    program = SimpleNamespace(memory=tracker, plan=plan_memory(tracker, 4, [2]),
                              accesses={0: StepAccess(writes={0}, cost_ns=5e5),
                                        2: StepAccess(writes={1}, cost_ns=5e5),
                                        3: StepAccess(reads={0, 1}, writes={2}, cost_ns=5e5)})
    known = spmd_lanes.data_dependencies(program, [0, 2, 3])
    assert known == [set(), set(), {0, 1}]
    assert spmd_lanes.branches([0, 1], known) == [[0], [1]]
    deps = spmd_lanes.data_dependencies(program, [0, 1, 2, 3])
    assert deps == [set(), {0}, {1}, {0, 1, 2}]
    assert all(len(spmd_lanes.branches(region, deps)) == 1
               for region in spmd_lanes.regions(deps, [5e5, 0.0, 5e5, 5e5]))


def conv_nhwc(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    """NHWC x HWIO stride-1 convolution with `pad` zeros on every side, in float64, tap by tap."""
    x = np.pad(x.astype(np.float64), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    kh, kw = w.shape[:2]
    oh, ow = x.shape[1] - kh + 1, x.shape[2] - kw + 1
    return sum(np.einsum("nhwc,cf->nhwf", x[:, i:i + oh, j:j + ow], w[i, j].astype(np.float64))
               for i in range(kh) for j in range(kw))


def inception_module():
    """An Inception-like module on a 1x12x12x16 NHWC input: a 1x1 conv; 1x1 then 3x3; 1x1, 3x3, 3x3;
    a 3x3 max pool then a 1x1 conv; each with a ReLU, concatenated on channels; and its numpy."""
    shapes = {"a": (1, 1, 16, 8), "b1": (1, 1, 16, 8), "b2": (3, 3, 8, 12), "c1": (1, 1, 16, 6),
              "c2": (3, 3, 6, 8), "c3": (3, 3, 8, 8), "d": (1, 1, 16, 4)}
    weights = {k: (RNG.standard_normal(s) / np.sqrt(np.prod(s[:3]))).astype(np.float32) for k, s in shapes.items()}
    b = GraphBuilder(None)
    x = b.param("data", (1, 12, 12, 16), np.float32)

    def conv(value, name, pad):
        out = b.op(nn.Conv2DOp, value, b.op(nn.ConstantOp, weights[name]), padding=(pad, pad, pad, pad),
                   data_layout="NHWC", kernel_layout="HWIO")
        return b.op(nn.ReluOp, out)

    pool = b.op(nn.MaxPool2DOp, x, pool_size=(3, 3), padding=(1, 1, 1, 1), layout="NHWC")
    outs = [conv(x, "a", 0), conv(conv(x, "b1", 0), "b2", 1), conv(conv(conv(x, "c1", 0), "c2", 1), "c3", 1),
            conv(pool, "d", 0)]
    module = b.finish(b.op(nn.ConcatenateOp, *outs, axis=3))

    def reference(data):
        relu = lambda v: np.maximum(v, 0)  # noqa: E731
        c = lambda v, name, pad: relu(conv_nhwc(v, weights[name], pad))  # noqa: E731
        padded = np.pad(data.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=-np.inf)
        pooled = np.max([padded[:, i:i + 12, j:j + 12] for i in range(3) for j in range(3)], axis=0)
        return np.concatenate([c(data, "a", 0), c(c(data, "b1", 0), "b2", 1), c(c(c(data, "c1", 0), "c2", 1), "c3", 1),
                               c(pooled, "d", 0)], axis=3)

    return module, reference


@pytest.fixture
def lanes_everywhere(blas_workers, monkeypatch):
    """Two threads; every region of two or more branches runs as lanes; rank 1's bindings checked."""
    blas_workers(2)
    monkeypatch.setattr(spmd, "CHECK_BINDINGS", True)
    monkeypatch.setattr(spmd_lanes, "MIN_REGION_NS", 0)
    monkeypatch.setattr(spmd_lanes, "MAX_LANE_SHARE", 1.0)
    monkeypatch.setattr(spmd_lanes, "STEP_SPLIT_NS", float("inf"))


def phases(program) -> list:
    return [program.steps[i] for i in program._processes.body if isinstance(program.steps[i], spmd_lanes.LanePhase)]


pytestmark = pytest.mark.skipif(spmd.why_not_platform() is not None, reason="no two-process mode here")


def test_inception_module_runs_its_branches_one_per_process(lanes_everywhere):
    module, reference = inception_module()
    linalg = lower(module, to="linalg")
    program = LinalgProgram(linalg)
    program.threading = "processes"
    try:
        for call in range(4):  # the first call forks; a new input every call
            data = RNG.standard_normal((1, 12, 12, 16)).astype(np.float32)
            np.testing.assert_allclose(program(data)[0], reference(data), rtol=1e-4, atol=1e-5)
        (phase,) = phases(program)
        assert phase.lanes[0] and phase.lanes[1]
        assert not set(phase.lanes[1]) & set(program._processes.body)  # rank 0 does not run lane 1's steps
        sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
        from split_profile import step_label

        assert step_label(phase) == f"lanes of {len(phase.lanes[0])} | {len(phase.lanes[1])} steps"
    finally:
        program.close()


def test_after_the_second_process_is_killed_a_new_one_runs_the_lanes(lanes_everywhere):
    """A re-fork plans the phases again from its first run (the memory plan already keeps them apart)."""
    module, reference = inception_module()
    program = LinalgProgram(lower(module, to="linalg"))
    program.threading = "processes"
    data = RNG.standard_normal((1, 12, 12, 16)).astype(np.float32)
    try:
        program(data)
        first = program._processes.pid
        os.kill(first, signal.SIGKILL)
        with pytest.raises(ExecutionError, match="exited during a run"):
            program(data)
        for _ in range(3):  # rank 0 alone, then a fork, then both
            np.testing.assert_allclose(program(data)[0], reference(data), rtol=1e-4, atol=1e-5)
        assert program._processes.pid != first and len(phases(program)) == 1
    finally:
        program.close()


def test_pads_keep_no_border_of_the_memory_plan_before_the_lanes(lanes_everywhere):
    """Two 3x3 convolutions of one input concatenated, then two 1x1s. Planned for one process, the
    second conv's padded buffer takes over the first's block, whose border its pad then keeps instead
    of filling it (`pad_step.keep_borders`). Planned again for lanes (the two convs one per process),
    the two padded buffers have blocks of their own: the second pad must fill its border, else it
    reads what the 1x1s wrote there in the run before (how the zoo's Inception v2 went wrong)."""
    shapes = {"a": (3, 3, 8, 8), "b": (3, 3, 8, 8), "c": (1, 1, 16, 8), "d": (1, 1, 8, 8)}
    weights = {k: (RNG.standard_normal(s) / np.sqrt(np.prod(s[:3]))).astype(np.float32) for k, s in shapes.items()}
    b = GraphBuilder(None)
    x = b.param("data", (1, 8, 8, 8), np.float32)

    def conv(value, name, pad):
        return b.op(nn.Conv2DOp, value, b.op(nn.ConstantOp, weights[name]), padding=(pad, pad, pad, pad),
                    data_layout="NHWC", kernel_layout="HWIO")

    module = b.finish(conv(conv(b.op(nn.ConcatenateOp, conv(x, "a", 1), conv(x, "b", 1), axis=3), "c", 0), "d", 0))

    def reference(data):
        both = np.concatenate([conv_nhwc(data, weights["a"], 1), conv_nhwc(data, weights["b"], 1)], axis=3)
        return conv_nhwc(conv_nhwc(both, weights["c"], 0), weights["d"], 0)

    program = LinalgProgram(lower(module, to="linalg"))
    pads = [pad for step in program.steps
            if isinstance(pad := step if isinstance(step, PadStep) else getattr(step, "pad", None), PadStep)]
    assert [pad.border_kept for pad in pads] == [False, True]  # one block for both padded buffers
    program.threading = "processes"
    try:
        for _ in range(4):  # the first call forks; a new input every call
            data = RNG.standard_normal((1, 8, 8, 8)).astype(np.float32)
            np.testing.assert_allclose(program(data)[0], reference(data), rtol=1e-4, atol=1e-5)
        assert len(phases(program)) == 1
        assert program.plan.block_of[pads[0].k] != program.plan.block_of[pads[1].k]
        assert [pad.border_kept for pad in pads] == [False, False]
    finally:
        program.close()


def test_without_the_second_process_lane_the_answer_is_wrong(lanes_everywhere, monkeypatch):
    """A negative control: rank 1 meets the lane phase without running its lane."""
    original = spmd_lanes.LanePhase._lane
    monkeypatch.setattr(spmd_lanes.LanePhase, "_lane",
                        lambda self, k, env: None if spmd.threads.spmd.rank.rank == 1 else original(self, k, env))
    module, reference = inception_module()
    program = LinalgProgram(lower(module, to="linalg"))
    program.threading = "processes"
    try:
        program(RNG.standard_normal((1, 12, 12, 16)).astype(np.float32))  # runs before the fork
        data = RNG.standard_normal((1, 12, 12, 16)).astype(np.float32)
        assert phases(program)
        assert not np.allclose(program(data)[0], reference(data), rtol=1e-4, atol=1e-5)
    finally:
        program.close()


@settings(settings.get_profile(PROFILE), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(branching_graphs())
def test_random_branching_graphs_as_lanes_equal_the_nn_level(lanes_everywhere, graph):
    module, inputs, second = graph
    with PassContext(opt_level=3):
        optimised = opt_level_3(module)
    program = compile_linalg(lower(optimised, to="linalg"))
    program.threading = "processes"
    try:
        for data in (inputs, second, inputs):
            reference = run(module, data)
            reference = reference[0] if isinstance(reference, list) else reference
            assert_close(program(data["data"])[0], reference, "two processes, branches as lanes")
    finally:
        program.close()
