"""Input that used to crash the tools ("internal error") or misplace its error: each class found by the
fuzzer (issue 11) is one located `file:line:col: error:` diagnostic, exit status 1, no traceback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from xrelay.tools import xrelay_opt, xrelay_run
from xrelay.tools.diagnostics import ECHO_WIDTH, echo_line

RELU_2 = "%0 = nn.relu(%x) : (tensor<2xf32>) -> tensor<2xf32>"

# (file text, the diagnostic's first line after "in.mlir:"); lines and columns counted by hand.
PARSE_AND_VERIFY_CASES = {
    "xdsl-keyerror-generic-func": (
        '"func.func"() ({\n  "func.return"() : () -> ()\n}) {sym_name = "main"} : () -> ()\n',
        "2:3: error: 'func.return' op is malformed (KeyError: 'function_type')",
    ),
    "xdsl-indexerror-transpose-permutation": (
        "func.func @main(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>) -> tensor<3x2xf32> {\n"
        "  %0 = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%y : tensor<3x2xf32>) permutation = [1, 5]\n"
        "  func.return %0 : tensor<3x2xf32>\n}\n",
        "2:3: error: 'linalg.transpose' op is malformed (IndexError: tuple index out of range)",
    ),
    "xdsl-assertion-complex-fill": (
        "func.func @main(%c: complex<f32>, %y: tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>> {\n"
        "  %0 = linalg.fill ins(%c : complex<f32>) outs(%y : tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>\n"
        "  func.return %0 : tensor<3xcomplex<f32>>\n}\n",
        "2:3: error: 'linalg.fill' op is malformed (AssertionError)",
    ),
    "xdsl-valueerror-iterator-type": (
        "#map = affine_map<(d0) -> (d0)>\n"
        "func.func @main(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {\n"
        '  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["bogus"]} '
        "ins(%x : tensor<2xf32>) outs(%y : tensor<2xf32>) {\n"
        "  ^bb0(%a: f32, %b: f32):\n    linalg.yield %a : f32\n  } -> tensor<2xf32>\n"
        "  func.return %0 : tensor<2xf32>\n}\n",
        "3:3: error: 'linalg.generic' op is malformed (ValueError: 'bogus' is not a valid IteratorType)",
    ),
    "xdsl-verify-during-parse-collapse": (
        "func.func @main(%x: tensor<2x3x4xf32>) -> tensor<8x3xf32> {\n"
        "  %0 = tensor.collapse_shape %x [[0, 2], [1]] : tensor<2x3x4xf32> into tensor<8x3xf32>\n"
        "  func.return %0 : tensor<8x3xf32>\n}\n",
        "2:3: error: 'tensor.collapse_shape' op All inner arrays must be contiguous: [[0 : i64, 2 : i64], [1 : i64]]",
    ),
    "xdsl-verify-during-parse-unranked": (
        "func.func @main(%x: memref<*xi32>) {\n  %c0 = arith.constant 0 : index\n"
        "  %v = memref.load %x[%c0] : memref<*xi32>\n  func.return\n}\n",
        "3:3: error: 'memref.load' op memref<*xi32> should be of base attribute memref",
    ),
    "integer-over-4300-digits": (
        "func.func @main() -> i64 {\n  %0 = arith.constant " + "9" * 5000 + " : i64\n  func.return %0 : i64\n}\n",
        "2:23: error: invalid attribute: Exceeds the limit (4300 digits) for integer string conversion: "
        "value has 5000 digits; use sys.set_int_max_str_digits() to increase the limit",
    ),
    "nested-types": (
        "func.func @main(%x: " + "tensor<" * 400 + "f32" + ">" * 400 + ") {\n  func.return\n}\n",
        None,  # the column where Python's stack runs out varies; the line and message do not
    ),
    "unclosed-function-body": (
        f"func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {{\n  {RELU_2}\n  func.return %0 : tensor<2xf32>\n",
        "4:1: error: unexpected end of input: expected '}' to close the region",
    ),
    "use-before-definition": (
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %1 = nn.relu(%0) : (tensor<2xf32>) -> tensor<2xf32>\n"
        f"  {RELU_2}\n  func.return %1 : tensor<2xf32>\n}}\n",
        "2:3: error: 'nn.relu' op operand #0 does not dominate this use",
    ),
    "use-before-definition-in-a-region": (
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %r = scf.execute_region -> tensor<2xf32> {\n"
        "    %1 = nn.relu(%0) : (tensor<2xf32>) -> tensor<2xf32>\n"
        "    scf.yield %1 : tensor<2xf32>\n  }\n"
        f"  {RELU_2}\n  func.return %r : tensor<2xf32>\n}}\n",
        "3:5: error: 'nn.relu' op operand #0 does not dominate this use",
    ),
    "location-after-a-function": (
        f"func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {{\n  {RELU_2}\n  func.return %0 : tensor<2xf32>\n}}\n"
        "func.func @main(%x: tensor<2xf32>) -> tensor<3xf32> {\n"
        "  %0 = nn.relu(%x) : (tensor<2xf32>) -> tensor<3xf32>\n  func.return %0 : tensor<3xf32>\n}\n",
        "6:3: error: 'nn.relu' op result types (tensor<3xf32>) differ from the inferred (tensor<2xf32>) "
        "for operand types (tensor<2xf32>)",
    ),
    "huge-splat-constant": (
        "func.func @main() -> tensor<99999999999xf32> {\n"
        "  %c = nn.constant dense<1.5> : tensor<99999999999xf32>\n  func.return %c : tensor<99999999999xf32>\n}\n",
        "2:33: error: dense constant of type tensor<99999999999xf32> has 99999999999 elements; "
        "at most 134217728 (2**27) in a parsed constant",
    ),
    "expand-dims-2-to-the-31": (
        "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %0 = nn.expand_dims(%x) {axis = 0 : i64, num_newaxis = 2147483648 : i64} : "
        "(tensor<2xf32>) -> tensor<2xf32>\n  func.return %x : tensor<2xf32>\n}\n",
        "2:3: error: 'nn.expand_dims' op num_newaxis 2147483648 would make rank 2147483649; at most 64 dimensions",
    ),
    "global-avg-pool-over-empty-dimension": (
        "func.func @main(%x: tensor<1x2x0x3xf32>) -> tensor<1x2x1x1xf32> {\n"
        "  %0 = nn.global_avg_pool2d(%x) : (tensor<1x2x0x3xf32>) -> tensor<1x2x1x1xf32>\n"
        "  func.return %0 : tensor<1x2x1x1xf32>\n}\n",
        "2:3: error: 'nn.global_avg_pool2d' op 'data' [1, 2, 0, 3] has an empty spatial dimension (H is 0)",
    ),
    "complex-conv": (
        "func.func @main(%x: tensor<1x1x3x3xcomplex<f32>>, %w: tensor<1x1x2x2xcomplex<f32>>) "
        "-> tensor<1x1x2x2xcomplex<f32>> {\n"
        "  %0 = nn.conv2d(%x, %w) : (tensor<1x1x3x3xcomplex<f32>>, tensor<1x1x2x2xcomplex<f32>>) "
        "-> tensor<1x1x2x2xcomplex<f32>>\n  func.return %0 : tensor<1x1x2x2xcomplex<f32>>\n}\n",
        "2:3: error: 'nn.conv2d' op operand 'data' has element type complex<f32>, which nn ops do not support (use f32, f16, f64, i32, i64)",
    ),
}


def one_error(err: str) -> str:
    assert "Traceback" not in err and "internal error" not in err, err
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert len(errors) == 1, err
    return errors[0]


@pytest.mark.parametrize("name", PARSE_AND_VERIFY_CASES)
def test_located_diagnostic(name, tmp_path: Path, capsys):
    text, expected = PARSE_AND_VERIFY_CASES[name]
    path = tmp_path / "in.mlir"
    path.write_text(text)
    assert xrelay_opt.main([str(path)]) == 1
    line = one_error(capsys.readouterr().err)
    if expected is None:
        assert line.startswith(f"{path}:1:") and line.endswith("error: nesting too deep"), line
    else:
        assert line == f"{path}:{expected}"


def test_deeply_nested_regions(tmp_path: Path, capsys):
    depth = 300
    text = "func.func @main() {\n"
    text += "".join("  " * i + "scf.execute_region {\n" for i in range(depth))
    text += "  scf.yield\n}\n" * depth + "func.return\n}\n"
    path = tmp_path / "in.mlir"
    path.write_text(text)
    assert xrelay_opt.main([str(path)]) == 1
    line = one_error(capsys.readouterr().err)
    assert line.startswith(f"{path}:") and line.endswith(": error: nesting too deep (regions, types or attributes)")


def test_long_source_line_is_cut_around_the_column(tmp_path: Path, capsys):
    padding = " " * 3_000_000
    text = f"func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {{\n  {RELU_2}{padding}%1 = nn.bogus(%0)\n}}\n"
    path = tmp_path / "in.mlir"
    path.write_text(text)
    assert xrelay_opt.main([str(path)]) == 1
    err = capsys.readouterr().err
    column = 3 + len(RELU_2) + len(padding) + len("%1 = ")
    head, source, carets = err.splitlines()[:3]
    assert head == f"{path}:2:{column}: error: Operation nn.bogus is not registered"
    assert len(source) <= ECHO_WIDTH + 6 and len(err) < 1000
    assert source[carets.index("^"):].startswith("nn.bogus")


def test_echo_line_windows():
    assert echo_line("abc", 1) == ["abc", " ^"]
    line = "x" * 1000 + "HERE" + "y" * 1000
    shown, carets = echo_line(line, 1000, 1004)
    assert shown.startswith("...") and shown.endswith("...")
    assert shown[carets.index("^"):carets.index("^") + 4] == "HERE" and carets.count("^") == 4
    shown, carets = echo_line("a" * 500, 499)  # at the very end: no trailing "..."
    assert not shown.endswith("...") and carets.index("^") == len(shown) - 1


# --- xrelay-run: xrelay's own code on odd but well-formed input ----------------------------------


def run_tool(capsys, argv) -> tuple[int, str, str]:
    status = xrelay_run.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "in.mlir"
    path.write_text(text)
    return path


RELU_MODEL = f"func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {{\n  {RELU_2}\n  func.return %0 : tensor<2xf32>\n}}\n"


@pytest.mark.parametrize("member", ["x", "x.npy", "notes.txt"])
def test_npz_member_that_is_not_npy(tmp_path: Path, capsys, member):
    import zipfile

    with zipfile.ZipFile(tmp_path / "p.npz", "w") as archive:
        archive.writestr(member, "hello")
    status, _, err = run_tool(capsys, [write(tmp_path, RELU_MODEL), "--params", tmp_path / "p.npz"])
    assert status == 1
    key = member.removesuffix(".npy")
    assert one_error(err) == f"xrelay-run: error: cannot load parameters from '{tmp_path / 'p.npz'}': " \
                             f"member '{key}' is not a .npy array"


@pytest.mark.parametrize("level", ["nn", "linalg", "memref", "loops"])
def test_rank0_argument_at_every_level(tmp_path: Path, capsys, level):
    model = write(tmp_path, "func.func @main(%x: tensor<f32>) -> tensor<f32> {\n"
                            "  %0 = nn.relu(%x) : (tensor<f32>) -> tensor<f32>\n  func.return %0 : tensor<f32>\n}\n")
    np.save(tmp_path / "s.npy", np.array(-3.0, np.float32))
    status, _, err = run_tool(capsys, [model, "--input", f"x={tmp_path / 's.npy'}", "--level", level,
                                       "-o", tmp_path / "out.npy"])
    assert status == 0, err
    result = np.load(tmp_path / "out.npy")
    assert result.shape == () and result == 0.0


CALL_MODEL = (
    f"func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {{\n  {RELU_2}\n  func.return %0 : tensor<2xf32>\n}}\n"
    "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
    "  %0 = func.call @f(%x) : (tensor<2xf32>) -> tensor<2xf32>\n  func.return %0 : tensor<2xf32>\n}\n"
)


def test_func_call_runs_at_nn_level_and_is_refused_when_lowered(tmp_path: Path, capsys):
    np.save(tmp_path / "x.npy", np.array([1.0, -2.0], np.float32))
    model = write(tmp_path, CALL_MODEL)
    status, _, err = run_tool(capsys, [model, "--input", f"x={tmp_path / 'x.npy'}", "-o", tmp_path / "o.npy"])
    assert status == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), [1.0, 0.0])
    status, _, err = run_tool(capsys, [model, "--input", f"x={tmp_path / 'x.npy'}", "--level", "linalg"])
    assert status == 1
    assert one_error(err) == ("xrelay-run: error: run: func.call runs only at the nn level; lowered levels "
                              "execute @main alone (inline the callee before lowering)")


def test_recursive_main(tmp_path: Path, capsys):
    np.save(tmp_path / "x.npy", np.array([1.0, -2.0], np.float32))
    model = write(tmp_path, "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                            "  %0 = func.call @g(%x) : (tensor<2xf32>) -> tensor<2xf32>\n  func.return %0 : tensor<2xf32>\n}\n"
                            "func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                            "  %0 = func.call @main(%x) : (tensor<2xf32>) -> tensor<2xf32>\n  func.return %0 : tensor<2xf32>\n}\n")
    status, _, err = run_tool(capsys, [model, "--input", f"x={tmp_path / 'x.npy'}"])
    assert status == 1
    assert one_error(err) == "xrelay-run: error: run: recursion is not supported (@main -> @g -> @main)"


def test_loop_bounds_past_the_buffer(tmp_path: Path, capsys):
    np.save(tmp_path / "x.npy", np.array([1.0, 2.0], np.float32))
    model = write(tmp_path, """\
func.func @main(%x: memref<2xf32>) -> memref<2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %o = memref.alloc() : memref<2xf32>
  scf.for %i = %c0 to %c5 step %c1 {
    %v = memref.load %x[%i] : memref<2xf32>
    memref.store %v, %o[%i] : memref<2xf32>
  }
  func.return %o : memref<2xf32>
}
""")
    status, _, err = run_tool(capsys, [model, "--input", f"x={tmp_path / 'x.npy'}"])
    assert status == 1
    assert one_error(err) == (f"xrelay-run: error: execution failed: {model}:7:5: loops level: memref.load index #0 "
                              "takes values 0..4, outside the memref's dimension of size 2")


def test_linalg_index_of_a_loop_its_op_lacks(tmp_path: Path, capsys):
    """Found by `make fuzz FUZZ_SECONDS=120 FUZZ_SEED=40` (an IndexError in the body program: xDSL's
    verifier bounds `linalg.index`'s dimension above, not below): one located error, no output file."""
    np.save(tmp_path / "x.npy", np.zeros((2, 5), np.float32))
    model = write(tmp_path, """\
func.func @main(%x: memref<2x5xf32>) -> memref<2xi64> {
  %o = memref.alloc() : memref<2xi64>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<2x5xf32>) outs(%o : memref<2xi64>) {
  ^bb0(%in: f32, %out: i64):
    %0 = linalg.index -1 : index
    %1 = arith.index_cast %0 : index to i64
    linalg.yield %1 : i64
  }
  func.return %o : memref<2xi64>
}
""")
    status, _, err = run_tool(capsys, [model, "--input", f"x={tmp_path / 'x.npy'}", "-o", tmp_path / "out.npy"])
    assert status == 1
    assert one_error(err) == (f"{model}:5:5: error: execution failed: invalid op linalg.index: dimension -1 is not "
                              "one of its op's 2 loops")
    assert not (tmp_path / "out.npy").exists()


def test_memref_used_after_its_dealloc(tmp_path: Path, capsys):
    """Found by `make fuzz FUZZ_SECONDS=900 FUZZ_SEED=1302` (a TypeError inside a kernel, reading the
    dropped buffer): a read or a second dealloc after `memref.dealloc` is one located error, no output."""
    np.save(tmp_path / "x.npy", np.array([1.0, -2.0], np.float32))
    generic = ("linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], "
               "iterator_types = [\"parallel\"]}} ins({0} : memref<2xf32>) outs({1} : memref<2xf32>) {{\n"
               "  ^bb0(%a: f32, %b: f32):\n    linalg.yield %a : f32\n  }}")
    for op, second_use in (("linalg.generic", "%r = memref.alloc() : memref<2xf32>\n  " + generic.format("%t", "%r")),
                           ("memref.dealloc", "memref.dealloc %t : memref<2xf32>\n  %r = memref.alloc() : memref<2xf32>")):
        model = write(tmp_path, f"""\
func.func @main(%x: memref<2xf32>) -> memref<2xf32> {{
  %t = memref.alloc() : memref<2xf32>
  {generic.format("%x", "%t")}
  memref.dealloc %t : memref<2xf32>
  {second_use}
  func.return %r : memref<2xf32>
}}
""")
        out = tmp_path / "out.npy"
        status, _, err = run_tool(capsys, [model, "--level", "memref", "--input", f"x={tmp_path / 'x.npy'}",
                                           "-o", out])
        assert status == 1 and not out.exists()
        line = 9 if op == "linalg.generic" else 8
        assert one_error(err) == (f"xrelay-run: error: execution failed: {model}:{line}:3: {op} uses a memref "
                                  f"after its memref.dealloc ({model}:7:3)")


@pytest.mark.parametrize(("name", "type_", "message"), [
    ("v", "2xf32", "memref.get_global: the module has no memref.global @v"),
    ("w", "3xf32", "memref.get_global @w returns memref<3xf32>, but the global is memref<2xf32>"),
])
def test_get_global_of_a_missing_or_mistyped_global(tmp_path: Path, capsys, name, type_, message):
    """Found by `make fuzz FUZZ_SECONDS=300 FUZZ_SEED=1901` (a KeyError in the loops executor's table of
    globals): a `memref.get_global` of no global, or of one of another type, is one located error."""
    np.save(tmp_path / "x.npy", np.array([1.0, -2.0], np.float32))
    model = write(tmp_path, f"""\
memref.global "private" constant @w : memref<2xf32> = dense<[1.0, 2.0]>
func.func @main(%x: memref<2xf32>) -> memref<2xf32> {{
  %c = memref.get_global @{name} : memref<{type_}>
  %r = memref.alloc() : memref<2xf32>
  %i = arith.constant 0 : index
  %v = memref.load %c[%i] : memref<{type_}>
  memref.store %v, %r[%i] : memref<2xf32>
  func.return %r : memref<2xf32>
}}
""")
    out = tmp_path / "out.npy"
    status, _, err = run_tool(capsys, [model, "--level", "loops", "--input", f"x={tmp_path / 'x.npy'}", "-o", out])
    assert status == 1 and not out.exists()
    assert one_error(err) == f"xrelay-run: error: execution failed: {model}:3:3: {message}"


@pytest.mark.parametrize("level", ["nn", "linalg", "loops"])
def test_ieee_results_without_warnings(tmp_path: Path, capsys, level):
    # 0/0 = nan, 1/1 = 1 at every level (the loops level used Python's raising division), and a
    # successful run prints no numpy RuntimeWarning.
    np.save(tmp_path / "x.npy", np.array([0.0, 1.0, -4.0], np.float32))
    model = write(tmp_path, "func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
                            "  %0 = nn.divide(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
                            "  %1 = nn.sqrt(%x) : (tensor<3xf32>) -> tensor<3xf32>\n"
                            "  %2 = nn.add(%0, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>\n"
                            "  func.return %2 : tensor<3xf32>\n}\n")
    status, _, err = run_tool(capsys, [model, "--input", f"x={tmp_path / 'x.npy'}", "--level", level,
                                       "-o", tmp_path / "o.npy"])
    assert status == 0 and err == ""
    result = np.load(tmp_path / "o.npy")
    assert np.isnan(result[0]) and result[1] == 2.0 and np.isnan(result[2])


def test_main_with_several_blocks(tmp_path: Path, capsys):
    np.save(tmp_path / "x.npy", np.array([1.0, 2.0], np.float32))
    model = write(tmp_path, "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                            "  cf.br ^bb1\n^bb1:\n  func.return %x : tensor<2xf32>\n}\n")
    status, _, err = run_tool(capsys, [model, "--input", f"x={tmp_path / 'x.npy'}"])
    assert status == 1
    assert one_error(err) == f"{model}:1:1: error: @main has 2 blocks; xrelay runs single-block functions only"
