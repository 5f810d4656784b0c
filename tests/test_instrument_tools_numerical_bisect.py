"""QA: NumericalBisect on an unbound model (the README's `xrelay-opt m.mlir --numerical-bisect`).

Seeded standard-normal values for `*_moving_var` made batch norm take square roots of negative
numbers: every output was NaN, NaN compared equal to NaN, and every pass "did not drift"."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay import transform
from xrelay.dialects import make_context, nn
from xrelay.frontend import resnet
from xrelay.instrument.numerical_bisect import NumericalBisect, NumericalBisectError, seeded_inputs


@transform.module_pass(opt_level=0, name="DropFirstRelu")
def drop_first_relu(mod, ctx):
    """A deliberately wrong pass: removes the model's first nn.relu."""
    new = mod.clone()
    relu = next(op for op in new.walk() if isinstance(op, nn.ReluOp))
    relu.results[0].replace_all_uses_with(relu.operands[0])
    relu.detach()
    relu.erase()
    return new


def test_unbound_resnet_reference_is_finite_and_a_wrong_pass_drifts():
    mod, _ = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32))
    checker = NumericalBisect(stream=io.StringIO(), verbose=False)
    with transform.PassContext(instruments=[checker]):
        drop_first_relu(mod)
    assert np.isfinite(checker.reference[0]).all()
    assert checker.first_drift is not None and checker.first_drift.name == "DropFirstRelu"


def test_seeded_variances_and_scales_are_positive_and_weights_are_xavier_sized():
    mod, _ = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32))
    values = seeded_inputs(mod, {}, seed=0)
    for name, value in values.items():
        if name.endswith(("_var", "_gamma")):
            assert value.min() >= 0.5 and value.max() < 1.5, name
    weight = values["stage1_unit1_conv1_weight"]  # 64x64x3x3: Xavier bound sqrt(3 / (64 * 9))
    assert np.abs(weight).max() <= np.sqrt(3 / (64 * 9))
    assert values["data"].std() > 0.5  # inputs stay standard normal


SQRT = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.sqrt(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""


def test_a_reference_that_is_not_finite_is_an_error_not_a_blind_pass():
    mod = Parser(make_context(), SQRT).parse_module()
    checker = NumericalBisect({"x": np.array([1.0, -1.0, 4.0, 9.0], np.float32)}, stream=io.StringIO())
    with pytest.raises(NumericalBisectError, match=r"not finite \(NaN or Inf\) on the pipeline's input"):
        with np.errstate(invalid="ignore"), transform.PassContext(instruments=[checker]):
            drop_first_relu(mod)


def test_a_non_finite_reference_prints_only_the_error():
    # numpy's "invalid value encountered in sqrt" warning and a "no pass drifted" summary used to
    # come before the error: the model's NaNs are the error, reported once.
    mod = Parser(make_context(), SQRT).parse_module()
    stream = io.StringIO()
    checker = NumericalBisect({"x": np.array([1.0, -1.0, 4.0, 9.0], np.float32)}, stream=stream)
    with warnings.catch_warnings(record=True) as warned, pytest.raises(NumericalBisectError):
        warnings.simplefilter("always")
        with transform.PassContext(instruments=[checker]):
            drop_first_relu(mod)
    assert stream.getvalue() == ""
    assert checker.reference is None
    assert [str(w.message) for w in warned] == []
