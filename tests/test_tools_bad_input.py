"""QA: bad input to xrelay-opt / xrelay-run is one clear diagnostic naming the place, exit status 1,
no traceback and no output file (docs/architecture.md §6). Cases found by hostile-user testing."""

from __future__ import annotations

import pytest

from xrelay.tools import xrelay_opt, xrelay_run


def run_tool(main, argv, capsys):
    try:
        status = main(argv)
    except SystemExit as exit_:  # argparse's usage errors
        status = exit_.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def check_one_diagnostic(status: int, out: str, err: str, tmp_path) -> list[str]:
    assert status == 1
    assert out == ""
    assert "Traceback" not in err and "internal error" not in err
    assert not (tmp_path / "out.mlir").exists() and not (tmp_path / "out.npy").exists()
    return err.rstrip("\n").split("\n")


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


UNRANKED = """func.func @main(%x: tensor<*xf32>) -> tensor<*xf32> {
  %0 = nn.relu(%x) : (tensor<*xf32>) -> tensor<*xf32>
  func.return %0 : tensor<*xf32>
}
"""

MEMREF = """func.func @main(%x: memref<1x4xf32>) -> memref<1x4xf32> {
  %0 = nn.relu(%x) : (memref<1x4xf32>) -> memref<1x4xf32>
  func.return %0 : memref<1x4xf32>
}
"""


@pytest.mark.parametrize(
    "text, reason",
    [(UNRANKED, "tensor<*xf32> should be of base attribute tensor"),
     (MEMREF, "memref<1x4xf32> should be of base attribute tensor")],
    ids=["unranked", "memref"],
)
def test_operand_constraint_error_keeps_its_reason(tmp_path, capsys, text, reason):
    # xDSL's message is two lines ("operand 'data' at position 0 does not verify:" + the reason);
    # the diagnostic must not stop at the colon.
    path = write(tmp_path, "m.mlir", text)
    lines = check_one_diagnostic(*run_tool(xrelay_opt.main, [path, "-o", str(tmp_path / "out.mlir")], capsys),
                                 tmp_path)
    assert lines[0].startswith(f"{path}:2:3: error: 'nn.relu' op operand 'data' at position 0 does not verify")
    assert lines[0].endswith(reason)
    assert len(lines) == 3  # the message, the source line, the caret


DYNAMIC_CONV = """func.func @main(%x: tensor<1x3x?x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x?x6xf32> {
  %0 = nn.conv2d(%x, %w) : (tensor<1x3x?x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x6xf32>
  func.return %0 : tensor<1x4x?x6xf32>
}
"""

DYNAMIC_RELU = """func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = nn.relu(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}
"""


@pytest.mark.parametrize("text, op, operand, type_", [
    (DYNAMIC_CONV, "nn.conv2d", "data", "tensor<1x3x?x8xf32>"),
    (DYNAMIC_RELU, "nn.relu", "data", "tensor<?x4xf32>"),
], ids=["conv2d", "relu"])
def test_dynamic_dimensions_are_a_verifier_error(tmp_path, capsys, text, op, operand, type_):
    # nn ops compute static shapes; a `?` dimension used to be read as -9223372036854775808.
    path = write(tmp_path, "m.mlir", text)
    lines = check_one_diagnostic(*run_tool(xrelay_opt.main, [path, "-o", str(tmp_path / "out.mlir")], capsys),
                                 tmp_path)
    assert lines[0] == (f"{path}:2:3: error: '{op}' op operand '{operand}' has a dynamic shape ({type_}); "
                        "nn ops need static shapes")
    assert "-9223372036854775808" not in "\n".join(lines)


@pytest.mark.parametrize("text", ["", "// only a comment\n\n"], ids=["empty", "comment-only"])
@pytest.mark.parametrize("tool", ["opt", "run"])
def test_empty_input_file_says_so(tmp_path, capsys, text, tool):
    # xDSL's own words were "1:1: error: Could not parse entire input!" above an empty source line.
    path = write(tmp_path, "m.mlir", text)
    main = xrelay_opt.main if tool == "opt" else xrelay_run.main
    lines = check_one_diagnostic(*run_tool(main, [path], capsys), tmp_path)
    assert lines == [f"{path}: error: no operation in the input (the file is empty or holds only comments)"]


GOOD = """func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = nn.relu(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %0 : tensor<1x4xf32>
}
"""


@pytest.mark.parametrize("flags, message", [
    (["--numerical-bisect", "--numerical-bisect-rtol", "nan"],
     "argument --numerical-bisect-rtol: must be a finite number >= 0, got 'nan'"),
    (["--numerical-bisect", "--numerical-bisect-atol", "-1"],
     "argument --numerical-bisect-atol: must be a finite number >= 0, got '-1'"),
    (["--print-ir-after-all", "--elide-constants-if-larger", "-3"],
     "argument --elide-constants-if-larger: must be an int >= 0, got '-3'"),
    (["--opt-bisect-limit", "-7"],
     "argument --opt-bisect-limit: must be -1 (no limit) or an int >= 0, got '-7'"),
])
def test_out_of_range_flag_values_are_usage_errors(tmp_path, capsys, flags, message):
    # They used to be accepted: a NaN tolerance made every pass drift, -7 meant "no limit".
    path = write(tmp_path, "m.mlir", GOOD)
    lines = check_one_diagnostic(*run_tool(xrelay_opt.main, [path, "-p", "infer-type", *flags], capsys), tmp_path)
    assert len(lines) == 1 and lines[0].endswith(f": error: {message}")  # prog is argv[0] under pytest


def test_numerical_bisect_bad_input_name_does_not_blame_a_pass(tmp_path, capsys):
    # Was "pass 'pipeline' failed: ..." although no pass ran: the instrument refused the input.
    import numpy as np

    path = write(tmp_path, "m.mlir", GOOD)
    np.save(tmp_path / "x.npy", np.zeros((1, 4), np.float32))
    lines = check_one_diagnostic(*run_tool(
        xrelay_opt.main,
        [path, "-p", "infer-type", "--numerical-bisect", "--numerical-bisect-input", f"zzz={tmp_path / 'x.npy'}",
         "-o", str(tmp_path / "out.mlir")], capsys), tmp_path)
    assert lines == ["xrelay-opt: error: numerical-bisect: the model does not run on the pipeline's input: "
                     "@main has no argument(s) ['zzz']; its arguments are ['x']"]


def test_dense_literal_shape_mismatch_points_at_the_literal(tmp_path, capsys):
    # xDSL noticed the mismatch after reading the type and pointed at the next line's op.
    text = """func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = nn.constant dense<[1.0, 2.0]> : tensor<1x4xf32>
  func.return %0 : tensor<1x4xf32>
}
"""
    path = write(tmp_path, "m.mlir", text)
    lines = check_one_diagnostic(*run_tool(xrelay_opt.main, [path], capsys), tmp_path)
    assert lines[0] == (f"{path}:2:20: error: Shape mismatch in dense literal. Expected [1, 4] shape from the type, "
                        "but got [2] shape.")
    assert lines[1] == "  %0 = nn.constant dense<[1.0, 2.0]> : tensor<1x4xf32>"


@pytest.mark.parametrize("attribute, reason", [
    ("axis = 300 : i8", "Integer value 300 is out of range for type i8"),
    ("axis = -99999999999999999999 : i64", "Integer value -99999999999999999999 is out of range for type i64"),
    ("note = array<i648>", "Format not implemented for i648"),
])
def test_attribute_xdsl_cannot_build_is_a_parse_error_at_the_attribute(tmp_path, capsys, attribute, reason):
    # xDSL raised VerifyException / NotImplementedError while parsing: "internal error" without a place.
    text = f"""func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {{
  %0 = nn.softmax(%x) {{{attribute}}} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %0 : tensor<1x4xf32>
}}
"""
    path = write(tmp_path, "m.mlir", text)
    lines = check_one_diagnostic(*run_tool(xrelay_opt.main, [path], capsys), tmp_path)
    column = text.split("\n")[1].index("=", text.split("\n")[1].index("{")) + 3  # first character of the value
    assert lines[0].startswith(f"{path}:2:{column}: error: invalid attribute: {reason}")
    assert len(lines) == 3


def test_xrelay_run_dynamic_argument_is_named_as_such(tmp_path, capsys):
    # No nn op checks the type here; the message used to show shape (-9223372036854775808, 4).
    import numpy as np

    text = """func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  func.return %x : tensor<?x4xf32>
}
"""
    path = write(tmp_path, "m.mlir", text)
    np.save(tmp_path / "x.npy", np.zeros((3, 4), np.float32))
    lines = check_one_diagnostic(*run_tool(xrelay_run.main, [path, "--input", f"x={tmp_path / 'x.npy'}",
                                                             "-o", str(tmp_path / "out.npy")], capsys), tmp_path)
    assert lines[0] == (f"{path}:1:1: error: 'func.func' op argument 'x' has type tensor<?x4xf32> with a dynamic "
                        "dimension, which xrelay-run cannot feed")


def test_an_exception_without_text_is_named_by_its_type(tmp_path, capsys, monkeypatch):
    # A MemoryError while building a huge splat constant printed "invalid attribute: " and nothing else.
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

    def out_of_memory(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(DenseIntOrFPElementsAttr, "from_list", out_of_memory)
    text = """func.func @main() -> tensor<2xf32> {
  %0 = nn.constant dense<1.0> : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
"""
    path = write(tmp_path, "m.mlir", text)
    lines = check_one_diagnostic(*run_tool(xrelay_opt.main, [path], capsys), tmp_path)
    assert lines[0] == f"{path}:2:20: error: invalid attribute: MemoryError"


@pytest.mark.parametrize("line, words", [
    ('// xrelay-reproducer: required-pass: [1, 2]', "'required-pass' must be a list of pass names, got [1, 2]"),
    ('// xrelay-reproducer: disabled-pass: "FoldConstant"',
     "'disabled-pass' must be a list of pass names, got \"FoldConstant\""),
])
def test_reproducer_pass_lists_must_be_lists_of_names(tmp_path, capsys, line, words):
    # [1, 2] was an internal error; a string was split into one-letter pass names.
    path = write(tmp_path, "r.mlir", f'// xrelay-reproducer: pipeline: "infer-type"\n{line}\n{GOOD}')
    lines = check_one_diagnostic(*run_tool(xrelay_opt.main, ["--run-reproducer", path], capsys), tmp_path)
    assert lines == [f"xrelay-opt: error: {path}:2: {words}"]


@pytest.mark.parametrize("flag, value, words", [
    ("--print-ir-after", "fold-constnt", "unknown pass 'fold-constnt' in --print-ir-after (did you mean 'fold-constant'?)"),
    ("--print-ir-before", "InferTyp", "unknown pass 'InferTyp' in --print-ir-before (did you mean 'InferType'?)"),
])
def test_print_ir_selector_that_is_a_misspelt_name_is_an_error(tmp_path, capsys, flag, value, words):
    # Selectors match whole pass names, so a misspelt name printed nothing, silently.
    path = write(tmp_path, "m.mlir", GOOD)
    lines = check_one_diagnostic(*run_tool(xrelay_opt.main, [path, "-p", "fold-constant", f"{flag}={value}",
                                                             "-o", str(tmp_path / "out.mlir")], capsys), tmp_path)
    assert lines == [f"xrelay-opt: error: {words}"]


@pytest.mark.parametrize("selector", ["Fold.*", "sequential", "InferType", "fold-constant", "ForwardFoldScaleAxis"])
def test_print_ir_selectors_that_name_passes_or_are_regexes_still_work(tmp_path, capsys, selector):
    path = write(tmp_path, "m.mlir", GOOD)
    status, out, err = run_tool(xrelay_opt.main, [path, "-p", "fold-constant", f"--print-ir-after={selector}"], capsys)
    assert status == 0 and "error" not in err


def test_truncated_npy_is_called_corrupt_not_foreign(tmp_path, capsys):
    # It said "not a .npy or .npz file" about a .npy whose data was cut short.
    import numpy as np

    path = write(tmp_path, "m.mlir", GOOD)
    np.save(tmp_path / "x.npy", np.ones((1, 4), np.float32))
    data = (tmp_path / "x.npy").read_bytes()
    (tmp_path / "x.npy").write_bytes(data[:-5])
    lines = check_one_diagnostic(*run_tool(xrelay_run.main, [path, "--input", f"x={tmp_path / 'x.npy'}"], capsys),
                                 tmp_path)
    assert len(lines) == 1
    assert lines[0].startswith(f"xrelay-run: error: cannot load input 'x' from '{tmp_path / 'x.npy'}': "
                               "truncated or corrupt .npy file (")


@pytest.mark.parametrize("flags, message", [
    (["--numerical-bisect-input", "x=x.npy"], "--numerical-bisect-input needs --numerical-bisect"),
    (["--elide-constants-if-larger", "4"],
     "--elide-constants-if-larger needs a --print-ir-* flag or --print-ir-diff"),
])
def test_an_option_of_an_absent_tool_is_an_error(tmp_path, capsys, flags, message):
    # They were ignored without a word, as if the tool had run.
    path = write(tmp_path, "m.mlir", GOOD)
    lines = check_one_diagnostic(*run_tool(xrelay_opt.main, [path, "-p", "infer-type", *flags], capsys), tmp_path)
    assert lines == [f"xrelay-opt: error: {message}"]


def test_arithmetic_error_while_running_is_an_execution_failure_not_an_internal_error(tmp_path, capsys, monkeypatch):
    # The loops executor raised ZeroDivisionError on an integer division by a zero input element.
    import numpy as np

    import xrelay.runtime

    def divide_by_zero(*args, **kwargs):
        return 1 // 0

    monkeypatch.setattr(xrelay.runtime, "run", divide_by_zero)
    path = write(tmp_path, "m.mlir", GOOD)
    np.save(tmp_path / "x.npy", np.zeros((1, 4), np.float32))
    lines = check_one_diagnostic(*run_tool(xrelay_run.main, [path, "--input", f"x={tmp_path / 'x.npy'}",
                                                             "-o", str(tmp_path / "out.npy")], capsys), tmp_path)
    assert lines == ["xrelay-run: error: execution failed: ZeroDivisionError: integer division or modulo by zero"]
