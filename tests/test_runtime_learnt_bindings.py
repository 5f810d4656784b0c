"""The bindings a placed program learns from its first two runs (runtime/executor/bound_steps.py):
ShuffleNet's unit head and a residual unit against numpy written here, with the same argument object
changed in place and new ones; the bindings learnt equal what a full run of every step binds; a
reshape that copies, and every view of an argument, stays in the steps a run replays."""

import numpy as np
import pytest
from module_builder import formed, make_module
from test_runtime_bound_steps import case, reference, unit_head

from xrelay.dialects import nn
from xrelay.lowering import lower
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.parallel.threads import set_blas_threads

RNG = np.random.default_rng(13)


def skipped_steps(program: LinalgProgram) -> int:
    """How many steps a run after the second no longer runs."""
    return len(program.steps) - len(program.runs.replay)


def binding_steps_replayed(program: LinalgProgram) -> list[int]:
    """The steps a run replays that write no memory (they only bind)."""
    accesses = program.accesses
    return [i for i in program.runs.replay if i in accesses and accesses[i].binds and not accesses[i].writes]


def same_array(a, b) -> bool:
    return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
            and a.strides == b.strides and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def check_learnt_bindings(program: LinalgProgram, x: np.ndarray) -> int:
    """Every array slot the program learnt to bind holds, after a full run of every step on a fresh
    environment, an array of the same memory, shape and strides; returns how many slots that is."""
    env = [None] * len(program.slots)
    env[0] = x
    for step in program.steps:
        step(env)
    checked = 0
    for s, value in enumerate(program.runs.bound):
        # A slot a full run leaves unbound is read by no step (a pad's buffer a convolution that
        # pools its unpadded result no longer fills is still named by its access): not compared.
        if isinstance(value, np.ndarray) and env[s] is not None:
            assert same_array(env[s], value), f"slot {s}: the learnt binding is not what a full run binds"
            checked += 1
    return checked


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("groups, group_channels, h, w, stride, residual",
                         [(3, 4, 7, 6, 1, True), (3, 5, 9, 8, 2, False), (2, 3, 1, 1, 1, True)])
def test_the_unit_head_learns_its_views_and_matches_numpy(groups, group_channels, h, w, stride, residual, threads):
    x, w_gcf, hwio, bias, dw = case(groups, group_channels, h, w, residual)
    module = lower(unit_head(x.shape, hwio, bias, dw.reshape(3, 3, 1, -1), groups, stride, residual), to="linalg")
    program = LinalgProgram(formed(module))
    set_blas_threads(threads)
    try:
        # The same argument object for the two learning runs (changed in place): its views are the
        # same memory both times, yet never learnt (an argument reaches them); then new ones.
        for run in range(5):
            expected = reference(x, w_gcf, bias, dw, groups, stride, residual)
            (got,) = program(x)
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
            if run in (0, 3):
                x[...] = RNG.standard_normal(x.shape)
            else:
                x = RNG.standard_normal(x.shape).astype(np.float32)
    finally:
        set_blas_threads(1)
    # The shuffle's reshapes, the dropped fills' aliases, constants and allocations no longer run:
    # only the argument's transpose (it reads the argument) is left binding, and with the residual
    # the argument's view in the grouped convolution's groups (its epilogue reads it so).
    assert skipped_steps(program) >= 4
    assert len(binding_steps_replayed(program)) <= (2 if residual else 1)
    assert check_learnt_bindings(program, x) >= 4


def residual_unit(x_shape, w1, w2):
    """relu(x @ w1) reshaped to (N, H*W, C), its first channels sliced, relu(conv(y) @ w2) + x: results
    read through views (reshapes, a slice) of results, the shapes ShuffleNet's units make."""

    def body(values, emit):
        y = emit(nn.make("nn.relu", [emit(nn.make("nn.conv2d", [values["x"], emit(nn.ConstantOp(w1))],
                                                   data_layout="NHWC", kernel_layout="HWIO"))]))
        n, h, w, c = x_shape
        flat = emit(nn.make("nn.reshape", [y], newshape=[n, h * w, c]))
        back = emit(nn.make("nn.reshape", [flat], newshape=[n, h, w, c]))
        z = emit(nn.make("nn.conv2d", [back, emit(nn.ConstantOp(w2))], data_layout="NHWC", kernel_layout="HWIO"))
        out = emit(nn.make("nn.relu", [emit(nn.make("nn.add", [z, values["x"]]))]))
        part = emit(nn.make("nn.strided_slice", [out], begin=[0, 0, 0, 0], end=[n, h, w, c // 2], strides=[1, 1, 1, 1]))
        return [emit(nn.make("nn.reshape", [part], newshape=[n, h * w * (c // 2)]))]

    return make_module({"x": x_shape}, body)


def test_a_residual_unit_with_views_of_results_matches_numpy():
    """Views of results (reshapes, a channel slice that the last reshape must copy) next to a residual
    add: the copying reshape is replayed, every run matches numpy."""
    n, h, w, c = 1, 5, 6, 8
    x = RNG.standard_normal((n, h, w, c)).astype(np.float32)
    w1, w2 = (RNG.standard_normal((1, 1, c, c)).astype(np.float32) for _ in range(2))
    module = lower(residual_unit(x.shape, w1, w2), to="linalg")
    program = LinalgProgram(formed(module))
    for _ in range(4):
        y = np.maximum(np.einsum("nhwc,cf->nhwf", x.astype(np.float64), w1[0, 0]), 0)
        out = np.maximum(np.einsum("nhwc,cf->nhwf", y, w2[0, 0]) + x, 0)
        expected = out[..., : c // 2].reshape(n, -1)
        (got,) = program(x)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
        x = RNG.standard_normal(x.shape).astype(np.float32)
    assert skipped_steps(program) > 0
    check_learnt_bindings(program, x)
    # The last reshape copies (a channel slice is not contiguous): a new array every run, replayed.
    last_view = max(i for i, access in program.accesses.items() if access.binds and not access.writes)
    assert last_view in binding_steps_replayed(program)



@pytest.mark.zoo
def test_shufflenet_learns_every_binding_but_the_arguments_and_binds_as_a_full_run():
    """The benchmarks' pipeline (opt-level 3, NHWC) on the light ShuffleNet: all its binding steps but
    the argument's transpose stop running, each binding learnt as a full run of every step binds."""
    from onnx_models import light_model, randomised, zoo_inputs

    from xrelay import passes, transform
    from xrelay.frontend import bind_params_by_name, from_onnx

    proto = randomised(light_model("shufflenet"))
    module, params = from_onnx(proto)
    with transform.PassContext(opt_level=3):
        graph = transform.Sequential(
            [passes.SimplifyInference(), passes.FoldScaleAxis(), passes.FoldConstant(), passes.ConcatFirst(),
             passes.MaxPoolFirst(), passes.PoolAfterPointwiseConv(), passes.ShuffleIntoConv(),
             passes.PreActivationShift()])(bind_params_by_name(module, params))
        graph = transform.Sequential([passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}), passes.FoldConstant()])(graph)
    program = LinalgProgram(formed(lower(graph, to="linalg")))
    (x,) = zoo_inputs(proto).values()
    for _ in range(2):
        program(x)
    assert len(binding_steps_replayed(program)) <= 1 and skipped_steps(program) > 250
    assert check_learnt_bindings(program, x) > 250
