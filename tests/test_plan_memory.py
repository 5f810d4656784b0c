"""`plan-memory` (passes/kernels/plan_memory.py) and the executor that follows it
(runtime/executor/placement.py): built programs compute what numpy computes, call after call, in the
arena the IR describes; the arena is as small as the load-time plan of unbuilt programs; a placement
with two live buffers on the same bytes is refused at load, naming the op."""

from __future__ import annotations

import numpy as np
import pytest
from test_build import MODEL, X, assert_memory_follows_ir, parse, reference
from test_runtime_concat_in_place import B1, B2, W1, W2, W3, W4, W_STEM, conv, dense_module

import xrelay
from xrelay import transform
from xrelay.dialects.kernel import ARENA_BYTES, IN_PLACE, OFFSET
from xrelay.runtime.executor.linalg_exec import ExecutionError, LinalgProgram
from xrelay.passes.kernels.plan_memory import assign_blocks

RNG = np.random.default_rng(26)


def dense_reference(x: np.ndarray) -> list[np.ndarray]:
    """test_runtime_concat_in_place's DenseNet-like network (three concatenations) on input `x`."""
    relu = lambda v: np.maximum(v, 0)  # noqa: E731
    stem = relu(conv(x, W_STEM))
    n1 = conv(relu(conv(relu(stem + B1.reshape(-1, 1, 1)), W1)), W2)
    cat1 = np.concatenate([stem, n1], axis=1)
    n2 = conv(relu(conv(relu(cat1 + B2.reshape(-1, 1, 1)), W3)), W4)
    return [np.concatenate([cat1, n2], axis=1), np.concatenate([n1, n2], axis=1), stem * 2]


def test_concatenations_run_in_the_placed_arena_call_after_call():
    module, _ = dense_module("NCHW")
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(module)
    marked = [op for op in executable.module.walk() if IN_PLACE in op.attributes]
    assert len(marked) >= 2  # n1 and n2 computed in their first concatenation
    assert_memory_follows_ir(executable.program)
    for _ in range(4):  # new data every call, in the same arena
        x = RNG.standard_normal((1, 3, 16, 16)).astype(np.float32)
        for got, want in zip(executable(x), dense_reference(x), strict=True):
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


def test_arena_is_the_load_time_plan_on_squeezenet():
    """The pass's liveness (a kernel is one step) finds the blocks a plan over the executor's own steps
    finds on the built SqueezeNet; the arena adds only the rounding of each block to 64 bytes."""
    from test_frontend_onnx_zoo import imported

    module, params = imported("squeezenet")
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(module, params)
    program = executable.program
    old = assign_blocks(program.memory, len(program.steps), program.result_slots)
    assert program.peak_bytes == sum(-(-size // 64) * 64 for size in old.block_sizes)
    assert len(program.plan.parent) == len(old.parent) == 16  # the fire modules' two expands, in place
    assert_memory_follows_ir(program)


def built_model():
    with transform.PassContext(opt_level=3):
        return xrelay.build(parse(MODEL)).module


def test_two_live_buffers_on_the_same_bytes_are_refused():
    module = built_model()
    program = LinalgProgram(module)
    plan = program.plan
    # Two buffers with their own offsets, alive at one step: the first allocated and the one after it.
    roots = sorted((b.step, k) for k, b in enumerate(plan.buffers)
                   if k not in plan.unused and k not in plan.parent)
    first = roots[0][1]
    second = next(k for step, k in roots[1:] if step <= plan.last_use[first])
    plan.buffers[second].op.attributes[OFFSET] = plan.buffers[first].op.attributes[OFFSET]
    name = plan.buffers[second].op.name
    with pytest.raises(ExecutionError, match=f"^{name} %.*: {OFFSET} = 0 overlaps .* alive at the same time"):
        LinalgProgram(module)


def test_a_placement_outside_the_arena_or_missing_is_refused():
    module = built_model()
    function = next(op for op in module.walk() if ARENA_BYTES in op.attributes)
    placed = next(op for op in function.walk() if OFFSET in op.attributes)
    arena = function.attributes[ARENA_BYTES]
    placed.attributes[OFFSET] = arena
    with pytest.raises(ExecutionError, match=f"{OFFSET} = {arena.value.data} does not hold its"):
        LinalgProgram(module)
    del placed.attributes[OFFSET]
    with pytest.raises(ExecutionError, match=f"has no {OFFSET}, but its function is placed"):
        LinalgProgram(module)


def test_built_without_the_pass_runs_on_fresh_arrays():
    with transform.PassContext(opt_level=3, disabled_pass=["PlanMemory"]):
        executable = xrelay.build(parse(MODEL))
    assert not any(OFFSET in op.attributes or ARENA_BYTES in op.attributes for op in executable.module.walk())
    assert executable.program.plan is None and executable.program.peak_bytes is None
    for _ in range(3):
        x = RNG.standard_normal(X.shape).astype(np.float32)
        np.testing.assert_allclose(executable(x), reference(x), rtol=1e-4, atol=1e-6)


def test_plan_memory_twice_places_the_same():
    module = built_model()
    first = str(module)
    from xrelay.passes.kernels.plan_memory import PlanMemory

    assert str(PlanMemory()(module)) == first
