"""xrelay-opt: the pipeline through a PassContext, its flags, and one clean diagnostic per bad input."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.dialects.builtin import Float32Type, ModuleOp, TensorType
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException, PassFailedException, VerifyException

from tool_passes import DENSE_MODEL

from xrelay.instrument import PassInstrument
from xrelay.pass_base import XRelayPass, rewrite_module
from xrelay.passes import ALL_PASSES
from xrelay.tools import xrelay_opt
from xrelay.tools.diagnostics import run_tool
from xrelay.tools.xrelay_opt import InstrumentFlag, main

BIAS_ADD_LINE = (
    "%1 = nn.bias_add(%0, %b) {axis = -1 : i64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>"
)
ADD_LINE = "%1 = nn.add(%0, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>"


def opt(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.mlir"
    path.write_text(DENSE_MODEL)
    return path


def assert_one_diagnostic(err: str) -> str:
    """The stderr of a failed run: no traceback, exactly one `error:` line; returns that line."""
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert len(errors) == 1, err
    return errors[0]


# --- happy paths -------------------------------------------------------------------------------


def test_prints_the_parsed_module(capsys, model):
    status, out, err = opt(capsys, str(model))
    assert status == 0 and err == ""
    lines = [line.strip() for line in out.splitlines()]
    assert lines[0] == "builtin.module {"
    assert BIAS_ADD_LINE in lines
    assert "func.return %2 : tensor<2x4xf32>" in lines


def test_output_file_has_the_printed_module_and_no_temporary_is_left(capsys, model, tmp_path):
    _, printed, _ = opt(capsys, str(model), "-p", "infer-type")
    status, out, err = opt(capsys, str(model), "-p", "infer-type", "-o", str(tmp_path / "out.mlir"))
    assert (status, out, err) == (0, "", "")
    assert (tmp_path / "out.mlir").read_text() == printed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.mlir", "out.mlir"]


@pytest.mark.parametrize(
    "flags, rewritten",
    [
        ([], False),  # CanonicalizeOps has opt level 3 > the default 2
        (["--opt-level", "3"], True),
        (["--opt-level", "3", "--disabled-pass", "CanonicalizeOps"], False),
        (["--opt-level", "3", "--disabled-pass", "canonicalize-ops"], False),  # pipeline name too
        (["--required-pass", "CanonicalizeOps"], True),
        (["--required-pass", "InferType,canonicalize-ops"], True),  # comma list
        (["--required-pass", "InferType", "--required-pass", "CanonicalizeOps"], True),  # repeated
        (["--opt-level", "0", "--required-pass", "CanonicalizeOps"], True),
    ],
)
def test_pass_context_flags_filter_the_pipeline(capsys, model, flags, rewritten):
    status, out, _ = opt(capsys, str(model), "-p", "canonicalize-ops", *flags)
    assert status == 0
    lines = [line.strip() for line in out.splitlines()]
    assert (ADD_LINE in lines) == rewritten
    assert (BIAS_ADD_LINE in lines) == (not rewritten)


TIMING_LINE = re.compile(r"^(\t*)(\S+): (\d+)us \[(\d+)us\] \((\d+\.\d\d)%; (\d+\.\d\d)%\)$")


def parse_timing(err: str) -> list[tuple[int, str, int, int, float, float]]:
    rows = []
    for line in err.splitlines():
        match = TIMING_LINE.match(line)
        assert match, f"not a timing line: {line!r}"
        tabs, name, total, own, of_all, of_parent = match.groups()
        rows.append((len(tabs), name, int(total), int(own), float(of_all), float(of_parent)))
    return rows


def test_pass_timing_prints_tvms_tree_on_stderr(capsys, model):
    status, out, err = opt(capsys, str(model), "-p", "infer-type,fold-constant", "--pass-timing")
    assert status == 0 and out.startswith("builtin.module")
    rows = parse_timing(err)
    # The pipeline's Sequential on top; FoldConstant runs InferType as a nested pass (as in Relay).
    assert [(depth, name) for depth, name, *_ in rows] == [
        (0, "sequential"), (1, "InferType"), (1, "FoldConstant"), (2, "InferType"),
    ]
    (_, _, seq_total, seq_self, seq_all, seq_parent) = rows[0]
    assert (seq_all, seq_parent) == (100.0, 100.0)
    # self = total - children (each printed rounded to 1 us).
    assert abs(seq_self - (seq_total - rows[1][2] - rows[2][2])) <= 2
    fold_total, fold_self = rows[2][2], rows[2][3]
    assert abs(fold_self - (fold_total - rows[3][2])) <= 2
    # Percentages: of all top-level time, and of the parent.
    for depth, _, total, _, of_all, of_parent in rows[1:]:
        parent_total = seq_total if depth == 1 else fold_total
        assert of_all == pytest.approx(100 * total / seq_total, abs=0.02 + 100 / seq_total)
        assert of_parent == pytest.approx(100 * total / parent_total, abs=0.02 + 100 / parent_total)


def test_pass_timing_with_nothing_run_warns(capsys, model):
    status, _, err = opt(capsys, str(model), "--pass-timing")
    assert status == 0
    assert err == "Warning: no passes have been profiled, did you enable pass profiling?\n"


def test_xdsl_flags_keep_working(capsys, model, tmp_path):
    status, out, _ = opt(capsys, str(model), "--print-op-generic")
    assert status == 0 and '"nn.relu"(%1) : (tensor<2x4xf32>) -> tensor<2x4xf32>' in out
    # --time-passes means --pass-timing (issue 28: one meaning): the timing tree on stderr, none on stdout.
    status, out, err = opt(capsys, str(model), "-p", "infer-type,canonicalize", "--time-passes")
    assert status == 0 and "took" not in out and out.startswith("builtin.module")
    tree = re.compile(r"^(\t*)(\w+): \d+us \[\d+us\] \(\d+\.\d\d%; \d+\.\d\d%\)$")
    assert [tree.match(line).group(1, 2) for line in err.splitlines()] == [
        ("", "sequential"), ("\t", "InferType"), ("\t", "canonicalize")]
    split = tmp_path / "split.mlir"
    split.write_text(DENSE_MODEL + "\n// -----\n" + DENSE_MODEL.replace("@main", "@second"))
    status, out, _ = opt(capsys, str(split), "--split-input-file")
    assert status == 0 and out.count("builtin.module") == 2 and "// -----" in out


# --- the instrument-flag extension point ----------------------------------------------------------


def test_instrument_flags_extension_point(capsys, model, request):
    events: list[tuple[str, str]] = []

    class Recorder(PassInstrument):
        def run_before_pass(self, mod, info):
            events.append(("before", info.name))

        def run_after_pass(self, mod, info):
            events.append(("after", info.name))

    flag = InstrumentFlag(
        "--record", "test recorder",
        make=lambda args, tool: Recorder() if args.record else None,
        finish=lambda inst, tool: events.append(("finish", inst.name)),
    )
    xrelay_opt.register_instrument_flag(flag)
    request.addfinalizer(lambda: xrelay_opt.INSTRUMENT_FLAGS.remove(flag))
    status, _, _ = opt(capsys, str(model), "-p", "infer-type", "--record")
    assert status == 0
    assert events == [
        ("before", "sequential"), ("before", "InferType"), ("after", "InferType"), ("after", "sequential"),
        ("finish", "Recorder"),
    ]
    events.clear()
    assert opt(capsys, str(model), "-p", "infer-type")[0] == 0
    assert events == []  # flag not given: no instrument


# --- bad input: one diagnostic, exit 1, no traceback, no output file ------------------------------------


UNDEFINED = """\
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = nn.relu(%y) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %1 : tensor<2xf32>
}
"""

SYNTAX = """\
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = nn.relu(%x) (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
"""

BAD_SHAPE = """\
func.func @main(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %0 = nn.relu(%x) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    %1 = nn.max_pool2d(%0) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %1 : tensor<1x4x8x8xf32>
}
"""


@pytest.mark.parametrize(
    "text, extra, expected",
    [
        # Column of the use of %y: "  %1 = nn.relu(" is 15 characters.
        (UNDEFINED, [], "{path}:3:16: error: use of undefined value %y"),
        (SYNTAX, [], "{path}:2:20: error: "),
        (BAD_SHAPE, [], "{path}:3:5: error: 'nn.max_pool2d' op result types (tensor<1x4x8x8xf32>) differ from the "
                        "inferred (tensor<1x4x4x4xf32>)"),
        (DENSE_MODEL, ["-p", "fold-constnt"],
         "pass-pipeline:1:1: error: unknown pass 'fold-constnt' (did you mean 'fold-constant'?)"),
        (DENSE_MODEL, ["-p", "infer-type,canonicalize{bogus=1}"],
         "pass-pipeline:1:12: error: invalid options for pass 'canonicalize': "),
        (DENSE_MODEL, ["-p", "infer-type{"], "pass-pipeline:1:12: error: invalid pass pipeline: "),
        (DENSE_MODEL, ["-p", "infer-type", "--disabled-pass", "InferTyp"],
         "xrelay-opt: error: unknown pass 'InferTyp' in --disabled-pass (did you mean 'InferType'?)"),
    ],
    ids=["undefined-value", "syntax", "verifier", "unknown-pass", "bad-option", "pipeline-syntax", "unknown-name"],
)
def test_bad_input_gives_one_located_diagnostic(capsys, tmp_path, text, extra, expected):
    path = tmp_path / "in.mlir"
    path.write_text(text)
    out_file = tmp_path / "out.mlir"
    out_file.write_text("previous contents\n")
    status, out, err = opt(capsys, str(path), *extra, "-o", str(out_file))
    assert status == 1
    assert out == ""
    assert assert_one_diagnostic(err).startswith(expected.format(path=path))
    assert out_file.read_text() == "previous contents\n"  # never clobbered by a failed run
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.mlir", "out.mlir"]


def test_verifier_error_shows_the_source_line(capsys, tmp_path):
    path = tmp_path / "in.mlir"
    path.write_text(BAD_SHAPE)
    _, _, err = opt(capsys, str(path))
    assert err.splitlines()[1:] == [BAD_SHAPE.splitlines()[2], "    ^"]


def test_missing_files(capsys, tmp_path, model):
    status, _, err = opt(capsys, str(tmp_path / "nope.mlir"))
    assert status == 1
    assert assert_one_diagnostic(err) == (
        f"xrelay-opt: error: cannot access input file '{tmp_path / 'nope.mlir'}': No such file or directory"
    )
    status, _, err = opt(capsys, str(model), "-o", str(tmp_path / "no-dir" / "out.mlir"))
    assert status == 1
    assert "cannot write output file" in assert_one_diagnostic(err)


def test_split_input_file_locations_count_from_the_top(capsys, tmp_path):
    path = tmp_path / "split.mlir"
    path.write_text(DENSE_MODEL + "\n// -----\n" + BAD_SHAPE)
    status, _, err = opt(capsys, str(path), "--split-input-file")
    line = DENSE_MODEL.count("\n") + 2 + 3  # the blank line and the separator, then line 3 of BAD_SHAPE
    assert status == 1
    assert assert_one_diagnostic(err).startswith(f"{path}:{line}:5: error: 'nn.max_pool2d' op")


# --- failing passes ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RaisingPass(ModulePass):
    name = "test-raise"

    def apply(self, ctx, op: ModuleOp) -> None:
        raise RuntimeError("boom")


@dataclass(frozen=True)
class BreakTypesPass(ModulePass):
    """Gives every nn.relu a result type its operand cannot produce."""

    name = "test-break-types"

    def apply(self, ctx, op: ModuleOp) -> None:
        for inner in list(op.walk()):
            if inner.name == "nn.relu":
                Rewriter.replace_value_with_new_type(inner.results[0], TensorType(Float32Type(), [9]))


@pytest.fixture
def test_passes(monkeypatch):
    monkeypatch.setitem(ALL_PASSES, "test-raise", lambda: RaisingPass)
    monkeypatch.setitem(ALL_PASSES, "test-break-types", lambda: BreakTypesPass)


def test_a_failing_pass_is_named_and_timing_still_renders(capsys, model, tmp_path, test_passes):
    out_file = tmp_path / "out.mlir"
    status, out, err = opt(capsys, str(model), "-p", "infer-type,test-raise", "--pass-timing", "-o", str(out_file))
    assert status == 1 and out == ""
    assert assert_one_diagnostic(err) == "xrelay-opt: error: pass 'test-raise' failed: RuntimeError: boom"
    timing = [line for line in err.splitlines() if "error" not in line and "XRELAY_TRACEBACK" not in line]
    assert [(depth, name) for depth, name, *_ in parse_timing("\n".join(timing))] == [
        (0, "sequential"), (1, "InferType"), (1, "test-raise"),
    ]
    assert not out_file.exists()


def test_a_pass_producing_invalid_ir_is_caught_at_the_op(capsys, model, test_passes):
    status, _, err = opt(capsys, str(model), "-p", "test-break-types,infer-type")
    assert status == 1
    line = assert_one_diagnostic(err)
    assert line.startswith(f"{model}:4:3: error: 'nn.relu' op ")
    assert line.endswith("(in the IR produced by pass 'test-break-types')")


class _RaiseOnRelu(RewritePattern):
    """Raises `error` (a class) on the first nn.relu, as a pattern checking its input would."""

    def __init__(self, error: type[Exception]):
        self.error = error

    def match_and_rewrite(self, op, rewriter: PatternRewriter) -> None:
        if op.name == "nn.relu":
            raise self.error("relu is not allowed here")


@pytest.mark.parametrize("error", [VerifyException, PassFailedException, DiagnosticException, ValueError])
def test_an_exception_of_any_kind_in_a_pattern_is_located_at_its_op(capsys, model, monkeypatch, error):
    @dataclass(frozen=True)
    class Refuse(XRelayPass):
        name = "test-refuse"
        tvm_name = "Refuse"

        def apply(self, ctx, op: ModuleOp) -> None:
            rewrite_module(_RaiseOnRelu(error), op)

    monkeypatch.setitem(ALL_PASSES, "test-refuse", lambda: Refuse)
    status, out, err = opt(capsys, str(model), "-p", "test-refuse")
    assert (status, out) == (1, "")
    assert err.splitlines()[0] == (f"{model}:4:3: error: pass 'Refuse' failed on 'nn.relu': "
                                   f"{error.__name__}: relu is not allowed here")
    assert err.splitlines()[2].strip() == "^"


def test_verify_diagnostics_prints_and_succeeds(capsys, tmp_path):
    path = tmp_path / "in.mlir"
    path.write_text(BAD_SHAPE)
    status, out, err = opt(capsys, str(path), "--verify-diagnostics")
    assert status == 0 and err == ""
    assert out.startswith("nn.max_pool2d: result types (tensor<1x4x8x8xf32>) differ")


# --- internal errors and the real console script ------------------------------------------------------------


def test_internal_errors_are_one_line_unless_asked(capsys, monkeypatch):
    def body():
        raise KeyError("oops")

    monkeypatch.delenv("XRELAY_TRACEBACK", raising=False)
    assert run_tool("tool", body) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[0] == "tool: error: internal error: KeyError: 'oops'"
    assert "Traceback" not in err
    monkeypatch.setenv("XRELAY_TRACEBACK", "1")
    assert run_tool("tool", body) == 1
    assert "Traceback" in capsys.readouterr().err


def test_console_script(tmp_path, model):
    script = Path(sys.executable).parent / "xrelay-opt"
    bad = tmp_path / "bad.mlir"
    bad.write_text(UNDEFINED)
    env = {k: v for k, v in os.environ.items() if k != "XRELAY_TRACEBACK"}
    done = subprocess.run([script, bad], capture_output=True, text=True, env=env)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        f"{bad}:3:16: error: use of undefined value %y\n"
        "  %1 = nn.relu(%y) : (tensor<2xf32>) -> tensor<2xf32>\n"
        "               ^^\n"
    )
    done = subprocess.run([script, model, "-p", "infer-type"], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and BIAS_ADD_LINE in done.stdout


def test_file_extension_and_encoding(capsys, tmp_path):
    text_file = tmp_path / "model.txt"
    text_file.write_text(DENSE_MODEL)
    status, _, err = opt(capsys, str(text_file))
    assert status == 1
    assert assert_one_diagnostic(err) == (
        f"{text_file}: error: Unrecognized file extension 'txt' (use -f mlir to read it as MLIR)"
    )
    status, out, _ = opt(capsys, "-f", "mlir", str(text_file))
    assert status == 0 and BIAS_ADD_LINE in out
    binary = tmp_path / "binary.mlir"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    status, _, err = opt(capsys, str(binary))
    assert status == 1
    assert assert_one_diagnostic(err) == f"{binary}: error: not a UTF-8 text file (invalid start byte at byte 0)"


@pytest.mark.parametrize("tool", ["xrelay-opt", "xrelay-run"])
def test_bad_command_line_is_one_line_and_exit_1(tool, tmp_path):
    done = subprocess.run(
        [str(Path(sys.executable).parent / tool), "--no-such-flag", str(tmp_path / "m.mlir")],
        capture_output=True, text=True, check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"{tool}: error: unrecognized arguments: --no-such-flag"]
    assert done.stdout == ""
