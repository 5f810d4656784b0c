"""`runtime.run(mod, inputs)` with `inputs` a list: the arrays bind @main's arguments in order (those
`params` leaves), as xrelay-run's bare `--input` files do; a wrong count is one ValueError."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.runtime import run

# x - y * w: the order of the arguments matters for the result.
from xrelay.runtime.iree import backend as iree_backend
PROGRAM = """func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %w: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %p = nn.multiply(%y, %w) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %d = nn.subtract(%x, %p) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %d : tensor<2x3xf32>
}"""

# Upstream's unnamed arguments (%arg0, %arg1), at the linalg level.
UPSTREAM = """func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.sub ins(%arg0, %arg1 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}"""

RNG = np.random.default_rng(5)
X, Y, W = (RNG.standard_normal((2, 3)).astype(np.float32) for _ in range(3))


def module(text: str = PROGRAM):
    return Parser(make_context(), text).parse_module()


@pytest.mark.parametrize("backend", ["xrelay", "iree"])
def test_a_list_binds_the_arguments_in_order(backend):
    if backend == "iree" and not iree_backend.available():
        pytest.skip("IREE is not installed (the 'iree' extra)")
    np.testing.assert_allclose(run(module(), [X, Y, W], backend=backend), X - Y * W, rtol=1e-6)
    np.testing.assert_allclose(run(module(), (W, X, Y), backend=backend), W - X * Y, rtol=1e-6)


def test_positional_inputs_fill_the_arguments_params_leave():
    np.testing.assert_allclose(run(module(), [X, W], params={"y": Y}), X - Y * W, rtol=1e-6)
    np.testing.assert_allclose(run(module(), [Y], params={"x": X, "w": W}), X - Y * W, rtol=1e-6)


def test_positional_inputs_run_upstream_unnamed_arguments_at_the_linalg_level():
    a, b = np.arange(4, dtype=np.float32), np.full(4, 0.5, np.float32)
    np.testing.assert_array_equal(run(module(UPSTREAM), [a, b]), a - b)


@pytest.mark.parametrize("inputs, params, words", [
    ([X, Y], None, "run: 2 positional input(s) for the 3 argument(s) of @main not in params: ['x', 'y', 'w']"),
    ([X, Y, W], {"y": Y}, "run: 3 positional input(s) for the 2 argument(s) of @main not in params: ['x', 'w']"),
    ([X, Y, np.zeros((3, 2), np.float32)], None, "run: argument 'w'"),
])
def test_a_wrong_positional_binding_is_one_value_error(inputs, params, words):
    with pytest.raises(ValueError) as caught:
        run(module(), inputs, params)
    assert str(caught.value).startswith(words)
