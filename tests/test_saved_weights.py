"""A saved build's weights beside it (xrelay/weights_file.py): `dense_resource` handles in the `.mlir`,
the arrays in an `.npz`, read back by `Executable.load`, `xrelay-run` and `xrelay-opt`; every way the
pair can be broken is one located error."""

import subprocess
import sys
import zipfile

import numpy as np
import pytest
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr
from xdsl.parser import Parser

import xrelay
from xrelay import transform
from xrelay.dialects import make_context
from xrelay.weights_file import WeightsError

RNG = np.random.default_rng(3)
W1 = RNG.standard_normal((8, 32)).astype(np.float32)
B1 = RNG.standard_normal(8).astype(np.float32)  # 8 elements: stays inline, in decimal
W2 = RNG.standard_normal((4, 8)).astype(np.float32)
X = RNG.standard_normal((1, 32)).astype(np.float32)


def dense(array: np.ndarray) -> str:
    return "dense<" + np.array2string(array, separator=", ", threshold=10**9, floatmode="unique").replace("\n", "") + ">"


MODEL = f"""
func.func @main(%data: tensor<1x32xf32>) -> tensor<1x4xf32> {{
  %w1 = nn.constant {dense(W1)} : tensor<8x32xf32>
  %b1 = nn.constant {dense(B1)} : tensor<8xf32>
  %w2 = nn.constant {dense(W2)} : tensor<4x8xf32>
  %d1 = nn.dense(%data, %w1) {{units = 8}} : (tensor<1x32xf32>, tensor<8x32xf32>) -> tensor<1x8xf32>
  %a1 = nn.bias_add(%d1, %b1) {{axis = 1 : i64}} : (tensor<1x8xf32>, tensor<8xf32>) -> tensor<1x8xf32>
  %r1 = nn.relu(%a1) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %d2 = nn.dense(%r1, %w2) {{units = 4}} : (tensor<1x8xf32>, tensor<4x8xf32>) -> tensor<1x4xf32>
  func.return %d2 : tensor<1x4xf32>
}}
"""


def reference(x: np.ndarray) -> np.ndarray:
    return np.maximum(x @ W1.T + B1, 0) @ W2.T


@pytest.fixture(scope="module")
def executable():
    with transform.PassContext(opt_level=3):
        return xrelay.build(Parser(make_context(), MODEL).parse_module())


@pytest.fixture
def saved(executable, tmp_path):
    executable.save(tmp_path / "m.mlir")
    np.save(tmp_path / "x.npy", X)
    return tmp_path


def xrelay_tool(tool: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", f"xrelay.tools.{tool}", *map(str, args)],
                          capture_output=True, text=True)


def test_large_constants_are_handles_and_the_arrays_are_in_the_npz(saved):
    text = (saved / "m.mlir").read_text()
    assert '"0x' not in text
    assert text.splitlines()[0].startswith('builtin.module attributes {xrelay.weights = {file = "m.npz", sha256 = "')
    assert "%w1 = arith.constant dense_resource<w1> : tensor<8x32xf32>" in text
    assert "arith.constant dense_resource<w2> : tensor<4x8xf32>" in text
    assert "dense_resource<b1>" not in text  # 8 elements print inline
    with np.load(saved / "m.npz", allow_pickle=False) as archive:
        assert sorted(archive.files) == ["w1", "w2"]
        np.testing.assert_array_equal(archive["w1"], W1)
        np.testing.assert_array_equal(archive["w2"], W2)


def test_load_and_xrelay_run_give_the_models_answer(saved):
    np.testing.assert_allclose(xrelay.Executable.load(saved / "m.mlir")(X), reference(X), rtol=1e-5, atol=1e-6)
    # A second load in the same process reads the same handles (xDSL would rename them w1_0, ...).
    loaded = xrelay.Executable.load(saved / "m.mlir")
    values = [op.value for op in loaded.module.walk() if op.name == "arith.constant"]
    assert not any(isinstance(v, DenseResourceAttr) for v in values)
    assert any(isinstance(v, DenseIntOrFPElementsAttr) and v.get_shape() == (8, 32) for v in values)
    assert "xrelay.weights" not in loaded.module.attributes
    done = xrelay_tool("xrelay_run", saved / "m.mlir", "--input", f"data={saved / 'x.npy'}", "-o", saved / "out.npy",
                       "--repeat", "1")
    assert done.returncode == 0, done.stderr
    assert "time to first result: " in done.stdout
    np.testing.assert_allclose(np.load(saved / "out.npy"), reference(X), rtol=1e-5, atol=1e-6)


def test_xrelay_opt_round_trip_writes_the_weights_inline_and_runs(saved):
    done = xrelay_tool("xrelay_opt", saved / "m.mlir", "-o", saved / "rt.mlir")
    assert done.returncode == 0, done.stderr
    text = (saved / "rt.mlir").read_text()
    assert "dense_resource" not in text and "xrelay.weights" not in text
    assert '%w1 = arith.constant dense<"0x' in text
    (saved / "m.npz").unlink()  # the round-tripped module stands alone
    done = xrelay_tool("xrelay_run", saved / "rt.mlir", "--input", f"data={saved / 'x.npy'}", "-o", saved / "out.npy")
    assert done.returncode == 0, done.stderr
    np.testing.assert_allclose(np.load(saved / "out.npy"), reference(X), rtol=1e-5, atol=1e-6)


def test_xrelay_opt_keeps_a_handle_with_no_weights_file(tmp_path):
    (tmp_path / "e.mlir").write_text("%0 = arith.constant dense_resource<__elided_0a1b__> : tensor<20xf32>\n")
    done = xrelay_tool("xrelay_opt", tmp_path / "e.mlir")
    assert done.returncode == 0, done.stderr
    assert "%0 = arith.constant dense_resource<__elided_0a1b__> : tensor<20xf32>" in done.stdout


def run_failure(saved, model: str = "m.mlir") -> str:
    """xrelay-run's diagnostic for a broken pair: exit status 1, no traceback, no output file."""
    done = xrelay_tool("xrelay_run", saved / model, "--input", f"data={saved / 'x.npy'}", "-o", saved / "out.npy")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and not (saved / "out.npy").exists()
    assert done.stdout == ""
    return done.stderr


def line_col(path, needle: str) -> str:
    """`path:line:col` of the first line holding `needle`, the column that of its first `%`."""
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if needle in line:
            return f"{path}:{number}:{line.index('%') + 1}"
    raise AssertionError(needle)


def test_missing_weights_file_is_located_at_the_module(saved):
    (saved / "m.npz").unlink()
    assert run_failure(saved).startswith(f"{saved / 'm.mlir'}:1:1: error: cannot read the weights file "
                                         f"'{saved / 'm.npz'}' (xrelay.weights): No such file or directory\n")
    with pytest.raises(WeightsError, match="cannot read the weights file"):
        xrelay.Executable.load(saved / "m.mlir")


def test_another_builds_weights_file_is_refused(saved, executable, tmp_path_factory):
    other = tmp_path_factory.mktemp("other")
    with transform.PassContext(opt_level=3):
        changed = xrelay.build(Parser(make_context(), MODEL.replace(dense(W2), dense(W2 * 2))).parse_module())
    changed.save(other / "m.mlir")
    (other / "m.npz").replace(saved / "m.npz")
    assert run_failure(saved).startswith(f"{saved / 'm.mlir'}:1:1: error: the weights file '{saved / 'm.npz'}' "
                                         "is not this module's: its digest is '")


def test_a_weights_file_that_is_no_npz_is_refused(saved):
    np.save(saved / "w.npy", W1)
    (saved / "w.npy").replace(saved / "m.npz")
    assert run_failure(saved).startswith(f"{saved / 'm.mlir'}:1:1: error: the weights file '{saved / 'm.npz'}' "
                                         "(xrelay.weights) is not an .npz archive\n")


def write_archive(path, comment: bytes, arrays: dict) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        zf.comment = comment
        for name, array in arrays.items():
            with zf.open(f"{name}.npy", "w") as member:
                np.lib.format.write_array(member, array, allow_pickle=True)


def test_missing_wrong_or_pickled_array_is_located_at_its_constant(saved):
    comment = zipfile.ZipFile(saved / "m.npz").comment
    where = line_col(saved / "m.mlir", "dense_resource<w2>")
    write_archive(saved / "m.npz", comment, {"w1": W1})
    assert run_failure(saved).startswith(f"{where}: error: dense_resource<w2>: no array 'w2' in the weights file")
    write_archive(saved / "m.npz", comment, {"w1": W1, "w2": W2.T.copy()})
    assert run_failure(saved).startswith(f"{where}: error: dense_resource<w2> is tensor<4x8xf32>, but "
                                         f"'{saved / 'm.npz'}' holds float32 (8, 4)\n")
    write_archive(saved / "m.npz", comment, {"w1": W1, "w2": np.array([W2, None], dtype=object)})
    assert "Object arrays cannot be loaded when allow_pickle=False" in run_failure(saved)


def test_a_handle_without_a_weights_file_cannot_run(tmp_path):
    (tmp_path / "x.npy").write_bytes(b"")
    np.save(tmp_path / "x.npy", np.zeros(4, np.float32))
    (tmp_path / "e.mlir").write_text("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                                     "  %w = arith.constant dense_resource<w> : tensor<4xf32>\n"
                                     "  func.return %w : tensor<4xf32>\n}\n")
    assert run_failure(tmp_path, "e.mlir").startswith(
        f"{tmp_path / 'e.mlir'}:2:3: error: dense_resource<w> has no value: the module names no weights file")


def test_save_refuses_an_npz_path(executable, tmp_path):
    with pytest.raises(ValueError, match="overwritten by its own weights file"):
        executable.save(tmp_path / "m.npz")


@pytest.mark.slow  # builds ResNet-18 (seconds) and runs it in a second process
def test_saved_resnet18_is_small_ir_and_runs_in_xrelay_run(tmp_path):
    from xrelay.frontend import resnet

    mod, params = resnet.get_workload(num_layers=18)
    with transform.PassContext(opt_level=3):
        built = xrelay.build(mod, params)
    x = np.random.default_rng(0).random((1, 3, 224, 224), dtype=np.float32)
    built.save(tmp_path / "r18.built.mlir")
    assert (tmp_path / "r18.built.mlir").stat().st_size < 200_000  # the IR only: 93 MB with hex weights
    assert '"0x' not in (tmp_path / "r18.built.mlir").read_text()  # every weight is in the .npz
    np.save(tmp_path / "x.npy", x)
    done = xrelay_tool("xrelay_run", tmp_path / "r18.built.mlir", "--input", f"data={tmp_path / 'x.npy'}",
                       "-o", tmp_path / "out.npy", "--repeat", "1")
    assert done.returncode == 0, done.stderr
    assert "time to first result: " in done.stdout
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), built(x), rtol=1e-4, atol=1e-6)


def test_a_constant_numpy_has_no_dtype_for_stays_inline():
    from xrelay.weights_file import save_with_weights

    values = ", ".join(f"{i}.0" for i in range(20))
    module = Parser(make_context(), f"%0 = arith.constant dense<[{values}]> : tensor<20xbf16>\n"
                                    f"%1 = arith.constant dense<[{values}]> : tensor<20xf32>\n").parse_module()
    text, archive = save_with_weights(module, "a.mlir")
    assert "%0 = arith.constant dense<[0.000000e+00, 1.000000e+00," in text
    assert "%1 = arith.constant dense_resource<cst> : tensor<20xf32>" in text
    assert archive is not None
