"""OptBisect (exact decision lines) and NumericalBisect (hand-computed error figures on a tiny
module; a deliberately wrong pass found inside real pipelines on the tiny model and bound ResNet-18)."""

import io

import numpy as np
import pytest

from xrelay import passes, transform
from xrelay.frontend import bind_params_by_name, resnet, tiny
from xrelay.instrument.bisect import OptBisect
from xrelay.instrument.numerical_bisect import NumericalBisect, compare_outputs
from tool_passes import clone_only, drop_relu, noop, outer, parse_module, perturb_first_large_constant

def parse():
    return parse_module()


def run_under(instrument, passes, module=None, **context):
    """`passes` as one Sequential on `module` (a fresh tiny module) in a PassContext with `instrument`."""
    with transform.PassContext(instruments=[instrument], **context):
        return transform.Sequential(passes)(parse() if module is None else module)


@transform.module_pass(opt_level=0, name="PerturbConstant")
def perturb_constant(mod, ctx):
    new = mod.clone()
    if not perturb_first_large_constant(new):
        raise AssertionError("no constant to perturb")
    return new


# --- OptBisect ------------------------------------------------------------------------------------


def test_opt_bisect_runs_the_first_n_passes_and_prints_each_decision():
    bisect = OptBisect(2, stream=io.StringIO())
    result = run_under(bisect, [noop, outer, drop_relu], module := parse())
    assert bisect.stream.getvalue() == (
        "BISECT: running pass (1) Noop on module\n"
        "BISECT: running pass (2) Outer on module\n"
        "BISECT: NOT running pass (3) DropRelu on module\n"
        "BISECT: NOT running pass (4) DropRelu on module\n"
    )
    assert bisect.decisions == [(1, "Noop", True), (2, "Outer", True), (3, "DropRelu", False), (4, "DropRelu", False)]
    assert str(result) == str(module)  # both DropRelu runs were skipped


def test_opt_bisect_negative_limit_runs_everything_and_required_passes_are_not_counted():
    bisect = OptBisect(-1, stream=io.StringIO())
    run_under(bisect, [noop, outer, drop_relu], required_pass=["Outer"])
    assert bisect.stream.getvalue() == (
        "BISECT: running pass (1) Noop on module\n"
        "BISECT: running pass (required) Outer on module\n"
        "BISECT: running pass (2) DropRelu on module\n"
        "BISECT: running pass (3) DropRelu on module\n"
    )


def test_opt_bisect_names_forced_runs_and_neither_counts_nor_skips_them():
    # A child's required InferType and the InferType a pass runs after itself are forced (LLVM does not
    # count required passes): limit 1 runs FoldConstant (1) and both InferTypes, skips only (2).
    needs_types = transform.module_pass(lambda mod, ctx: mod, opt_level=0, name="NeedsTypes", required=["InferType"])
    bisect = OptBisect(1, stream=io.StringIO())
    run_under(bisect, [passes.FoldConstant(), needs_types])
    assert bisect.stream.getvalue() == (
        "BISECT: running pass (1) FoldConstant on module\n"
        "BISECT: running pass (forced: InferType after FoldConstant) InferType on module\n"
        "BISECT: running pass (forced: required by NeedsTypes) InferType on module\n"
        "BISECT: NOT running pass (2) NeedsTypes on module\n"
    )
    assert bisect.decisions == [(1, "FoldConstant", True), (2, "NeedsTypes", False)]
    assert bisect.forced == [("InferType", "forced: InferType after FoldConstant"),
                             ("InferType", "forced: required by NeedsTypes")]


def test_opt_bisect_limit_zero_skips_all_and_counting_restarts_per_context():
    out = io.StringIO()
    bisect = OptBisect(0, stream=out)
    with transform.PassContext(instruments=[bisect]):
        noop(parse())
    with transform.PassContext(instruments=[bisect]):
        noop(parse())
    assert out.getvalue() == "BISECT: NOT running pass (1) Noop on module\n" * 2


def test_opt_bisect_rejects_a_non_int_limit():
    with pytest.raises(TypeError, match="OptBisect: limit must be an int"):
        OptBisect("3")


# --- NumericalBisect ------------------------------------------------------------------------------


def test_compare_outputs_figures():
    ref = [np.array([1.0, 4.0, 0.0], np.float32)]
    out = [np.array([0.0, 4.0, 0.5], np.float32)]
    # |diff| = [1, 0, 0.5]; relative over ref != 0: [1, 0]
    assert compare_outputs(out, ref, rtol=1e-5, atol=1e-6) == (1.0, 1.0, True, "")
    assert compare_outputs(ref, ref, rtol=0, atol=0) == (0.0, 0.0, False, "")
    assert compare_outputs([np.zeros(2)], ref, 1e-5, 1e-6)[2:] == (True, "output 0 has shape (2,) instead of (3,)")


def test_numerical_bisect_exact_report_on_a_hand_computed_module():
    checker = NumericalBisect(inputs={"x": np.array([-1.0, 2.0], np.float32)}, stream=io.StringIO())
    run_under(checker, [noop, clone_only, outer])
    # reference relu(x) + c = [1, 4]; without relu x + c = [0, 4]: max abs 1, max rel 1/1.
    assert checker.stream.getvalue() == (
        "numerical-bisect: DropRelu (depth 2): max abs 1.00e+00, max rel 1.00e+00 DRIFT\n"
        "numerical-bisect: Outer (depth 1): max abs 1.00e+00, max rel 1.00e+00 DRIFT\n"
        "numerical-bisect: sequential (depth 0): max abs 1.00e+00, max rel 1.00e+00 DRIFT\n"
        "numerical-bisect: first drifting pass: DropRelu (depth 2): max abs 1.00e+00, max rel 1.00e+00 "
        "(rtol 0.0001, atol 1e-05)\n"
    )
    np.testing.assert_array_equal(checker.reference[0], [1.0, 4.0])
    assert checker.first_drift.name == "DropRelu"


def test_numerical_bisect_no_drift_when_inputs_keep_relu_inactive():
    checker = NumericalBisect(inputs={"x": np.array([3.0, 2.0], np.float32)}, stream=io.StringIO(), verbose=False)
    run_under(checker, [outer])
    assert checker.stream.getvalue() == "numerical-bisect: no pass drifted (rtol 0.0001, atol 1e-05) in 3 checked pass run(s)\n"
    assert checker.first_drift is None


def test_numerical_bisect_seeds_missing_inputs_deterministically():
    first, second = NumericalBisect(seed=3, verbose=False, stream=io.StringIO()), NumericalBisect(
        seed=3, verbose=False, stream=io.StringIO())
    for checker in (first, second):
        with transform.PassContext(instruments=[checker]):
            drop_relu(parse())
    np.testing.assert_array_equal(first.reference[0], second.reference[0])
    x = np.random.default_rng(3).standard_normal(2).astype(np.float32)
    np.testing.assert_allclose(first.reference[0], np.maximum(x, 0) + [1.0, 2.0])


def real_pipeline():
    return transform.Sequential([
        passes.SimplifyInference(),
        passes.FoldConstant(),
        perturb_constant,
        passes.FoldScaleAxis(),
        passes.CanonicalizeOps(),
    ])


def test_numerical_bisect_names_the_wrong_pass_in_a_real_pipeline_on_the_tiny_model():
    mod, params = tiny.get_workload(batch_size=1, image_shape=(3, 8, 8))
    mod = bind_params_by_name(mod, params)
    checker = NumericalBisect(rtol=1e-4, atol=1e-6, stream=io.StringIO())
    with transform.PassContext(opt_level=3, instruments=[checker]):
        real_pipeline()(mod)
    drift = checker.first_drift
    assert (drift.name, drift.depth) == ("PerturbConstant", 1)
    assert drift.max_abs > 1e-6 and drift.max_rel > 1e-4
    before = checker.checks[: checker.checks.index(drift)]
    assert [c.name for c in before] and not any(c.drifted for c in before)  # the real passes kept the outputs
    assert "first drifting pass: PerturbConstant (depth 1)" in checker.stream.getvalue()


def test_numerical_bisect_names_the_wrong_pass_on_bound_resnet18():
    mod, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 224, 224))
    mod = bind_params_by_name(mod, params)
    checker = NumericalBisect(rtol=1e-4, atol=1e-6, stream=io.StringIO(), verbose=False)
    with transform.PassContext(opt_level=3, instruments=[checker]):
        real_pipeline()(mod)
    drift = checker.first_drift
    assert (drift.name, drift.depth) == ("PerturbConstant", 1)
    names_before = [c.name for c in checker.checks[: checker.checks.index(drift)]]
    assert "SimplifyInference" in names_before
    assert not any(c.drifted for c in checker.checks[: checker.checks.index(drift)])
    assert checker.reference[0].shape == (1, 1000)
