"""xrelay-run: inputs and parameters bound by name, outputs, --repeat, progress, levels, and bad models
or output files (bad inputs and bindings: test_tools_run_bindings.py)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from tool_passes import DENSE_MODEL

from xrelay.dialects.levels import module_level
from xrelay.tools import xrelay_run
from xrelay.tools.progress import Progress
from xrelay.tools.xrelay_run import main

TWO_RESULTS = """\
func.func @main(%data: tensor<2x3xf32>, %w: tensor<4x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = nn.dense(%data, %w) : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %1 = nn.relu(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}
"""

RNG = np.random.RandomState(7)
X = RNG.standard_normal((2, 3)).astype(np.float32)
W = RNG.standard_normal((4, 3)).astype(np.float32)
B = RNG.standard_normal(4).astype(np.float32)


def reference(x, w, b):
    """nn.dense + nn.bias_add + nn.relu in numpy (dense's weight is [units, in])."""
    return np.maximum(x.astype(np.float64) @ w.T.astype(np.float64) + b, 0)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "model.mlir").write_text(DENSE_MODEL)
    (tmp_path / "two.mlir").write_text(TWO_RESULTS)
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "x64.npy", X.astype(np.float64))
    np.savez(tmp_path / "p.npz", w=W, b=B)
    return tmp_path


def run(capsys, *argv) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# --- happy paths ---------------------------------------------------------------------------------------


def test_runs_and_saves_the_result(capsys, files):
    status, out, err = run(capsys, files / "model.mlir", "--input", f"data={files / 'x.npy'}",
                           "--params", files / "p.npz", "-o", files / "out.npy")
    assert (status, out, err) == (0, "", "")
    result = np.load(files / "out.npy", allow_pickle=False)
    assert result.dtype == np.float32 and result.shape == (2, 4)
    np.testing.assert_allclose(result, reference(X, W, B), rtol=1e-5, atol=1e-6)
    assert not [p for p in files.iterdir() if p.name.startswith(".xrelay-")]


def test_unnamed_input_binds_the_argument_left_and_float64_is_cast(capsys, files):
    status, _, _ = run(capsys, files / "model.mlir", "--input", files / "x64.npy",
                       "--params", files / "p.npz", "-o", files / "out.npy")
    assert status == 0
    np.testing.assert_allclose(np.load(files / "out.npy"), reference(X, W, B), rtol=1e-5, atol=1e-6)


def test_inputs_alone_can_bind_every_argument(capsys, files):
    np.save(files / "w.npy", W)
    np.save(files / "b.npy", B)
    status, _, _ = run(capsys, files / "model.mlir", "--input", f"data={files / 'x.npy'}",
                       "--input", f"w={files / 'w.npy'}", "--input", f"b={files / 'b.npy'}", "-o", files / "o.npy")
    assert status == 0
    np.testing.assert_allclose(np.load(files / "o.npy"), reference(X, W, B), rtol=1e-5, atol=1e-6)


def test_without_output_file_the_result_is_summarised(capsys, files):
    status, out, _ = run(capsys, files / "model.mlir", "--input", files / "x.npy", "--params", files / "p.npz")
    assert status == 0
    assert out.splitlines()[0] == "output_0: float32 (2, 4)"


def test_several_results_go_to_an_npz(capsys, files):
    np.savez(files / "w_only.npz", w=W)
    status, _, _ = run(capsys, files / "two.mlir", "--input", files / "x.npy", "--params", files / "w_only.npz",
                       "-o", files / "out.npz")
    assert status == 0
    with np.load(files / "out.npz", allow_pickle=False) as saved:
        assert sorted(saved.files) == ["output_0", "output_1"]
        dense = X.astype(np.float64) @ W.T.astype(np.float64)
        np.testing.assert_allclose(saved["output_0"], dense, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(saved["output_1"], np.maximum(dense, 0), rtol=1e-5, atol=1e-6)


def test_repeat_prints_the_median_latency(capsys, files):
    status, out, err = run(capsys, files / "model.mlir", "--input", files / "x.npy", "--params", files / "p.npz",
                           "-o", files / "out.npy", "--repeat", "3")
    assert status == 0 and err == ""  # stderr is not a terminal: no progress by default
    match = re.fullmatch(
        r"median latency: (\d+\.\d{3}) ms over 3 timed run\(s\) at nn level "
        r"\(min (\d+\.\d{3}) ms, max (\d+\.\d{3}) ms; 1 warm-up run\(s\) not timed\)\n"
        r"time to first result: \d+\.\d{3} s \(parsing, set-up and the first run\)\n",
        out,
    )
    assert match
    median, low, high = map(float, match.groups())
    assert low <= median <= high


def test_progress_can_be_forced_off_a_terminal(capsys, files):
    status, _, err = run(capsys, files / "model.mlir", "--input", files / "x.npy", "--params", files / "p.npz",
                         "-o", files / "out.npy", "--repeat", "2", "--progress")
    assert status == 0
    assert err.splitlines() == [
        f"xrelay-run: parsing {files / 'model.mlir'}",
        "xrelay-run: loading inputs",
        "xrelay-run: warming up at nn level 1/3",
        "xrelay-run: running at nn level 2/3",
        "xrelay-run: running at nn level 3/3",
    ]


def test_progress_on_a_terminal_rewrites_one_line_and_erases_it():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    progress = Progress(stream, enabled=True, prog="xrelay-run")
    progress.update("running 1/2")
    progress.update("running 2/2")
    progress.close()
    text = stream.getvalue()
    assert "\n" not in text
    assert re.match(r"\r\x1b\[Kxrelay-run: running 1/2 \(\d+\.\d s\)", text)
    assert "xrelay-run: running 2/2 (" in text
    assert text.endswith("\r\x1b[K")


# --- bad input ------------------------------------------------------------------------------------------------


def _bad_models(d: Path) -> None:
    (d / "parse.mlir").write_text(DENSE_MODEL.replace("nn.relu(%1)", "nn.relu(%9)"))
    relu_to_2x5 = (DENSE_MODEL.replace("tensor<4xf32>) -> tensor<2x4xf32> {", "tensor<4xf32>) -> tensor<2x5xf32> {")
                   .replace("-> tensor<2x4xf32>\n  func.return %2 : tensor<2x4xf32>",
                            "-> tensor<2x5xf32>\n  func.return %2 : tensor<2x5xf32>"))
    (d / "verify.mlir").write_text(relu_to_2x5)


# Bad inputs, parameters and bindings: tests/test_tools_run_bindings.py.
@pytest.mark.parametrize(
    "model, output, expected",
    [
        ("model.mlir", "out.txt", "xrelay-run: error: output file '{d}/out.txt' must end in .npy (one result) or .npz"),
        ("two.mlir", "out.npy", "xrelay-run: error: @main returns 2 results; use an .npz output file"),
        ("model.mlir", "no-dir/out.npy", "xrelay-run: error: cannot write output file '{d}/no-dir/out.npy': directory"),
        ("nope.mlir", "out.npy", "xrelay-run: error: cannot access input file '{d}/nope.mlir': No such file or directory"),
        ("parse.mlir", "out.npy", "{d}/parse.mlir:4:16: error: use of undefined value %9"),
        ("verify.mlir", "out.npy", "{d}/verify.mlir:4:3: error: 'nn.relu' op result types (tensor<2x5xf32>)"),
    ],
)
def test_bad_model_or_output_is_reported_before_running(capsys, files, model, output, expected):
    _bad_models(files)
    status, out, err = run(capsys, files / model, "--input", files / "x.npy", "--params", files / "p.npz",
                           "-o", files / output)
    assert status == 1 and out == ""
    assert "Traceback" not in err
    assert err.splitlines()[0].startswith(expected.format(d=files)), err
    assert not (files / output).exists()


def test_a_lowering_failure_is_one_error(capsys, files, monkeypatch):
    fake = types.ModuleType("xrelay.lowering")

    def lower(module, to, start):
        raise NotImplementedError(f"cannot lower nn.dense to {to} yet")

    fake.lower = lower
    monkeypatch.setitem(sys.modules, "xrelay.lowering", fake)
    status, _, err = run(capsys, files / "model.mlir", "--input", files / "x.npy", "--params", files / "p.npz",
                         "--level", "linalg")
    assert status == 1
    assert err == ("xrelay-run: error: cannot lower the module to linalg: NotImplementedError: cannot lower "
                   "nn.dense to linalg yet\n")


def test_every_level_is_listed():
    assert list(xrelay_run.LEVEL_DESCRIPTIONS) == ["nn", "linalg", "memref", "loops"]


@pytest.mark.parametrize("level", ["nn", "linalg", "memref", "loops"])
def test_every_level_computes_the_reference(capsys, files, level):
    status, _, err = run(capsys, files / "model.mlir", "--input", files / "x.npy", "--params", files / "p.npz",
                         "--level", level, "-o", files / "out.npy")
    assert status == 0, err
    np.testing.assert_allclose(np.load(files / "out.npy"), reference(X, W, B), rtol=1e-5, atol=1e-6)


LOWERING_PIPELINES = {
    "linalg": "convert-nn-to-linalg",
    "memref": "convert-nn-to-linalg,linalg-bufferize",
    "loops": "convert-nn-to-linalg,linalg-bufferize,linalg-to-loops",
}


@pytest.mark.parametrize("level", list(LOWERING_PIPELINES))
def test_runs_files_lowered_by_xrelay_opt(capsys, files, level):
    from xrelay.tools.xrelay_opt import main as opt_main

    lowered = files / f"{level}.mlir"
    assert opt_main([str(files / "model.mlir"), "-p", LOWERING_PIPELINES[level], "-o", str(lowered)]) == 0
    capsys.readouterr()
    # Default: the file's own level; an explicit lower level finishes the lowering; a higher one is an error.
    for extra in ([], ["--level", "loops"]):
        status, _, err = run(capsys, lowered, "--input", files / "x.npy", "--params", files / "p.npz",
                             *extra, "-o", files / "out.npy")
        assert status == 0, err
        np.testing.assert_allclose(np.load(files / "out.npy"), reference(X, W, B), rtol=1e-5, atol=1e-6)
    status, _, err = run(capsys, lowered, "--input", files / "x.npy", "--params", files / "p.npz", "--level", "nn")
    assert status == 1
    assert err.startswith(f"xrelay-run: error: the module is already at the {level} level, below --level nn")


def test_module_level_recognises_each_level(files):
    from xdsl.dialects.builtin import ModuleOp

    from xrelay.dialects import make_context
    from xrelay.lowering import lower
    from xrelay.tools.diagnostics import parse_module_file

    module = parse_module_file(make_context(), str(files / "model.mlir"))
    assert isinstance(module, ModuleOp)
    assert module_level(module) == "nn"
    for level in ("linalg", "memref", "loops"):
        lowered = lower(module, to=level)
        assert module_level(lowered) == level
        for lower_still in ("memref", "loops")[("linalg", "memref", "loops").index(level):]:
            # Part-way down, lowering runs only the passes still to come: the same module as from nn.
            assert str(lower(lowered, to=lower_still, start=level)) == str(lower(module, to=lower_still))


def test_console_script(files):
    script = Path(sys.executable).parent / "xrelay-run"
    env = {k: v for k, v in os.environ.items() if k != "XRELAY_TRACEBACK"}
    np.save(files / "tall.npy", np.zeros((3, 3), np.float32))
    done = subprocess.run([script, files / "model.mlir", "--input", f"data={files / 'tall.npy'}",
                           "--params", files / "p.npz", "-o", files / "out.npy"], capture_output=True, text=True, env=env)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (f"{files / 'model.mlir'}:1:17: error: input 'data' from '{files / 'tall.npy'}' has shape "
                           "(3, 3), but the argument is tensor<2x3xf32> (shape (2, 3))\n"
                           "func.func @main(%data: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> "
                           "tensor<2x4xf32> {\n" + " " * 16 + "^^^^^\n")
    assert not (files / "out.npy").exists()
    done = subprocess.run([script, files / "model.mlir", "--input", files / "x.npy", "--params", files / "p.npz",
                           "-o", files / "out.npy"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    np.testing.assert_allclose(np.load(files / "out.npy"), reference(X, W, B), rtol=1e-5, atol=1e-6)
