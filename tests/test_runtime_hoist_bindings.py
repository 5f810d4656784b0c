"""Binding steps hoisted into a planned program's prologue (runtime/executor/hoist_bindings.py): ShuffleNet's unit
head and a residual unit against numpy written here, with and without hoisting; the bindings a full run
of every step leaves equal the hoisted ones; a reshape that copies stays in the body."""

import numpy as np
import pytest
from module_builder import formed, make_module
from test_runtime_bound_steps import case, reference, unit_head

from xrelay.dialects import nn
from xrelay.lowering import lower
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.parallel.threads import set_blas_threads

RNG = np.random.default_rng(13)


def hoisted_steps(program: LinalgProgram) -> list[int]:
    return [entry for entry in program.schedule.hoisted if isinstance(entry, int)]


def binding_steps_in_body(program: LinalgProgram) -> int:
    return sum(getattr(program.steps[i], "binding", False) for i in program.schedule.body)


def full_run_bindings(program: LinalgProgram, x: np.ndarray) -> list:
    """The environment after running every step of the body in program order, the hoisted ones too, on
    the prologue's bindings alone (as the program ran before hoisting)."""
    env = [None] * len(program.slots)
    for index in program.schedule.prologue:
        program.steps[index](env)
    env[0] = x
    for index in sorted(program.schedule.body + hoisted_steps(program)):
        program.steps[index](env)
    return env


def same_array(a, b) -> bool:
    return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
            and a.strides == b.strides and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def check_hoisted_bindings(program: LinalgProgram, x: np.ndarray) -> int:
    """Every slot the hoisting bound (beyond the prologue's) holds, after a full run, an array of the
    same memory, shape and strides; returns how many slots that is."""
    prologue_only = [None] * len(program.slots)
    for index in program.schedule.prologue:
        program.steps[index](prologue_only)
    env = full_run_bindings(program, x)
    checked = 0
    for s, value in enumerate(program._bound):
        # A slot a full run leaves unbound is read by no step (a pad's buffer a convolution that
        # pools its unpadded result no longer fills is still named by its access): not compared.
        if value is not None and prologue_only[s] is None and env[s] is not None:
            assert same_array(env[s], value), f"slot {s}: the hoisted binding is not what a full run binds"
            checked += 1
    return checked


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("groups, group_channels, h, w, stride, residual",
                         [(3, 4, 7, 6, 1, True), (3, 5, 9, 8, 2, False), (2, 3, 1, 1, 1, True)])
def test_the_unit_head_hoists_its_views_and_matches_numpy(groups, group_channels, h, w, stride, residual, threads):
    x, w_gcf, hwio, bias, dw = case(groups, group_channels, h, w, residual)
    module = lower(unit_head(x.shape, hwio, bias, dw.reshape(3, 3, 1, -1), groups, stride, residual), to="linalg")
    hoisted = LinalgProgram(formed(module))
    # The shuffle's reshapes and the dropped fills' aliases run once, at bind time: only the
    # argument's transpose (it reads the argument) is left binding in the body, and with the residual
    # the argument's view in the grouped convolution's groups (its epilogue reads it so).
    assert len(hoisted_steps(hoisted)) >= 4
    assert binding_steps_in_body(hoisted) <= (2 if residual else 1)
    set_blas_threads(threads)
    try:
        for run in range(3):  # a new argument each run, and the same one changed in place
            expected = reference(x, w_gcf, bias, dw, groups, stride, residual)
            (got,) = hoisted(x)
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
            if run == 0:
                x = RNG.standard_normal(x.shape).astype(np.float32)
            else:
                x[...] = RNG.standard_normal(x.shape)
    finally:
        set_blas_threads(1)
    assert check_hoisted_bindings(hoisted, x) >= len(hoisted_steps(hoisted))


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
    add: the copying reshape stays in the body, every run matches numpy."""
    n, h, w, c = 1, 5, 6, 8
    x = RNG.standard_normal((n, h, w, c)).astype(np.float32)
    w1, w2 = (RNG.standard_normal((1, 1, c, c)).astype(np.float32) for _ in range(2))
    module = lower(residual_unit(x.shape, w1, w2), to="linalg")
    program = LinalgProgram(formed(module))
    assert hoisted_steps(program)
    for _ in range(3):
        y = np.maximum(np.einsum("nhwc,cf->nhwf", x.astype(np.float64), w1[0, 0]), 0)
        out = np.maximum(np.einsum("nhwc,cf->nhwf", y, w2[0, 0]) + x, 0)
        expected = out[..., : c // 2].reshape(n, -1)
        (got,) = program(x)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
        x = RNG.standard_normal(x.shape).astype(np.float32)
    check_hoisted_bindings(program, x)
    # The last reshape copies (a channel slice is not contiguous): never hoisted.
    steps = [*program.schedule.body, *hoisted_steps(program)]  # the body before hoisting
    last_view = max(i for i in steps if getattr(program.steps[i], "binding", False))
    assert last_view in program.schedule.body



@pytest.mark.zoo
def test_shufflenet_hoists_every_binding_but_the_arguments_and_binds_as_a_full_run():
    """The benchmarks' pipeline (opt-level 3, NHWC) on the light ShuffleNet: 275 of its 276 binding
    steps are hoisted (the argument's transpose is not), each binding as a full run of every step does."""
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
    assert binding_steps_in_body(program) <= 1 and len(hoisted_steps(program)) > 250
    assert check_hoisted_bindings(program, x) > 250
