"""Elementwise steps, fused elementwise tails, pools and pads compute what numpy written here
computes, compiled (split over the C threads) or on numpy: offsets (the copy into a padded buffer),
broadcasts (a bias) and chains writing in place."""

from __future__ import annotations

import numpy as np
import module_builder
from module_builder import IDENTITY4, generic4
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.runtime.executor.linalg_exec import LinalgProgram
from xrelay.runtime.executor.plan import FusedTail

SHAPE = (1, 64, 66, 8)  # 33792 points: above the `min_points` these tests set, so split


def formed(module, placed: bool = True):
    """`module_builder.formed` with kernels of 2^15 points and more split, so the split paths run on
    small, fast arrays."""
    return module_builder.formed(module, placed, min_points=1 << 15)


T = "tensor<1x64x66x8xf32>"
P = "tensor<1x66x68x8xf32>"
ID = IDENTITY4
PAR = '["parallel", "parallel", "parallel", "parallel"]'

SOURCE = f"""
func.func @main(%x: {T}, %bias: tensor<8xf32>) -> {P} {{
  {generic4("a", [("x", T)], T, ("%two = arith.constant 2.0 : f32", "%s = arith.mulf %in0, %two : f32"))}
  {generic4("b", [("a", T), ("bias", "tensor<8xf32>")], T, "%s = arith.addf %in0, %in1 : f32",
            [ID, "affine_map<(d0, d1, d2, d3) -> (d3)>"])}
  {generic4("c", [("b", T)], T, ("%zero = arith.constant 0.0 : f32", "%s = arith.maximumf %in0, %zero : f32"))}
  %e3 = tensor.empty() : {P}
  %zero = arith.constant 0.0 : f32
  %f = linalg.fill ins(%zero : f32) outs(%e3 : {P}) -> {P}
  %p = linalg.generic {{indexing_maps = [{ID}, affine_map<(d0, d1, d2, d3) -> (d0, d1 + 1, d2 + 1, d3)>],
      iterator_types = {PAR}}} ins(%c : {T}) outs(%f : {P}) {{
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }} -> {P}
  func.return %p : {P}
}}
"""


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("native", ["1", "0"])
def test_split_and_fused_elementwise_steps_match_numpy(threads, native, blas_workers, monkeypatch):
    monkeypatch.setenv("XRELAY_NATIVE", native)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    bias = rng.standard_normal(8).astype(np.float32)
    expected = np.zeros((1, 66, 68, 8), np.float32)
    expected[:, 1:65, 1:67] = np.maximum(2 * x + bias, 0)
    program = LinalgProgram(formed(Parser(make_context(), SOURCE).parse_module()))
    tails = [step for step in program.steps if isinstance(step, FusedTail)]
    # x*2, +bias and ReLU write over one buffer: one tail of three; the fill and the padded copy
    # (whose loops differ from the fill's) are tails of one each.
    assert sorted(len(t.members) for t in tails) == [1, 1, 3]
    blas_workers(threads)
    for _ in range(2):
        np.testing.assert_allclose(program(x, bias)[0], expected, rtol=1e-6)


def conv_nhwc_hwcf(data_shape: tuple[int, ...], weight_shape: tuple[int, ...], stride: int, init: float) -> str:
    """`@main(%x, %w)`: linalg.conv_2d_nhwc_hwcf (undilated, unpadded, at `stride`) accumulating into
    an output filled with `init`."""
    (n, h, w, _), (kh, kw, _, f) = data_shape, weight_shape
    x = f"tensor<{'x'.join(map(str, data_shape))}xf32>"
    k = f"tensor<{'x'.join(map(str, weight_shape))}xf32>"
    y = f"tensor<{n}x{(h - kh) // stride + 1}x{(w - kw) // stride + 1}x{f}xf32>"
    return f"""
func.func @main(%x: {x}, %w: {k}) -> {y} {{
  %e = tensor.empty() : {y}
  %init_value = arith.constant {init!r} : f32
  %init = linalg.fill ins(%init_value : f32) outs(%e : {y}) -> {y}
  %y = linalg.conv_2d_nhwc_hwcf {{strides = dense<{stride}> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}}
      ins(%x, %w : {x}, {k}) outs(%init : {y}) -> {y}
  func.return %y : {y}
}}
"""


def conv_reference(x: np.ndarray, w: np.ndarray, stride: int, init: float) -> np.ndarray:
    """`init` plus the conv, in float64: for each kernel tap, the strided data it meets times its (C, F) matrix."""
    (n, h, wd, _), (kh_size, kw_size, _, f) = x.shape, w.shape
    oh, ow = (h - kh_size) // stride + 1, (wd - kw_size) // stride + 1
    expected = np.full((n, oh, ow, f), init, np.float64)
    for kh in range(kh_size):
        for kw in range(kw_size):
            taps = x[:, kh:kh + (oh - 1) * stride + 1:stride, kw:kw + (ow - 1) * stride + 1:stride]
            expected += np.einsum("nhwc,cf->nhwf", taps.astype(np.float64), w[kh, kw])
    return expected


@pytest.mark.parametrize("threads", [1, 2])
def test_im2col_conv_split_by_output_rows_accumulates_into_its_init(threads, blas_workers):
    """Two images (a part's rows are not contiguous in the output), stride 2, a 3-channel input whose
    (kw, c) runs merge; the output starts at 1, so the product is added, not written. Big enough
    (2*30*30 rows x 75 x 64) for the GEMM to be split by output rows."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 64, 64, 3)).astype(np.float32)
    w = rng.standard_normal((5, 5, 3, 64)).astype(np.float32)
    expected = conv_reference(x, w, 2, 1.0)
    assert expected.shape == (2, 30, 30, 64)
    program = LinalgProgram(formed(Parser(make_context(), conv_nhwc_hwcf(x.shape, w.shape, 2, 1.0)).parse_module()))
    blas_workers(threads)
    np.testing.assert_allclose(program(x, w)[0], expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("threads", [1, 2])
def test_big_im2col_conv_on_numpy_matches_numpy(threads, monkeypatch, blas_workers):
    """The numpy kernel (no native one): a patch matrix (2*30*30 x 75) much bigger than its weight
    matrix (75 x 64), added to the init."""
    monkeypatch.setenv("XRELAY_NATIVE", "0")
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 64, 64, 3)).astype(np.float32)
    w = rng.standard_normal((5, 5, 3, 64)).astype(np.float32)
    expected = conv_reference(x, w, 2, 1.0)
    program = LinalgProgram(formed(Parser(make_context(), conv_nhwc_hwcf(x.shape, w.shape, 2, 1.0)).parse_module()))
    blas_workers(threads)
    np.testing.assert_allclose(program(x, w)[0], expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("native", ["0", "1"])
@pytest.mark.parametrize("init", [0.0, 1.5])
def test_im2col_conv_reads_its_arrays_again_on_every_run(native, init, monkeypatch):
    """A planned program's im2col conv given the same arrays (data changed in place, a weight argument
    changed) and then new ones, and an unplanned program's: every run matches numpy (written, or added
    to 1.5)."""
    monkeypatch.setenv("XRELAY_NATIVE", native)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 9, 11, 5)).astype(np.float32)
    w = rng.standard_normal((3, 3, 5, 7)).astype(np.float32)
    text = conv_nhwc_hwcf(x.shape, w.shape, 2, init)
    program = LinalgProgram(formed(Parser(make_context(), text).parse_module()))
    np.testing.assert_allclose(program(x, w)[0], conv_reference(x, w, 2, init), rtol=1e-4, atol=1e-4)
    x[...] = rng.standard_normal(x.shape)
    w *= -2.0  # a weight that is an argument is read again on every run
    np.testing.assert_allclose(program(x, w)[0], conv_reference(x, w, 2, init), rtol=1e-4, atol=1e-4)
    other = rng.standard_normal(x.shape).astype(np.float32)
    np.testing.assert_allclose(program(other, w)[0], conv_reference(other, w, 2, init), rtol=1e-4, atol=1e-4)
    unplanned = LinalgProgram(formed(Parser(make_context(), text).parse_module(), placed=False))
    for _ in range(2):
        np.testing.assert_allclose(unplanned(x, w)[0], conv_reference(x, w, 2, init), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("native", ["0", "1"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("init", [0.0, 1.5])
def test_im2col_conv_with_fewer_pixels_than_filters_matches_numpy(native, threads, init, monkeypatch, blas_workers):
    """20 output pixels, 261 filters (the native kernel splits the filters), written (zero init, fill
    dropped) or added (1.5)."""
    monkeypatch.setenv("XRELAY_NATIVE", native)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 6, 7, 256)).astype(np.float32)
    w = rng.standard_normal((3, 3, 256, 261)).astype(np.float32)
    expected = conv_reference(x, w, 1, init)
    assert expected.shape == (1, 4, 5, 261)
    program = LinalgProgram(formed(Parser(make_context(), conv_nhwc_hwcf(x.shape, w.shape, 1, init)).parse_module()))
    blas_workers(threads)
    np.testing.assert_allclose(program(x, w)[0], expected, rtol=1e-4, atol=1e-3)


POOL = """
func.func @main(%x: tensor<1x65x67x16xf32>) -> tensor<1xOHxOWx16xf32> {
  %init = arith.constant dense<0.25> : tensor<1xOHxOWx16xf32>
  %window = tensor.empty() : tensor<3x2xf32>
  %0 = linalg.OP {dilations = dense<[1, 2]> : vector<2xi64>, strides = dense<[S, S]> : vector<2xi64>}
      ins(%x, %window : tensor<1x65x67x16xf32>, tensor<3x2xf32>) outs(%init : tensor<1xOHxOWx16xf32>)
      -> tensor<1xOHxOWx16xf32>
  func.return %0 : tensor<1xOHxOWx16xf32>
}
"""


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["pooling_nhwc_max", "pooling_nhwc_sum"])
@pytest.mark.parametrize("stride", [1, 2])
@pytest.mark.parametrize("native", ["1", "0"])
def test_pooling_splits_its_output_rows_over_the_workers(threads, op, stride, native, blas_workers, monkeypatch):
    """A 3x2 window (columns dilated by 2) at stride 1 or 2 over an odd-sized NHWC input, compiled
    (each C thread reads the input rows its output rows' windows reach, past its share of rows) and on
    numpy; the accumulator starts at 0.25."""
    from xrelay.runtime.executor.plan import split_loop

    monkeypatch.setenv("XRELAY_NATIVE", native)
    oh, ow = (65 - 3) // stride + 1, (67 - 3) // stride + 1
    text = (POOL.replace("OH", str(oh)).replace("OW", str(ow)).replace("OP", op).replace("S", str(stride)))
    program = LinalgProgram(formed(Parser(make_context(), text).parse_module()))
    pool = next(o for o in program.func.walk() if o.name == f"linalg.{op}")
    assert split_loop(pool, pool.get_static_loop_ranges())[0] == 1  # the output rows
    x = np.random.default_rng(3).standard_normal((1, 65, 67, 16)).astype(np.float32)
    expected = np.full((1, oh, ow, 16), 0.25, np.float64)
    for i in range(oh):
        for j in range(ow):
            window = x[0, i * stride:i * stride + 3, j * stride:j * stride + 3:2]
            if op.endswith("sum"):
                expected[0, i, j] += window.sum(axis=(0, 1))
            else:
                expected[0, i, j] = np.maximum(0.25, window.max(axis=(0, 1)))
    blas_workers(threads)
    np.testing.assert_allclose(program(x)[0], expected, rtol=1e-5, atol=1e-5)


def pad_by_half(source: str, low: str, high: str, result: str) -> str:
    """MLIR text: `%p`, `%x` (of type `source`) padded by `low` and `high` with 0.5 to `result`."""
    return f"""%v = arith.constant 0.5 : f32
  %p = tensor.pad %x low[{low}] high[{high}] {{
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %v : f32
  }} : {source} to {result}"""


PAD = f"""
func.func @main(%x: tensor<1x70x80x8xf32>) -> tensor<1x73x81x8xf32> {{
  {pad_by_half("tensor<1x70x80x8xf32>", "0, 2, 0, 0", "0, 1, 1, 0", "tensor<1x73x81x8xf32>")}
  func.return %p : tensor<1x73x81x8xf32>
}}
"""


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("native", ["1", "0"])
def test_tensor_pad_copies_its_interior_rows_on_the_workers(threads, native, blas_workers, monkeypatch):
    monkeypatch.setenv("XRELAY_NATIVE", native)
    program = LinalgProgram(formed(Parser(make_context(), PAD).parse_module()))
    x = np.random.default_rng(4).standard_normal((1, 70, 80, 8)).astype(np.float32)
    expected = np.pad(x, ((0, 0), (2, 1), (0, 1), (0, 0)), constant_values=0.5)
    blas_workers(threads)
    for _ in range(2):
        np.testing.assert_array_equal(program(x)[0], expected)


def generic2(result: str, value: str, value_type: str, out: str, body: list[str], in_map: str = "(i, j)") -> str:
    """MLIR text: `%<result>`, an all-parallel 2-D `linalg.generic` of `%<value>` (read through `in_map`)
    into `%<out>`; its block arguments are %v and %o, and `body` computes the yielded %r."""
    lines = "\n".join(f"    {line}" for line in body)
    return f"""%{result} = linalg.generic {{indexing_maps = [affine_map<(i, j) -> {in_map}>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}} ins(%{value} : {value_type}) outs(%{out} : tensor<4x6xf32>) {{
  ^bb0(%v: f32, %o: f32):
{lines}
    linalg.yield %r : f32
  }} -> tensor<4x6xf32>"""


ONE_UFUNC = f"""
func.func @main(%x: tensor<4x6xf32>, %y: tensor<6x4xf32>, %s: f32) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {{
  %c = arith.constant 1.5 : f32
  %e0 = tensor.empty() : tensor<4x6xf32>
  %init = linalg.fill ins(%c : f32) outs(%e0 : tensor<4x6xf32>) -> tensor<4x6xf32>
  {generic2("plus_out", "x", "tensor<4x6xf32>", "init", ["%r = arith.addf %v, %o : f32"])}
  %e1 = tensor.empty() : tensor<4x6xf32>
  {generic2("times_captured", "y", "tensor<6x4xf32>", "e1", ["%r = arith.mulf %s, %v : f32"], "(j, i)")}
  %e2 = tensor.empty() : tensor<4x6xf32>
  {generic2("negated", "x", "tensor<4x6xf32>", "e2", ["%r = arith.negf %v : f32"])}
  %e3 = tensor.empty() : tensor<4x6xf32>
  {generic2("two_ops", "x", "tensor<4x6xf32>", "e3", ["%t = math.absf %v : f32", "%r = arith.addf %t, %c : f32"])}
  func.return %plus_out, %times_captured, %negated, %two_ops : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}}
"""


def test_one_ufunc_bodies_read_inputs_outputs_constants_and_captured_values(monkeypatch):
    """Bodies that are one ufunc run without the general body evaluator (`ufunc_program`):
    over an input and the output's initial value, a captured scalar times a transposed input, a
    unary op; a body of two ops takes the general path. All against numpy written here."""
    import xrelay.runtime.kernels.linalg_structured as structured

    made = []
    original = structured.ufunc_program
    monkeypatch.setattr(structured, "ufunc_program", lambda *args: made.append(original(*args)) or made[-1])
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    y = rng.standard_normal((6, 4)).astype(np.float32)
    program = LinalgProgram(formed(Parser(make_context(), ONE_UFUNC).parse_module()))
    plus_out, times_captured, negated, two_ops = program(x, y, np.float32(-2.5))
    np.testing.assert_allclose(plus_out, x + 1.5, rtol=1e-6)
    np.testing.assert_allclose(times_captured, -2.5 * y.T, rtol=1e-6)
    np.testing.assert_allclose(negated, -x, rtol=1e-6)
    np.testing.assert_allclose(two_ops, np.abs(x) + 1.5, rtol=1e-6)
    # The fill is one copy; the two-op body, whose second op reads a captured value, is the general
    # path's (absf is no epilogue step: split-elementwise-bodies, in `formed`, leaves the body whole).
    assert [fn is not None for fn in made] == [True, True, True, True, False]


@pytest.mark.parametrize("planned", [True, False])
def test_a_tail_on_numpy_reads_its_arrays_again_on_every_run(planned, monkeypatch):
    """Without the compiled kernel a tail runs member by member on numpy and keeps no call: runs with
    the same arrays (changed in place) and with new ones compute from what they hold."""
    monkeypatch.setenv("XRELAY_NATIVE", "0")  # the numpy kernel's calls
    program = LinalgProgram(formed(Parser(make_context(), SOURCE).parse_module(), placed=planned))
    (tail,) = [step for step in program.steps if isinstance(step, FusedTail) and len(step.members) == 3]
    rng = np.random.default_rng(1)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    bias = rng.standard_normal(8).astype(np.float32)

    def expected():
        padded = np.zeros((1, 66, 68, 8), np.float32)
        padded[:, 1:65, 1:67] = np.maximum(2 * x + bias, 0)
        return padded

    for run in range(4):
        if run == 2:  # new argument arrays
            x, bias = rng.standard_normal(SHAPE).astype(np.float32), rng.standard_normal(8).astype(np.float32)
        else:  # the same arrays, new values
            x[...] = rng.standard_normal(SHAPE)
            bias[...] = rng.standard_normal(8)
        np.testing.assert_allclose(program(x, bias)[0], expected(), rtol=1e-6)
        assert tail.kept is None or tail.kept[1] is None  # no call kept


@pytest.mark.parametrize("native", ["1", "0"])
def test_a_tail_that_splits_keeps_only_a_compiled_call(blas_workers, monkeypatch, native):
    """On numpy a tail keeps no call; compiled, it keeps its one call, which splits itself."""
    from xrelay.runtime.native.conv_kernels import available

    monkeypatch.setenv("XRELAY_NATIVE", native)
    program = LinalgProgram(formed(Parser(make_context(), SOURCE).parse_module()))
    (tail,) = [step for step in program.steps if isinstance(step, FusedTail) and len(step.members) == 3]
    blas_workers(2)
    x = np.ones(SHAPE, np.float32)
    bias = np.arange(8, dtype=np.float32) - 4
    for _ in range(2):
        got = program(x, bias)[0]
        np.testing.assert_allclose(got[0, 1, 1], np.maximum(2 + bias, 0))
    if native == "1" and available():
        assert tail.kept is not None and tail.kept[1] is not None
    else:
        assert tail.kept is None or tail.kept[1] is None  # no call kept


PAD_OF_ONE = f"""
func.func @main(%x: tensor<1x5x4x3xf32>) -> tensor<1x7x6x6xf32> {{
  {pad_by_half("tensor<1x5x4x3xf32>", "0, 1, 1, 2", "0, 1, 1, 1", "tensor<1x7x6x6xf32>")}
  %e = tensor.empty() : tensor<1x7x6x6xf32>
  %r = linalg.generic {{indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}} ins(%p : tensor<1x7x6x6xf32>) outs(%e : tensor<1x7x6x6xf32>) {{
  ^bb0(%in: f32, %o: f32):
    %t = arith.addf %in, %in : f32
    linalg.yield %t : f32
  }} -> tensor<1x7x6x6xf32>
  func.return %r : tensor<1x7x6x6xf32>
}}
"""


def test_a_pad_of_one_on_each_side_fills_both_sides_of_its_border():
    """Pads of one row on each side fill their border in one strided fill per axis (pad_step); the
    planned buffer, filled with NaN before every run, reads back with its border and interior set."""
    program = LinalgProgram(formed(Parser(make_context(), PAD_OF_ONE).parse_module()))
    (pad,) = [step for step in program.steps if type(step).__name__ == "PadStep"]
    assert len(pad.border) == 4  # H and W: one strided fill each; C (2 low, 1 high): two
    rng = np.random.default_rng(5)
    for _ in range(2):
        for array in program._planned:
            if array is not None:
                array[...] = np.nan
        x = rng.standard_normal((1, 5, 4, 3)).astype(np.float32)
        np.testing.assert_array_equal(program(x)[0], 2 * np.pad(x, ((0, 0), (1, 1), (1, 1), (2, 1)), constant_values=0.5))
