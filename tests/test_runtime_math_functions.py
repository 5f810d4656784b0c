"""math.erf, math.absi and math.powf in linalg bodies at every level, and the helpers behind
them (`runtime/math_functions.py`) against Python's `math` and C's pow special cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.lowering import lower
from xrelay.runtime.executor.linalg_exec import run_linalg
from xrelay.runtime.reference.loops_exec import compile_loops, run_loops
from xrelay.runtime.math_functions import erf

LEVELS = ("linalg", "memref", "loops", "scalar loops")


def run_at(text: str, level: str, inputs: dict) -> list[np.ndarray]:
    """`text` lowered to `level` and run; "scalar loops": the numpy loops executor, nest by scalar."""
    module = lower(Parser(make_context(), text).parse_module(), to=level.removeprefix("scalar "))
    if level == "scalar loops":
        program = compile_loops(module, vectorize=False)
        return program(*(inputs[name] for name in program.arg_names))
    return (run_loops if level == "loops" else run_linalg)(module, inputs)


def test_erf_matches_python_math_erf_to_1e_8():
    grid = np.concatenate([
        np.linspace(-7, 7, 140_001),
        np.geomspace(1e-300, 10, 5_000),
        -np.geomspace(1e-300, 10, 5_000),
        [0.0, 1.0, -1.0, 6.0, 1e300, -1e300],
    ])
    expected = np.array([math.erf(v) for v in grid])
    got = erf(grid)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=0)


@pytest.mark.parametrize("native", ["1", "0"], ids=["compiled", "numpy"])
def test_erf_float32_within_one_rounding_and_special_values(monkeypatch, native):
    monkeypatch.setenv("XRELAY_NATIVE", native)
    from xrelay.runtime.math_functions import _compiled_erf

    assert native == "0" or _compiled_erf() is not None  # gcc is on every machine the tests run on
    got = erf(np.array([np.inf, -np.inf, np.nan, -0.0], np.float32))
    assert got.dtype == np.float32
    assert got[0] == 1.0 and got[1] == -1.0 and np.isnan(got[2]) and got[3] == 0.0 and np.signbit(got[3])
    tiny = np.geomspace(1e-45, 10, 2_000, dtype=np.float32)
    x = np.concatenate([np.linspace(-7, 7, 20_001, dtype=np.float32), tiny, -tiny, np.float32([3.9, 4, 6, 1e30])])
    expected = np.array([math.erf(float(v)) for v in x], np.float32)
    # Within one float32 rounding of the exact value.
    assert np.max(np.abs(erf(x).view(np.int32) - expected.view(np.int32))) <= 1
    strided = x.reshape(-1, 1)[::3]  # not contiguous: the compiled path copies it
    np.testing.assert_array_equal(erf(strided), erf(np.ascontiguousarray(strided)))
    assert erf(np.float32(0.5)).shape == () and erf(np.array([1, 2], np.int32)).dtype == np.float64


# C99 Annex F's pow, value by value (what numpy's power and LLVM's llvm.pow give).
POW_CASES = [
    (-2.0, 3.0, -8.0), (-2.0, 2.0, 4.0), (-8.0, 1 / 3, math.nan), (-2.0, -1.0, -0.5), (-2.0, 0.5, math.nan),
    (0.0, -1.0, math.inf), (-0.0, -1.0, -math.inf), (-0.0, -2.0, math.inf), (0.0, -0.5, math.inf),
    (-0.0, 3.0, -0.0), (2.0, 0.0, 1.0), (math.nan, 0.0, 1.0), (1.0, math.nan, 1.0), (-1.0, math.inf, 1.0),
    (10.0, 400.0, math.inf), (-10.0, 401.0, -math.inf), (-10.0, 400.0, math.inf), (0.5, math.inf, 0.0),
    (2.0, -math.inf, 0.0), (-math.inf, 3.0, -math.inf), (-math.inf, -3.0, -0.0),
]


@pytest.mark.parametrize(("x", "y", "expected"), POW_CASES)
def test_numpy_power_follows_c(x, y, expected):
    # math.powf is np.power in both numpy executors (on numpy scalars in the loops executor's scalar nests)
    with np.errstate(all="ignore"):
        for dtype in (np.float64, np.float32):
            got = np.power(dtype(x), dtype(y))
            np.testing.assert_equal(got, dtype(expected))
            assert math.isnan(expected) or math.copysign(1, got) == math.copysign(1, expected)


BODY_OPS = """
func.func @main(%x: tensor<6xf32>, %y: tensor<6xf32>, %i: tensor<6xi32>) -> (tensor<6xf32>, tensor<6xf32>, tensor<6xi32>) {
  %e0 = tensor.empty() : tensor<6xf32>
  %erf = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<6xf32>) outs(%e0 : tensor<6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.erf %a : f32
    linalg.yield %r : f32
  } -> tensor<6xf32>
  %e1 = tensor.empty() : tensor<6xf32>
  %pow = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %y : tensor<6xf32>, tensor<6xf32>) outs(%e1 : tensor<6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = math.powf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<6xf32>
  %e2 = tensor.empty() : tensor<6xi32>
  %abs = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%i : tensor<6xi32>) outs(%e2 : tensor<6xi32>) {
  ^bb0(%a: i32, %o: i32):
    %r = math.absi %a : i32
    linalg.yield %r : i32
  } -> tensor<6xi32>
  func.return %erf, %pow, %abs : tensor<6xf32>, tensor<6xf32>, tensor<6xi32>
}
"""


@pytest.mark.parametrize("level", LEVELS)
def test_erf_powf_absi_in_linalg_bodies(level):
    x = np.array([-2.0, -2.0, -8.0, 0.0, -0.0, 0.5], np.float32)
    y = np.array([3.0, 0.5, 1 / 3, -1.0, -1.0, 2.0], np.float32)
    i = np.array([-7, 7, 0, -1, 2147483647, -2147483647], np.int32)
    with np.errstate(divide="ignore", invalid="ignore"):  # the infinities and NaNs are the point
        erf_out, pow_out, abs_out = run_at(BODY_OPS, level, {"x": x, "y": y, "i": i})
    np.testing.assert_allclose(erf_out, [math.erf(float(v)) for v in x], rtol=1e-6)
    # Negative bases: integer exponents keep the sign, fractional ones give NaN (never complex).
    np.testing.assert_array_equal(pow_out, np.array([-8.0, np.nan, np.nan, np.inf, -np.inf, 0.25], np.float32))
    np.testing.assert_array_equal(abs_out, [7, 7, 0, 1, 2147483647, 2147483647])
    assert (erf_out.dtype, pow_out.dtype, abs_out.dtype) == (np.float32, np.float32, np.int32)
