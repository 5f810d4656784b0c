"""xrelay-import-onnx, and .onnx models given to xrelay-opt and xrelay-run: outputs checked against
numpy, and every bad .onnx input one message, exit status 1, no traceback, no output file."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx_models import model

from xrelay.tools import xrelay_import_onnx, xrelay_opt, xrelay_run

RNG = np.random.default_rng(5)
X = RNG.standard_normal((1, 3, 5, 5)).astype(np.float32)
W = RNG.standard_normal((2, 3, 3, 3)).astype(np.float32)
B = RNG.standard_normal(2).astype(np.float32)


def conv_relu_reference(x):
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((1, 2, 5, 5), np.float32)
    for i in range(5):
        for j in range(5):
            out[0, :, i, j] = np.tensordot(W, padded[0, :, i:i + 3, j:j + 3], axes=3)
    return np.maximum(out + B[None, :, None, None], 0)


@pytest.fixture
def files(tmp_path):
    nodes = [helper.make_node("Conv", ["gpu_0/data_0", "conv1_w_0", "onnx::Conv_7"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["out"])]
    good = model(nodes, {"gpu_0/data_0": (1, 3, 5, 5)}, ["out"], {"conv1_w_0": W, "onnx::Conv_7": B})
    (tmp_path / "m.onnx").write_bytes(good.SerializeToString())
    (tmp_path / "truncated.onnx").write_bytes(good.SerializeToString()[:120])
    (tmp_path / "text.onnx").write_text("this is not a model\n")
    dynamic = model([helper.make_node("Relu", ["x"], ["y"])], {"x": ("batch", 3)}, ["y"])
    (tmp_path / "dynamic.onnx").write_bytes(dynamic.SerializeToString())
    unsupported = model([helper.make_node("Round", ["x"], ["y"]), helper.make_node("Relu", ["y"], ["z"]),
                         helper.make_node("NonZero", ["z"], ["n"])], {"x": (3,)}, ["n"])
    (tmp_path / "unsupported.onnx").write_bytes(unsupported.SerializeToString())
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "wrong.npy", X[:, :, :4])
    return tmp_path


def test_import_with_constants_then_run(files, capsys):
    out = files / "m.mlir"
    assert xrelay_import_onnx.main([str(files / "m.onnx"), "-o", str(out)]) == 0
    text = out.read_text()
    assert 'xrelay.name = "gpu_0/data_0"' in text and text.count("nn.constant") == 2
    result = files / "y.npy"
    assert xrelay_run.main([str(out), "--input", f"gpu_0/data_0={files / 'x.npy'}", "-o", str(result)]) == 0
    np.testing.assert_allclose(np.load(result), conv_relu_reference(X), rtol=1e-5, atol=1e-5)


def test_import_with_params_out_keeps_onnx_names(files):
    out, params = files / "p.mlir", files / "p.npz"
    argv = [str(files / "m.onnx"), "-o", str(out), "--params-out", str(params)]
    assert xrelay_import_onnx.main(argv) == 0
    assert "nn.constant" not in out.read_text()
    with np.load(params, allow_pickle=False) as archive:
        assert sorted(archive.files) == ["conv1_w_0", "onnx::Conv_7"]
    result = files / "y.npy"
    argv = [str(out), "--input", f"gpu_0/data_0={files / 'x.npy'}", "--params", str(params), "-o", str(result)]
    assert xrelay_run.main(argv) == 0
    np.testing.assert_allclose(np.load(result), conv_relu_reference(X), rtol=1e-5, atol=1e-5)


def test_run_and_opt_take_onnx_directly(files, capsys):
    result = files / "y.npy"
    assert xrelay_run.main([str(files / "m.onnx"), "--input", f"gpu_0/data_0={files / 'x.npy'}",
                            "-o", str(result), "--level", "linalg"]) == 0
    np.testing.assert_allclose(np.load(result), conv_relu_reference(X), rtol=1e-5, atol=1e-5)
    assert xrelay_opt.main([str(files / "m.onnx"), "-p", "canonicalize-ops", "--opt-level", "3"]) == 0
    printed = capsys.readouterr().out
    assert "nn.add" in printed and "nn.bias_add" not in printed


def test_shape_fixes_a_dynamic_dimension(files, capsys):
    assert xrelay_import_onnx.main([str(files / "dynamic.onnx"), "--shape", "x=4,3"]) == 0
    assert "tensor<4x3xf32>" in capsys.readouterr().out


BAD = {
    "truncated.onnx": "'{path}' is not an ONNX model (truncated or corrupt",
    "text.onnx": "'{path}' is not an ONNX model",
    "dynamic.onnx": "input 'x' has a dynamic dimension 0 ('batch')",
    "unsupported.onnx": "The following operators are not supported for frontend ONNX: NonZero (1), Round (1) "
                        "(model opset 13)",
    "missing.onnx": "cannot read '{path}'",
}


@pytest.mark.parametrize("tool", ["import", "opt", "run"])
@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_onnx_is_one_message(files, capsys, tool, name):
    path = files / name
    out = files / ("out.mlir" if tool != "run" else "out.npy")
    argv = {"import": (xrelay_import_onnx.main, [str(path), "-o", str(out)]),
            "opt": (xrelay_opt.main, [str(path), "-o", str(out)]),
            "run": (xrelay_run.main, [str(path), "-o", str(out)])}[tool]
    status = argv[0](argv[1])
    err = capsys.readouterr().err
    assert status == 1
    if tool == "opt" and name == "missing.onnx":  # xdsl-opt opens the file itself
        assert err == f"xrelay-opt: error: cannot access input file '{path}': No such file or directory\n"
    else:
        assert err.startswith(f"{path}: error: ") and BAD[name].format(path=path) in err
        assert err.count("\n") == 1, err
    assert "Traceback" not in err and not out.exists()


def test_wrong_input_shape_at_run_time(files, capsys):
    out = files / "y.npy"
    status = xrelay_run.main([str(files / "m.onnx"), "--input", f"gpu_0/data_0={files / 'wrong.npy'}", "-o", str(out)])
    err = capsys.readouterr().err
    assert status == 1 and not out.exists()
    assert err == (f"xrelay-run: error: input 'gpu_0/data_0' from '{files / 'wrong.npy'}' has shape (1, 3, 4, 5), "
                   "but the argument is tensor<1x3x5x5xf32> (shape (1, 3, 5, 5))\n")


def test_bad_shape_option(files, capsys):
    assert xrelay_import_onnx.main([str(files / "dynamic.onnx"), "--shape", "x=4,a"]) == 1
    assert capsys.readouterr().err == ("xrelay-import-onnx: error: --shape 'x=4,a': expected NAME=D0,D1,... "
                                       "with positive integer dimensions\n")
