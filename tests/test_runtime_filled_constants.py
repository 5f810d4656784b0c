"""A clip's constants read from filled arrays (runtime/filled_constants.py) give what numpy's
scalar maximum/minimum give (written here), NaN, infinities and signed zeros included, whole and
split over threads; the arrays are read-only views of one shared buffer per value."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.runtime import filled_constants
from xrelay.runtime.filled_constants import filled
from xrelay.runtime.linalg_exec import LinalgProgram

T = "tensor<1x64x66x8xf32>"
ID = "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>"
PAR = '["parallel", "parallel", "parallel", "parallel"]'


def extremum(op: str, constant: str, source: str, result: str) -> str:
    return f"""
  %e{result} = tensor.empty() : {T}
  %{result} = linalg.generic {{indexing_maps = [{ID}, {ID}], iterator_types = {PAR}}} ins(%{source} : {T}) outs(%e{result} : {T}) {{
  ^bb0(%v: f32, %o: f32):
    %c = arith.constant {constant} : f32
    %r = arith.{op} %v, %c : f32
    linalg.yield %r : f32
  }} -> {T}"""


# relu6(x) as max(x, 0) then min(., 6), and min(1.5, x) with the constant first
CLIP = f"""
func.func @main(%x: {T}) -> ({T}, {T}) {{{extremum("maximumf", "0.0", "x", "a")}{extremum("minimumf", "6.0", "a", "b")}
  %ec = tensor.empty() : {T}
  %c = linalg.generic {{indexing_maps = [{ID}, {ID}], iterator_types = {PAR}}} ins(%x : {T}) outs(%ec : {T}) {{
  ^bb0(%v: f32, %o: f32):
    %k = arith.constant 1.5 : f32
    %r = arith.minimumf %k, %v : f32
    linalg.yield %r : f32
  }} -> {T}
  func.return %b, %c : {T}, {T}
}}
"""


def test_filled_arrays_are_read_only_views_of_one_buffer_per_value():
    a = filled(0.0, (3, 4), np.dtype(np.float32))
    b = filled(np.float32(0), (2, 5), np.dtype(np.float32))
    assert a.shape == (3, 4) and a.flags.c_contiguous and not a.flags.writeable
    assert a.dtype == np.float32 and not a.any()
    assert np.shares_memory(a, b)  # the same value and dtype share their buffer
    assert np.array_equal(filled(6.0, (2, 3), np.dtype(np.float32)), np.full((2, 3), 6.0, np.float32))
    big = filled(0.0, (1000,), np.dtype(np.float32))  # grows; the earlier views stay valid
    assert big.size == 1000 and not big.any() and not a.any()
    assert filled(-0.0, (4,), np.dtype(np.float32)).tobytes() == np.full(4, -0.0, np.float32).tobytes()
    assert filled(0.0, (2,), np.dtype(np.float64)).dtype == np.float64


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fill", [True, False])
def test_clips_read_filled_constants_and_match_numpy(threads, fill, monkeypatch, blas_workers):
    """Every extremum of the program gets an array for its constant while FILLED_EXTREMA (the scalar
    otherwise), and each run matches numpy's scalar extrema bit for bit, also for NaN, +-inf and -0.0."""
    import xrelay.runtime.linalg_structured as structured
    from xrelay.runtime import plan

    monkeypatch.setattr(filled_constants, "FILLED_EXTREMA", fill)
    monkeypatch.setattr(plan, "MIN_SPLIT_ELEMENTS", 1 << 15)  # 33792 points: split on 2 threads
    seen = []
    original = structured.fill_scalars
    monkeypatch.setattr(structured, "fill_scalars",
                        lambda ufunc, args, out: seen.append((ufunc, original(ufunc, args, out))) or seen[-1][1])
    blas_workers(threads)
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((1, 64, 66, 8)) * 8).astype(np.float32)
    x.flat[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 6.0]
    for plan_memory in (True, False):
        program = LinalgProgram(Parser(make_context(), CLIP).parse_module(), plan=plan_memory)
        for _ in range(3):
            relu6, low = program(x)
            assert relu6.tobytes() == np.minimum(np.maximum(x, np.float32(0)), np.float32(6)).tobytes()
            assert low.tobytes() == np.minimum(np.float32(1.5), x).tobytes()
    extrema = [args for ufunc, args in seen if ufunc in (np.maximum, np.minimum)]
    assert extrema
    for args in extrema:  # one operand the op's input (writeable), the other its constant
        read_only = [a for a in args if isinstance(a, np.ndarray) and a.ndim > 0 and not a.flags.writeable]
        scalars = [a for a in args if not (isinstance(a, np.ndarray) and a.ndim > 0)]
        assert (len(read_only), len(scalars)) == ((1, 0) if fill else (0, 1))
