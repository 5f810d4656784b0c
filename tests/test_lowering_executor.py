"""The vectorised linalg executor on hand-written linalg IR, against numpy written here."""

from __future__ import annotations

import numpy as np
import pytest
from module_builder import formed
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.lowering import LinalgToLoops, LinalgBufferize
from xrelay.runtime.executor.linalg_exec import ExecutionError
from xrelay.runtime.executor.linalg_exec import run_linalg
from xrelay.runtime.reference.loops_exec import run_loops


def parse(text: str):
    return Parser(make_context(), text).parse_module()


def run_all_levels(text: str, inputs: dict) -> list[list[np.ndarray]]:
    """Outputs at the tensor level, after linalg-bufferize, and after linalg-to-loops."""
    module = parse(text)
    memref = LinalgBufferize()(module)
    return [run_linalg(module, inputs), run_linalg(memref, inputs), run_loops(LinalgToLoops()(memref), inputs)]


def test_zero_init_shared_with_another_user_is_not_skipped():
    text = """
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
      %z = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<2x2xf32>
      %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
      %m = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>,
          affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%a, %b : tensor<2x3xf32>, tensor<3x2xf32>) outs(%f : tensor<2x2xf32>) {
      ^bb0(%x: f32, %y: f32, %acc: f32):
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32
      } -> tensor<2x2xf32>
      func.return %m, %f : tensor<2x2xf32>, tensor<2x2xf32>
    }
    """
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(6, dtype=np.float32).reshape(3, 2) - 2
    for product, zeros in run_all_levels(text, {"a": a, "b": b}):
        np.testing.assert_allclose(product, a @ b)
        np.testing.assert_array_equal(zeros, np.zeros((2, 2)))


def test_nonzero_init_accumulates():
    text = """
    func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<f32> {
      %one = arith.constant 1.5 : f32
      %e = tensor.empty() : tensor<f32>
      %f = linalg.fill ins(%one : f32) outs(%e : tensor<f32>) -> tensor<f32>
      %d = linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> (k)>, affine_map<(k) -> ()>],
          iterator_types = ["reduction"]} ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%f : tensor<f32>) {
      ^bb0(%x: f32, %y: f32, %acc: f32):
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %p, %acc : f32
        linalg.yield %s : f32
      } -> tensor<f32>
      func.return %d : tensor<f32>
    }
    """
    a = np.array([1, 2, 3, 4], np.float32)
    b = np.array([0.5, -1, 2, 1], np.float32)
    for (dot,) in run_all_levels(text, {"a": a, "b": b}):
        np.testing.assert_allclose(dot, 1.5 + a @ b)


def test_floordiv_maps_index_and_product_reduction():
    # out[i] = prod_j (x[i floordiv 2, j] + index i), over a map with floordiv (fancy-indexing path).
    text = """
    func.func @main(%x: tensor<2x3xf32>) -> tensor<4xf32> {
      %one = arith.constant 1.0 : f32
      %e = tensor.empty() : tensor<4xf32>
      %f = linalg.fill ins(%one : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i floordiv 2, j)>, affine_map<(i, j) -> (i)>],
          iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x3xf32>) outs(%f : tensor<4xf32>) {
      ^bb0(%v: f32, %acc: f32):
        %i = linalg.index 0 : index
        %ii = arith.index_cast %i : index to i64
        %fi = arith.sitofp %ii : i64 to f32
        %t = arith.addf %v, %fi : f32
        %p = arith.mulf %acc, %t : f32
        linalg.yield %p : f32
      } -> tensor<4xf32>
      func.return %r : tensor<4xf32>
    }
    """
    x = np.array([[1, 2, 3], [0.5, 1, -1]], np.float32)
    expected = np.array([np.prod(x[i // 2] + i) for i in range(4)], np.float32)
    (out,) = run_linalg(parse(text), {"x": x})
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_a_reduction_body_that_is_not_a_fold_runs_point_by_point():
    # `yield %v` keeps the last element the reduction loop visits (no numpy fold expresses it).
    text = """
    func.func @main(%x: tensor<4xf32>) -> tensor<f32> {
      %e = tensor.empty() : tensor<f32>
      %r = linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> ()>],
          iterator_types = ["reduction"]} ins(%x : tensor<4xf32>) outs(%e : tensor<f32>) {
      ^bb0(%v: f32, %acc: f32):
        linalg.yield %v : f32
      } -> tensor<f32>
      func.return %r : tensor<f32>
    }
    """
    (out,) = run_linalg(parse(text), {"x": np.array([3, 1, 4, 1.5], np.float32)})
    assert out.shape == () and out == np.float32(1.5)


# ---------------------------------------------------------------- convolutions by Winograd


def reference_conv3x3(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    """NCHW x OIHW stride-1 3x3 convolution in float64, one shifted product per tap."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = xp.shape[2] - 2, xp.shape[3] - 2
    return sum(np.einsum("nchw,fc->nfhw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j].astype(np.float64))
               for i in range(3) for j in range(3))


def conv_module(x_shape, w_shape, data_layout: str, kernel_layout: str):
    from xdsl.dialects import func
    from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f32
    from xdsl.ir import Block, Region

    from xrelay.dialects import nn

    types = [TensorType(f32, s) for s in (x_shape, w_shape)]
    block = Block(arg_types=types)
    block.args[0].name_hint, block.args[1].name_hint = "x", "w"
    conv = nn.make("nn.conv2d", list(block.args), padding=(1, 1, 1, 1), data_layout=data_layout,
                   kernel_layout=kernel_layout)
    block.add_ops([conv, func.ReturnOp(conv.results[0])])
    return ModuleOp([func.FuncOp("main", FunctionType.from_lists(types, [conv.results[0].type]), Region(block))])


@pytest.fixture
def winograd_calls(monkeypatch):
    """The tile sizes of the Winograd convolutions the linalg executor runs, in order."""
    import xrelay.runtime.kernels.linalg_conv as linalg_conv
    from xrelay.runtime.native.build import native_enabled

    if not native_enabled():
        pytest.skip("Winograd runs only compiled: with XRELAY_NATIVE=0 choose-conv-algorithm picks im2col")

    calls = []
    original = linalg_conv.native_winograd

    def counting(x, u, m, *args):
        calls.append(m)
        return original(x, u, m, *args)

    monkeypatch.setattr(linalg_conv, "native_winograd", counting)
    return calls


@pytest.mark.parametrize("layouts", [("NCHW", "OIHW"), ("NHWC", "HWIO"), ("NHWC", "OHWI"), ("HWCN", "IHWO")])
@pytest.mark.parametrize("hw, m", [((20, 32), 4), ((10, 18), 2), ((7, 7), None)])
def test_conv3x3_with_constant_weight_runs_by_winograd(layouts, hw, m, winograd_calls):
    from xrelay.frontend import bind_params_by_name
    from xrelay.lowering import lower

    data_layout, kernel_layout = layouts
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 8, *hw)).astype(np.float32)  # NCHW / OIHW here
    w = rng.standard_normal((9, 8, 3, 3)).astype(np.float32)
    xl = x.transpose(["NCHW".index(a) for a in data_layout])
    wl = w.transpose(["OIHW".index(a) for a in kernel_layout])
    expected = reference_conv3x3(x, w, 1).transpose(["NCHW".index(a) for a in data_layout])
    bound = bind_params_by_name(conv_module(xl.shape, wl.shape, data_layout, kernel_layout), {"w": wl})
    # Built (`choose-conv-algorithm` picks the tile), and op by op at the memref level (im2col).
    for module in (formed(lower(bound, to="linalg")), lower(bound, to="memref")):
        for _ in range(2):  # the second run reuses the transformed weight
            (got,) = run_linalg(module, {"x": xl})
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())
    # (a built program's second run may replay the kept native call instead of calling the runner)
    assert sorted(set(winograd_calls)) == ([] if m is None else [m])


def test_conv3x3_with_argument_weight_is_not_winograd(winograd_calls):
    # The weight may differ between runs: no transform is cached, the conv runs as im2col.
    from xrelay.lowering import lower

    rng = np.random.default_rng(4)
    module = lower(conv_module((1, 8, 20, 32), (9, 8, 3, 3), "NCHW", "OIHW"), to="linalg")
    x = rng.standard_normal((1, 8, 20, 32)).astype(np.float32)
    for _ in range(2):
        w = rng.standard_normal((9, 8, 3, 3)).astype(np.float32)
        (got,) = run_linalg(module, {"x": x, "w": w})
        np.testing.assert_allclose(got, reference_conv3x3(x, w, 1), rtol=1e-4, atol=1e-5)
    assert winograd_calls == []


def test_winograd_conv_accumulates_into_a_nonzero_init(winograd_calls):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 8, 22, 34)).astype(np.float32)
    w = rng.standard_normal((8, 8, 3, 3)).astype(np.float32)
    literal = str(w.tolist())  # nested lists of the exact float32 values
    text = f"""
    func.func @main(%x: tensor<1x8x22x34xf32>) -> tensor<1x8x20x32xf32> {{
      %w = arith.constant dense<{literal}> : tensor<8x8x3x3xf32>
      %half = arith.constant 0.5 : f32
      %e = tensor.empty() : tensor<1x8x20x32xf32>
      %f = linalg.fill ins(%half : f32) outs(%e : tensor<1x8x20x32xf32>) -> tensor<1x8x20x32xf32>
      %c = linalg.conv_2d_nchw_fchw {{strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}}
          ins(%x, %w : tensor<1x8x22x34xf32>, tensor<8x8x3x3xf32>) outs(%f : tensor<1x8x20x32xf32>) -> tensor<1x8x20x32xf32>
      func.return %c : tensor<1x8x20x32xf32>
    }}
    """
    (got,) = run_linalg(formed(parse(text)), {"x": x})
    expected = 0.5 + reference_conv3x3(x, w, 0)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())
    assert winograd_calls == [4]  # 5 x 8 tiles of 4x4


def test_loop_view_matches_indexing_for_contiguous_and_strided_operands():
    from xdsl.ir.affine import AffineExpr, AffineMap

    from xrelay.runtime.kernels.affine_views import LoopView

    # (i, j, k) -> (i, 2 * j + k + 1): a strided window with a constant offset.
    i, j, k = (AffineExpr.dimension(n) for n in range(3))
    view = LoopView(AffineMap(3, 0, (i, j * 2 + k + 1)), (2, 3, 2))
    base = np.arange(2 * 9, dtype=np.float32).reshape(2, 9)
    expected = np.array([[[base[a, 2 * b + c + 1] for c in range(2)] for b in range(3)] for a in range(2)])
    for operand in (base, np.asfortranarray(base), base[:, ::-1][:, ::-1]):  # contiguous, then not
        np.testing.assert_array_equal(view(operand), expected)
    target = base.copy()
    view(target, writeable=True)[...] = -1  # writes land in the operand, on the window only
    untouched = [0, 7, 8]  # columns 2 * j + k + 1 cover 1 .. 6
    assert (target[:, untouched] == base[:, untouched]).all() and (target[:, 1:7] == -1).all()
    with pytest.raises(ExecutionError, match=r"reaches outside an operand of shape \(2, 0\)"):
        view(np.zeros((2, 0), np.float32))


def test_elementwise_ops_write_over_inputs_only_when_nobody_else_reads_them():
    # %a is written over by %b (its only reader); %x (an argument), %b (read by %c and %d) and
    # %c (returned, and read by %e) must keep their values.
    def unary(name, src, body):
        return f"""
      %e{name} = tensor.empty() : tensor<4xf32>
      %{name} = linalg.generic {{indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
          iterator_types = ["parallel"]}} ins(%{src} : tensor<4xf32>) outs(%e{name} : tensor<4xf32>) {{
      ^bb0(%v: f32, %o: f32):
        %one = arith.constant 1.0 : f32
        {body}
      }} -> tensor<4xf32>"""

    text = f"""
    func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {{
      {unary("a", "x", "%r = arith.addf %v, %one : f32  linalg.yield %r : f32")}
      {unary("b", "a", "%r = arith.mulf %v, %v : f32  linalg.yield %r : f32")}
      {unary("c", "b", "%r = arith.addf %v, %one : f32  linalg.yield %r : f32")}
      {unary("d", "b", "%r = arith.addf %v, %v : f32  linalg.yield %r : f32")}
      {unary("e", "c", "%r = arith.negf %v : f32  linalg.yield %r : f32")}
      func.return %c, %d, %e : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    }}
    """
    x = np.array([0, 1, -2, 3], np.float32)
    kept = x.copy()
    for c, d, e in run_all_levels(text, {"x": x}):
        np.testing.assert_array_equal(c, (x + 1) ** 2 + 1)
        np.testing.assert_array_equal(d, 2 * (x + 1) ** 2)
        np.testing.assert_array_equal(e, -((x + 1) ** 2 + 1))
        np.testing.assert_array_equal(x, kept)


def test_tensor_pad_with_a_value_from_outside_its_body_at_every_level():
    # Upstream frontends write tensor.pad with the pad value captured from the enclosing function.
    text = """
    func.func @main(%x: tensor<2x3xf32>) -> tensor<3x6xf32> {
      %v = arith.constant 7.0 : f32
      %p = tensor.pad %x low[1, 2] high[0, 1] {
      ^bb0(%i: index, %j: index):
        tensor.yield %v : f32
      } : tensor<2x3xf32> to tensor<3x6xf32>
      func.return %p : tensor<3x6xf32>
    }
    """
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    expected = np.full((3, 6), 7.0, np.float32)
    expected[1:3, 2:5] = x
    for (padded,) in run_all_levels(text, {"x": x}):
        np.testing.assert_array_equal(padded, expected)


def test_tensor_pad_whose_value_depends_on_the_position_is_refused():
    text = """
    func.func @main(%x: tensor<2xf32>) -> tensor<3xf32> {
      %p = tensor.pad %x low[1] high[0] {
      ^bb0(%i: index):
        %f = arith.index_cast %i : index to i32
        %v = arith.sitofp %f : i32 to f32
        tensor.yield %v : f32
      } : tensor<2xf32> to tensor<3xf32>
      func.return %p : tensor<3xf32>
    }
    """
    with pytest.raises(ExecutionError, match="tensor.pad"):
        run_linalg(parse(text), {"x": np.zeros(2, np.float32)})


# ---------------------------------------------------------------- depthwise convolutions on numpy


def reference_depthwise(x: np.ndarray, w: np.ndarray, strides, pad) -> np.ndarray:
    """NCHW x (C, 1, KH, KW) depthwise convolution in float64, output pixel by output pixel."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    n, c, h, wd = xp.shape
    kh, kw = w.shape[2:]
    oh, ow = (h - kh) // strides[0] + 1, (wd - kw) // strides[1] + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            window = xp[:, :, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw]
            out[:, :, i, j] = (window * w[None, :, 0]).sum(axis=(2, 3))
    return out


@pytest.mark.parametrize("layouts", [("NCHW", "OIHW"), ("NHWC", "HWIO"), ("NHWC", "OHWI")])
@pytest.mark.parametrize("shape, kernel, strides, pad", [
    ((1, 5, 9, 7), (3, 3), (1, 1), (1, 1, 1, 1)),
    ((2, 3, 8, 11), (3, 2), (2, 1), (0, 1, 2, 0)),
    ((1, 6, 7, 7), (5, 5), (2, 2), (2, 2, 2, 2)),
    ((1, 24, 6, 5), (3, 3), (1, 1), (1, 1, 1, 1)),
    ((2, 17, 7, 8), (3, 3), (2, 2), (1, 0, 1, 1)),
])
def test_depthwise_conv_runs_tap_by_tap(layouts, shape, kernel, strides, pad, monkeypatch):
    monkeypatch.setenv("XRELAY_NATIVE", "0")  # which numpy kernel ran
    import xrelay.runtime.kernels.linalg_structured as structured
    from xrelay.frontend import bind_params_by_name
    from xrelay.lowering import lower

    ran = []  # per run of the conv
    import xrelay.runtime.kernels.linalg_conv as linalg_conv

    original = linalg_conv._depthwise_taps
    monkeypatch.setattr(linalg_conv, "_depthwise_taps", lambda *args: ran.append("taps") or original(*args))
    geometries = []  # each level's depthwise convolution
    recognise = structured.conv_geometry
    monkeypatch.setattr(structured, "conv_geometry", lambda *a: geometries.append(recognise(*a)) or geometries[-1])
    data_layout, kernel_layout = layouts
    rng = np.random.default_rng(6)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((shape[1], 1, *kernel)).astype(np.float32)
    xl = x.transpose(["NCHW".index(a) for a in data_layout])
    wl = w.transpose(["OIHW".index(a) for a in kernel_layout])
    expected = reference_depthwise(x, w, strides, pad).transpose(["NCHW".index(a) for a in data_layout])

    from xdsl.dialects import func
    from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f32
    from xdsl.ir import Block, Region

    from xrelay.dialects import nn

    types = [TensorType(f32, s) for s in (xl.shape, wl.shape)]
    block = Block(arg_types=types)
    block.args[0].name_hint, block.args[1].name_hint = "x", "w"
    conv = nn.make("nn.conv2d", list(block.args), padding=pad, strides=strides, groups=shape[1],
                   data_layout=data_layout, kernel_layout=kernel_layout)
    block.add_ops([conv, func.ReturnOp(conv.results[0])])
    module = ModuleOp([func.FuncOp("main", FunctionType.from_lists(types, [conv.results[0].type]), Region(block))])
    for bound, inputs in ((module, {"x": xl, "w": wl}), (bind_params_by_name(module, {"w": wl}), {"x": xl})):
        for level in ("linalg", "memref"):
            (got,) = run_linalg(lower(bound, to=level), inputs)
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert ran == ["taps"] * 4  # each level's
    assert len(geometries) == 4 and all(g is not None and g.depthwise for g in geometries)


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("channels_last", [False, True])
def test_depthwise_contraction_agrees_with_numpy(accumulate, channels_last):
    """A 3x3 depthwise contraction over loops (n, c, oh, ow, kh, kw), channels-last or first, written
    into or added to the output as a planned batched matmul (its data's patches copied)."""
    from xdsl.ir.affine import AffineMap

    from xrelay.runtime.kernels.contraction_plan import planned_contraction

    n, c, oh, ow = 1, 20, 4, 5
    if channels_last:
        data_map = AffineMap.from_callable(lambda n, c, h, w, i, j: (n, h + i, w + j, c))
        out_map = AffineMap.from_callable(lambda n, c, h, w, i, j: (n, h, w, c))
        weight_map = AffineMap.from_callable(lambda n, c, h, w, i, j: (i, j, c))
    else:
        data_map = AffineMap.from_callable(lambda n, c, h, w, i, j: (n, c, h + i, w + j))
        out_map = AffineMap.from_callable(lambda n, c, h, w, i, j: (n, c, h, w))
        weight_map = AffineMap.from_callable(lambda n, c, h, w, i, j: (c, i, j))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((n, c, oh + 2, ow + 2)).astype(np.float32)
    w = rng.standard_normal((c, 3, 3)).astype(np.float32)
    start = rng.standard_normal((n, c, oh, ow)).astype(np.float32)
    expected = sum(x[:, :, i:i + oh, j:j + ow] * w[None, :, i, j, None, None] for i in range(3) for j in range(3))
    expected = expected + start if accumulate else expected
    if channels_last:
        x, w, start, expected = x.transpose(0, 2, 3, 1), w.transpose(1, 2, 0), start.transpose(0, 2, 3, 1), \
            expected.transpose(0, 2, 3, 1)
    run = planned_contraction([data_map, weight_map, out_map], (n, c, oh, ow, 3, 3), 0, 1, 2)
    out = np.ascontiguousarray(start)
    assert run([np.ascontiguousarray(x), np.ascontiguousarray(w)], out, accumulate)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def reference_grouped(x: np.ndarray, w: np.ndarray, groups: int) -> np.ndarray:
    """NCHW x OIHW stride-1 unpadded grouped convolution in float64, group by group."""
    cg, og = x.shape[1] // groups, w.shape[0] // groups
    kh, kw = w.shape[2:]
    oh, ow = x.shape[2] - kh + 1, x.shape[3] - kw + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                out[:, g * og:(g + 1) * og] += np.einsum(
                    "nchw,fc->nfhw", x[:, g * cg:(g + 1) * cg, i:i + oh, j:j + ow].astype(np.float64),
                    w[g * og:(g + 1) * og, :, i, j].astype(np.float64))
    return out


@pytest.mark.parametrize("layouts", [("NCHW", "OIHW"), ("NHWC", "HWIO")])
@pytest.mark.parametrize("kernel", [(1, 1), (3, 2)])
def test_grouped_conv_multiplies_into_the_output_in_place(layouts, kernel, monkeypatch):
    """3 groups of 4 input and 5 output channels, 2 images: in NHWC im2col, one GEMM per group
    (`linalg_conv`, natively where the kernels build), no batched matmul; in NCHW on numpy. Both
    equal numpy."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f32
    from xdsl.ir import Block, Region

    from xrelay.dialects import nn
    from xrelay.lowering import lower

    import xrelay.runtime.kernels.contraction_plan as planned
    from xrelay.runtime.kernels import linalg_conv
    from xrelay.runtime.native import conv_kernels

    groups_seen = []  # the group counts of the native im2col kernel's runs
    monkeypatch.setattr(linalg_conv, "native_im2col", lambda *args: conv_kernels.native_im2col(*args)
                        and not groups_seen.append(args[10]))  # groups
    strided_outs = []
    original = planned.threaded_matmul
    monkeypatch.setattr(planned, "threaded_matmul", lambda lhs, rhs, out=None, threads=None, along=None: strided_outs.append(
        out is not None and not out.flags.c_contiguous) or original(lhs, rhs, out=out, threads=threads, along=along))
    data_layout, kernel_layout = layouts
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 12, 6, 7)).astype(np.float32)
    w = rng.standard_normal((15, 4, *kernel)).astype(np.float32)
    xl = x.transpose(["NCHW".index(a) for a in data_layout])
    wl = w.transpose(["OIHW".index(a) for a in kernel_layout])
    types = [TensorType(f32, s) for s in (xl.shape, wl.shape)]
    block = Block(arg_types=types)
    block.args[0].name_hint, block.args[1].name_hint = "x", "w"
    conv = nn.make("nn.conv2d", list(block.args), groups=3, data_layout=data_layout, kernel_layout=kernel_layout)
    block.add_ops([conv, func.ReturnOp(conv.results[0])])
    module = ModuleOp([func.FuncOp("main", FunctionType.from_lists(types, [conv.results[0].type]), Region(block))])
    expected = reference_grouped(x, w, 3).transpose(["NCHW".index(a) for a in data_layout])
    for level in ("linalg", "memref"):  # formed into a kernel (its fill dropped), and op by op
        lowered = lower(module, to=level)
        (got,) = run_linalg(formed(lowered) if level == "linalg" else lowered, {"x": xl, "w": wl})
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    if data_layout == "NHWC" and conv_kernels.available():
        assert not strided_outs and groups_seen == [3, 3]
    elif data_layout == "NHWC":  # numpy: the planned contraction writes each group's strided output
        assert groups_seen == []


@pytest.mark.parametrize("shape, axes", [
    ((3, 5, 4, 28), (0, 1, 3, 2)),  # a channel shuffle's swap in NHWC: 4-long output rows, per index
    ((2, 3, 40, 7), (0, 1, 3, 2)),
    ((6, 20), (1, 0)),  # output rows of 6: per index
    ((4, 3, 2), (2, 1, 0)),  # no long contiguous source axis: one copy
    ((5, 1, 30), (0, 2, 1)),
])
def test_copy_into_a_short_innermost_axis_matches_numpy(shape, axes):
    from xrelay.runtime.kernels.elementwise_programs import copy_into

    source = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    expected = np.ascontiguousarray(source.transpose(axes))
    out = np.zeros_like(expected)
    copy_into(out, source.transpose(axes))
    np.testing.assert_array_equal(out, expected)
    strided = np.zeros(expected.shape[:-1] + (expected.shape[-1] * 2,), np.float64)[..., ::2]  # casts, strided out
    copy_into(strided, source.transpose(axes))
    np.testing.assert_array_equal(strided, expected)
