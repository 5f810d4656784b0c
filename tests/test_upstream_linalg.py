"""Upstream MLIR in: linalg on tensors written by IREE's ONNX import (torch-mlir) parses and runs in
xrelay, matching ONNX Runtime; each construct xDSL 0.75 lacked has a test holding the upstream text."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
import upstream_models
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.runtime.iree.backend import available as iree_available
from xrelay.lowering import lower
from xrelay.runtime.executor.linalg_exec import run_linalg
from xrelay.runtime.reference.loops_exec import run_loops
from xrelay.tools import xrelay_run


def onnx_runtime(model, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x})[0]


INPUT_SHAPES = {"small_cnn": (1, 3, 8, 8), "argmax": (2, 5), "avgpool_include": (1, 2, 5, 5),
                "separable_concat": (1, 4, 6, 6)}


@pytest.mark.parametrize("name", list(upstream_models.MODELS))
def test_checked_in_upstream_linalg_runs_in_xrelay_run_and_matches_onnx_runtime(name, tmp_path, capsys):
    # The function is @<model name> and its argument the unnamed %arg0: xrelay-run runs the only
    # function as @main and binds a bare --input positionally.
    x = np.random.default_rng(1).standard_normal(INPUT_SHAPES[name]).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out.npy"
    model = upstream_models.DATA / f"{name}.mlir"
    assert xrelay_run.main([str(model), "--input", str(tmp_path / "x.npy"), "-o", str(out)]) == 0, capsys.readouterr().err
    expected = onnx_runtime(upstream_models.MODELS[name](), x)
    got = np.load(out)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def run_text(text: str, *args: np.ndarray) -> list[np.ndarray]:
    return run_linalg(Parser(make_context(), text).parse_module(), list(args))


def test_pooling_nchw_max_takes_the_accumulator_as_upstream_does():
    # xDSL 0.75's pooling_nchw_max body yields max(input, window): the window is a shape-only tensor.empty.
    text = """
    func.func @main(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
      %init = arith.constant dense<0.5> : tensor<1x1x2x2xf32>
      %window = tensor.empty() : tensor<2x2xf32>
      %0 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
          ins(%x, %window : tensor<1x1x3x3xf32>, tensor<2x2xf32>) outs(%init : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
      func.return %0 : tensor<1x1x2x2xf32>
    }
    """
    x = np.array([[-1, -2, 3], [-4, -5, -6], [0, 8, -9]], np.float32).reshape(1, 1, 3, 3)
    (got,) = run_text(text, x)
    np.testing.assert_array_equal(got.reshape(2, 2), [[0.5, 3], [8, 8]])  # max(0.5, window max)


@pytest.mark.parametrize(("op", "layout"), [("pooling_nchw_sum", "NCHW"), ("pooling_nhwc_sum", "NHWC"),
                                            ("pooling_nhwc_max", "NHWC")])
def test_pooling_ops_xdsl_lacks_run_with_strides_and_dilations(op, layout):
    x = np.random.default_rng(2).standard_normal((1, 2, 7, 7) if layout == "NCHW" else (1, 7, 7, 2)).astype(np.float32)
    out_shape = (1, 2, 2, 3) if layout == "NCHW" else (1, 2, 3, 2)
    shape = "x".join(map(str, x.shape))
    out = "x".join(map(str, out_shape))
    text = f"""
    func.func @main(%x: tensor<{shape}xf32>) -> tensor<{out}xf32> {{
      %init = arith.constant dense<1.0> : tensor<{out}xf32>
      %window = tensor.empty() : tensor<2x3xf32>
      %0 = linalg.{op} {{dilations = dense<[2, 1]> : vector<2xi64>, strides = dense<[3, 2]> : vector<2xi64>}}
          ins(%x, %window : tensor<{shape}xf32>, tensor<2x3xf32>) outs(%init : tensor<{out}xf32>) -> tensor<{out}xf32>
      func.return %0 : tensor<{out}xf32>
    }}
    """
    (got,) = run_text(text, x)
    data = x if layout == "NCHW" else x.transpose(0, 3, 1, 2)
    expected = np.ones((1, 2, 2, 3), np.float32)
    for oh in range(2):
        for ow in range(3):
            window = data[:, :, oh * 3:oh * 3 + 3:2, ow * 2:ow * 2 + 3]  # rows oh*3 + kh*2, cols ow*2 + kw
            if op.endswith("sum"):
                expected[:, :, oh, ow] += window.sum(axis=(2, 3))
            else:
                expected[:, :, oh, ow] = np.maximum(1.0, window.max(axis=(2, 3)))
    if layout == "NHWC":
        expected = expected.transpose(0, 2, 3, 1)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_two_result_generic_parses_and_runs_argmax():
    # xDSL 0.75 reads `-> (t1, t2)` as one attribute and fails ("Expected '->'").
    text = (upstream_models.DATA / "argmax.mlir").read_text()
    module = Parser(make_context(), text).parse_module()
    generic = next(op for op in module.walk() if op.name == "linalg.generic")
    assert [str(r.type) for r in generic.results] == ["tensor<2xf32>", "tensor<2xi64>"]
    x = np.array([[1, 5, 5, 2, 0], [-3, -1, -7, -1, -2]], np.float32)
    xrelay_run.name_entry_main(module)  # upstream names the function @argmax
    (got,) = run_linalg(module, [x])
    np.testing.assert_array_equal(got, [1, 1])  # the first maximum, as ONNX's ArgMax


def test_linalg_broadcast_and_a_pad_value_captured_from_outside_run():
    text = """
    func.func @main(%b: tensor<3xf32>, %x: tensor<1x3x2x2xf32>) -> (tensor<1x3x2x2xf32>, tensor<1x3x4x2xf32>) {
      %cst = arith.constant -1.0 : f32
      %e = tensor.empty() : tensor<1x3x2x2xf32>
      %0 = linalg.broadcast ins(%b : tensor<3xf32>) outs(%e : tensor<1x3x2x2xf32>) dimensions = [0, 2, 3]
      %p = tensor.pad %x low[0, 0, 1, 0] high[0, 0, 1, 0] {
      ^bb0(%i: index, %j: index, %k: index, %l: index):
        tensor.yield %cst : f32
      } : tensor<1x3x2x2xf32> to tensor<1x3x4x2xf32>
      func.return %0, %p : tensor<1x3x2x2xf32>, tensor<1x3x4x2xf32>
    }
    """
    b = np.array([1, 2, 3], np.float32)
    x = np.arange(12, dtype=np.float32).reshape(1, 3, 2, 2)
    module = Parser(make_context(), text).parse_module()
    from xrelay.lowering import LinalgBufferize

    for program in (module, LinalgBufferize()(module.clone())):
        broadcast, padded = run_linalg(program, [b, x])
        np.testing.assert_array_equal(broadcast, np.broadcast_to(b.reshape(1, 3, 1, 1), (1, 3, 2, 2)))
        expected = np.full((1, 3, 4, 2), -1, np.float32)
        expected[:, :, 1:3] = x
        np.testing.assert_array_equal(padded, expected)


@pytest.mark.slow
@pytest.mark.skipif(not iree_available(), reason="needs IREE's ONNX import (the 'iree' extra)")
def test_upstream_resnet18_runs_in_xrelay_and_matches_onnx_runtime(tmp_path):
    """ResNet-18 (xrelay's seeded weights) as ONNX, through upstream's import to linalg, run by xrelay."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    import execution

    from xrelay.frontend import bind_params_by_name, resnet

    module, params = resnet.get_workload(num_layers=18, image_shape=(3, 64, 64), num_classes=10)
    model = execution.onnx_model(bind_params_by_name(module, params))
    text = upstream_models.import_onnx(model, tmp_path)
    upstream = Parser(make_context(), text).parse_module()
    xrelay_run.name_entry_main(upstream)
    x = np.random.default_rng(3).standard_normal((1, 3, 64, 64)).astype(np.float32)
    (got,) = run_linalg(upstream, [x])
    np.testing.assert_allclose(got, onnx_runtime(model, x), rtol=1e-5, atol=1e-6)



CONCAT_AND_CASTS = """
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%a: tensor<1x3xf32>, %b: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %scale64 = arith.constant 2.5 : f64
  %scale = arith.truncf %scale64 : f64 to f32
  %wide = arith.extf %scale : f32 to f64
  %back = arith.truncf %wide : f64 to f32
  %0 = tensor.empty() : tensor<1x3xf32>
  %scaled = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<1x3xf32>) outs(%0 : tensor<1x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %back : f32
    linalg.yield %m : f32
  } -> tensor<1x3xf32>
  %c = tensor.concat dim(0) %scaled, %b, %a : (tensor<1x3xf32>, tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  func.return %c : tensor<4x3xf32>
}
"""


@pytest.mark.parametrize("level", ["linalg", "memref", "loops"])
def test_tensor_concat_and_scalar_casts_outside_bodies_run_at_every_level(level):
    # torch-mlir writes tensor.concat for every ONNX Concat and casts scalar constants with arith.truncf
    # outside the linalg bodies that capture them.
    module = Parser(make_context(), CONCAT_AND_CASTS).parse_module()
    if level != "linalg":
        module = lower(module, to=level, start="linalg")
    a, b = np.array([[1, 2, 3]], np.float32), np.arange(6, dtype=np.float32).reshape(2, 3)
    (got,) = (run_loops if level == "loops" else run_linalg)(module, [a, b])
    np.testing.assert_array_equal(got, np.concatenate([a * 2.5, b, a]))


def test_an_op_no_executor_runs_is_located_also_when_written_with_its_own_location(tmp_path, capsys):
    # Upstream text printed with debug info gives ops locations of their own (`loc("node")`); the
    # diagnostic still names the file, line and column where the op is written.
    path = tmp_path / "m.mlir"
    path.write_text('func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n'
                    '  %c = arith.constant 1.0 : f32\n'
                    '  %s = tensor.splat %c : tensor<2xf32> loc("Concat_3")\n'
                    '  func.return %s : tensor<2xf32>\n}\n')
    np.save(tmp_path / "x.npy", np.ones(2, np.float32))
    assert xrelay_run.main([str(path), "--input", str(tmp_path / "x.npy")]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines()[0] == (f"{path}:3:3: error: execution failed: unsupported op tensor.splat "
                                            "at the linalg/memref level")
