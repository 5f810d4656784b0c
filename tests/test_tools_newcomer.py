"""Issue 28, a newcomer's first hour with the tools: what the opt level skipped is said, errors name
their place, `--list-passes`, `--version`, `-` for standard input, devices as `-o`, ONNX names as the IR
prints them, and a note when an input is cast. In-process on hand-written modules (fast)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from importlib.metadata import version

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from xrelay.tools import xrelay_import_onnx, xrelay_opt, xrelay_run

NN = """\
func.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32> {
  %0 = nn.conv2d(%x, %w) {channels = 3 : i64, kernel_size = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  func.return %0 : tensor<1x3x4x4xf32>
}
"""

SPLAT = """\
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<4xf32> {
  %c = arith.constant 1.0 : f32
  %0 = tensor.splat %c : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""


CONVERT_LAYOUT = 'convert-layout{desired-layouts="nn.conv2d=NHWC:HWIO"}'


def call(capsys, main, *argv) -> tuple[int, str, str]:
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exit_:  # argparse's --version and --list-passes
        status = exit_.code or 0
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def nn_file(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(NN)
    return path


# --- what the opt level skipped ---------------------------------------------------------------------


def test_a_pass_the_opt_level_skips_is_named_on_stderr(capsys, nn_file):
    status, out, err = call(capsys, xrelay_opt.main, nn_file, "-p", CONVERT_LAYOUT)
    assert status == 0 and "nn.layout_transform" not in out
    assert err == ("xrelay-opt: note: skipped pass 'convert-layout' (ConvertLayout): its opt level 3 is above "
                   "--opt-level 2; run it with --opt-level 3 or --required-pass convert-layout\n")
    # Run as the note says: it runs, and says nothing.
    for extra in (["--opt-level", "3"], ["--required-pass", "convert-layout"]):
        status, out, err = call(capsys, xrelay_opt.main, nn_file, "-p", CONVERT_LAYOUT, *extra)
        assert (status, err) == (0, "") and "nn.layout_transform" in out
    # A disabled pass was asked for: no note.
    status, out, err = call(capsys, xrelay_opt.main, nn_file, "-p", "canonicalize-ops", "--disabled-pass", "canonicalize-ops")
    assert (status, err) == (0, "")


def test_lowering_passes_refuse_a_module_above_their_level_at_the_op(capsys, nn_file):
    for pipeline, pass_name, message in [
        ("linalg-to-loops", "LinalgToLoops", "PassFailedException: linalg-to-loops: nn.conv2d is an nn op; lower "
         "the module first (convert-nn-to-linalg,linalg-bufferize)"),
        ("linalg-bufferize", "LinalgBufferize", "BufferizationError: linalg-bufferize: cannot bufferize nn.conv2d; "
         "lower the module to linalg first (convert-nn-to-linalg)"),
    ]:
        status, out, err = call(capsys, xrelay_opt.main, nn_file, "-p", pipeline)
        assert (status, out) == (1, "")
        assert err.splitlines() == [f"{nn_file}:2:3: error: pass '{pass_name}' failed on 'nn.conv2d': {message}",
                                    NN.splitlines()[1], "  ^"]


def test_a_pass_failure_says_the_crash_reproducer_was_written(capsys, nn_file, tmp_path):
    repro = tmp_path / "r.mlir"
    status, out, err = call(capsys, xrelay_opt.main, nn_file, "-p", "linalg-bufferize", "--crash-reproducer", repro)
    assert status == 1 and repro.exists()
    assert err.splitlines()[0].endswith(
        f"cannot bufferize nn.conv2d; lower the module to linalg first (convert-nn-to-linalg) "
        f"(crash reproducer written to {repro}; replay: xrelay-opt --run-reproducer {repro})")


# --- listing, version, timing, standard input -------------------------------------------------------


def test_list_passes_puts_xrelays_first_with_level_requirements_options_and_summary(capsys):
    status, out, err = call(capsys, xrelay_opt.main, "--list-passes")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("xrelay's passes (-p NAME; a pass runs when --opt-level is at least its level")
    i = lines.index("  convert-layout  (ConvertLayout, opt level 3, requires InferType, CanonicalizeOps)")
    assert lines[i + 1].startswith("      options: {desired-layouts=")
    assert lines[i + 2].startswith("      Converts `nn.conv2d` to the desired layouts")
    assert "  conv-to-matmul  (ConvToMatmul, opt level 0)" in lines
    assert lines.index("  infer-type  (InferType, opt level 0)") < lines.index(
        "other passes (xDSL's, opt level 0; options: see xDSL's documentation):")
    others = " ".join(lines[lines.index("other passes (xDSL's, opt level 0; options: see xDSL's documentation):"):])
    assert re.search(r"\bcanonicalize\b", others) and "infer-type" not in others


@pytest.mark.parametrize("main, prog", [(xrelay_opt.main, "xrelay-opt"), (xrelay_run.main, "xrelay-run"),
                                        (xrelay_import_onnx.main, "xrelay-import-onnx")])
def test_every_tool_has_version(capsys, main, prog):
    expected = f"{prog} {version('xrelay')} built from xdsl version {version('xdsl')}\n"
    for flag in ("--version", "-v"):
        assert call(capsys, main, flag) == (0, expected, "")
    status, out, _ = call(capsys, main, "--help")
    assert "print the tool's version and the xDSL version it runs on, then exit" in " ".join(out.split())


def test_dash_reads_standard_input_and_locates_errors_there(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(NN.encode())))
    status, out, err = call(capsys, xrelay_opt.main, "-", "-p", "infer-type")
    assert (status, err) == (0, "") and "nn.conv2d" in out
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(NN.replace("func.return", "func.retur").encode())))
    status, out, err = call(capsys, xrelay_opt.main, "-")
    assert status == 1 and err.startswith("<stdin>:3:3: error: ")


# --- xrelay-run: errors at their place, devices, names, casts ---------------------------------------


def test_an_unsupported_op_at_execution_is_located(capsys, tmp_path):
    path = tmp_path / "splat.mlir"
    path.write_text(SPLAT)
    np.save(tmp_path / "a.npy", np.ones(2, np.float32))
    a = tmp_path / "a.npy"
    status, out, err = call(capsys, xrelay_run.main, path, "--input", a, "--input", a)
    assert (status, out) == (1, "")
    assert err.splitlines() == [f"{path}:3:3: error: execution failed: unsupported op tensor.splat at the "
                                "linalg/memref level", SPLAT.splitlines()[2], "  ^"]
    status, out, err = call(capsys, xrelay_run.main, path, "--input", a, "--input", a, "--level", "loops")
    assert err.splitlines()[0] == (f"{path}:3:3: error: cannot lower the module to loops: BufferizationError: "
                                   "linalg-bufferize: cannot bufferize tensor.splat")


@pytest.fixture
def onnx_relu(tmp_path):
    """An ONNX model `relu(gpu_0/data_0)`: the IR prints the input as %gpu_0_data."""
    x = helper.make_tensor_value_info("gpu_0/data_0", TensorProto.FLOAT, [1, 3, 2, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 2, 2])
    graph = helper.make_graph([helper.make_node("Relu", ["gpu_0/data_0"], ["y"])], "g", [x], [y])
    path = tmp_path / "relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def test_onnx_inputs_bind_by_the_name_the_ir_prints_too(capsys, tmp_path, onnx_relu):
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(1, 3, 2, 2)
    np.save(tmp_path / "x.npy", x)
    for name in ("gpu_0/data_0", "gpu_0_data", "gpu_0_data_0"):
        out_file = tmp_path / f"out_{name.replace('/', '_')}.npy"
        status, out, err = call(capsys, xrelay_run.main, onnx_relu, "--input", f"{name}={tmp_path / 'x.npy'}", "-o", out_file)
        assert (status, err) == (0, ""), name
        np.testing.assert_array_equal(np.load(out_file), np.maximum(x, 0))


def test_a_float64_input_is_cast_with_one_warning(capsys, tmp_path, nn_file):
    x = np.arange(32, dtype=np.float64).reshape(1, 2, 4, 4) / 7
    w = np.array([[1, 0], [0, 1], [1, -1]], np.float64).reshape(3, 2, 1, 1)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", w)
    out_file = tmp_path / "out.npy"
    status, out, err = call(capsys, xrelay_run.main, nn_file, "--input", tmp_path / "x.npy", "--input",
                            tmp_path / "w.npy", "-o", out_file)
    assert status == 0
    assert err == ("xrelay-run: warning: input(s) 'x' (float64 -> float32), 'w' (float64 -> float32) cast to the "
                   "argument's element type\n")
    x32 = x.astype(np.float32)
    expected = np.stack([x32[0, 0], x32[0, 1], x32[0, 0] - x32[0, 1]])[None]
    np.testing.assert_allclose(np.load(out_file), expected, rtol=1e-6)
    np.save(tmp_path / "x.npy", x32)
    np.save(tmp_path / "w.npy", w.astype(np.float32))
    status, out, err = call(capsys, xrelay_run.main, nn_file, "--input", tmp_path / "x.npy", "--input", tmp_path / "w.npy")
    assert (status, err) == (0, "")


def test_devices_are_output_files(capsys, tmp_path, onnx_relu):
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(1, 3, 2, 2)
    np.save(tmp_path / "x.npy", x)
    assert call(capsys, xrelay_run.main, onnx_relu, "--input", tmp_path / "x.npy", "-o", os.devnull) == (0, "", "")
    # /dev/stdout into a pipe: the .npy bytes come out of the pipe.
    done = subprocess.run([sys.executable, "-m", "xrelay.tools.xrelay_run", str(onnx_relu), "--input",
                           str(tmp_path / "x.npy"), "-o", "/dev/stdout"], capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(np.load(io.BytesIO(done.stdout)), np.maximum(x, 0))


def test_upstream_dealloc_left_unlowered_says_how_to_lower_it(capsys, tmp_path):
    path = tmp_path / "dealloc.mlir"
    path.write_text("""\
func.func @main(%a: memref<2xf32>) -> memref<2xf32> {
  %true = arith.constant true
  bufferization.dealloc (%a : memref<2xf32>) if (%true)
  func.return %a : memref<2xf32>
}
""")
    np.save(tmp_path / "a.npy", np.ones(2, np.float32))
    status, out, err = call(capsys, xrelay_run.main, path, "--input", tmp_path / "a.npy")
    assert (status, out) == (1, "")
    assert err.splitlines() == [
        f"{path}:3:3: error: Operation bufferization.dealloc is not registered (xrelay runs upstream's bufferized "
        "code after its deallocation is lowered: iree-opt --ownership-based-buffer-deallocation "
        "--buffer-deallocation-simplification --bufferization-lower-deallocations, as README.md shows)",
        "  bufferization.dealloc (%a : memref<2xf32>) if (%true)", "  " + "^" * len("bufferization.dealloc")]
