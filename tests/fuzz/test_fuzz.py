"""A short seeded slice of the fuzzer (`make fuzz` runs it for longer), and checks that the fuzzer
itself detects what it is for: crashes, hangs, misplaced diagnostics, and shrinks reproducers."""

from __future__ import annotations

import re

import fuzzer
import pytest
from xdsl.utils.mlir_lexer import MLIRLexer

SLICE_CASES = 200


def test_seeded_slice_has_no_crash_hang_or_misplaced_diagnostic():
    report = fuzzer.fuzz(seed=0, cases=SLICE_CASES, time_limit=20.0, lowered_seeds=2, shrink_budget=40)
    assert sum(report.counts.values()) == SLICE_CASES
    # The mutations reach both outcomes that are fine: programs that still run and clean rejections.
    assert report.counts["ok"] > 0 and report.counts["error"] > 0, report.render()
    assert report.counts["crash"] == report.counts["hang"] == report.counts["misplaced"] == 0, report.render()


def test_pipelines_draw_from_every_registered_xrelay_pass():
    # A pass registered later but missing from the fuzzer's list would never be fuzzed by name.
    from xrelay.instrument.pass_manager import registered_passes

    pipeline_names = {
        name
        for name, factory in registered_passes().items()
        if "-" in name and name.islower() and getattr(factory, "__module__", "").startswith(("xrelay.passes.", "xrelay.lowering."))
    }
    fuzzed = {name.split("{")[0] for name in fuzzer.PASSES}
    assert pipeline_names - {"nn-bufferize"} <= fuzzed, sorted(pipeline_names - fuzzed)


def test_hang_is_detected_with_xdsl_own_string_pattern(monkeypatch):
    # xDSL 0.75's exponential pattern, put back for this test only (the forked worker inherits it).
    monkeypatch.setattr(MLIRLexer, "_unescaped_characters_regex",
                        re.compile(r'"(?:[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'))
    runner = fuzzer.Runner(time_limit=2.0)
    try:
        case = fuzzer.Case("opt", '"' + "a" * 60 + "\n", [fuzzer.MODEL])
        outcome = runner.run(case)
        assert fuzzer.classify(case, outcome) == ("hang", "hang"), outcome
        fine = fuzzer.Case("opt", "func.func @main() {\n  func.return\n}\n", [fuzzer.MODEL])
        assert fuzzer.classify(fine, runner.run(fine)) == ("ok", "")  # a fresh worker after the kill
    finally:
        runner.close()


def test_crash_is_classified_and_shrunk(monkeypatch):
    # An injected bug: running any module holding an nn.softmax raises an unexpected exception.
    import xrelay.runtime.reference.interpreter as interpreter

    real = interpreter.check_no_recursion

    def buggy(module):
        if any(op.name == "nn.softmax" for op in module.walk()):
            raise RuntimeError("injected")
        real(module)

    monkeypatch.setattr(interpreter, "check_no_recursion", buggy)
    from xrelay.frontend import tiny

    text = str(tiny.get_net(image_shape=(2, 4, 4), channels=2, num_classes=3))
    case = fuzzer.Case("run", text, [fuzzer.MODEL, "--level", "nn"])
    runner = fuzzer.Runner(time_limit=20.0)
    try:
        kind, signature = fuzzer.classify(case, runner.run(case))
        assert (kind, signature) == ("crash", "xrelay-run: error: internal error: RuntimeError: injected")
        small = fuzzer.shrink(case, runner, (kind, signature), budget=150)
    finally:
        runner.close()
    assert "nn.softmax" in small.text
    # The ops around the softmax that keep their operand's type (conv, batch_norm, relu) are gone.
    assert len(small.text.splitlines()) < len(text.splitlines()) - 2, small.text
    assert "nn.conv2d" not in small.text and "nn.relu" not in small.text, small.text


@pytest.mark.parametrize(
    ("text", "error", "problem"),
    [
        ("a\nb\n", "in.mlir:9:1: error: x", "line 9 outside the file"),
        ("a\nbb\n", "in.mlir:2:7: error: x", "column 7 outside line 2"),
        ("%0 = nn.relu(%x)\n%1 = nn.add(%0, %0)\n", "in.mlir:1:1: error: 'nn.add' op bad", "'nn.add' is not on line 1"),
        ("%0 = nn.relu(%x)\n", "in.mlir:1:1: error: 'nn.relu' op bad", None),
        ("x\n", "xrelay-run: error: no file", None),
        # Upstream prints func.return as `return` (found by a 10-minute `make fuzz` on the upstream seeds).
        ("  return %0 : f32\n", "in.mlir:1:3: error: 'func.return' op bad", None),
        # ... and builtin.module as `module` (found by `make fuzz FUZZ_SECONDS=480 FUZZ_SEED=1202`).
        ("module {\n", "in.mlir:1:1: error: 'builtin.module' op bad", None),
        ("  %0 = arith.addf\n", "in.mlir:1:3: error: 'arith.constant' op bad", "'arith.constant' is not on line 1"),
        ("  constant 1\n", "in.mlir:1:3: error: 'arith.constant' op bad", "'arith.constant' is not on line 1"),
    ],
)
def test_misplacement(text, error, problem):
    found = fuzzer.misplacement(text, error)
    assert (found is None) if problem is None else found.startswith(problem)


def test_classify_outcomes():
    case = fuzzer.Case("opt", "x\n", [fuzzer.MODEL])
    assert fuzzer.classify(case, fuzzer.Outcome(0, "")) == ("ok", "")
    assert fuzzer.classify(case, fuzzer.Outcome(1, "in.mlir:1:1: error: bad\n x\n ^\n")) == ("error", "")
    assert fuzzer.classify(case, fuzzer.Outcome(1, "xrelay-opt: error: internal error: KeyError: 'a'\n"))[0] == "crash"
    assert fuzzer.classify(case, fuzzer.Outcome(1, "a: error: one\nb: error: two\n"))[0] == "crash"
    echoed = "in.mlir:1:1: error: bad\n// CHECK: xrelay-opt: error: x\n^\n"  # a source line echoed
    assert fuzzer.classify(case, fuzzer.Outcome(1, echoed)) == ("error", "")
    assert fuzzer.classify(case, fuzzer.Outcome(1, "a: error: x\n", left_output=True))[0] == "crash"
    assert fuzzer.classify(case, fuzzer.Outcome(-1, "", escaped="ValueError: x (f.py:1)"))[0] == "crash"
    assert fuzzer.classify(case, None) == ("hang", "hang")
    # "Traceback" inside an echoed source line (a lit test's VERIFY-NOT line) is not a traceback.
    assert fuzzer.classify(case, fuzzer.Outcome(1, "in.mlir:1:1: error: bad\n// NOT: Traceback\n^\n")) == ("error", "")
    assert fuzzer.classify(case, fuzzer.Outcome(1, "in.mlir: error: x\nTraceback (most recent call last):\n"))[0] == "crash"
    # ... nor is "internal error" in an echoed source line (found by make fuzz FUZZ_SECONDS=1800 FUZZ_SEED=310507).
    echoed = "in.mlir:1:1: error: bad\n// (was an internal error)\n^\n"
    assert fuzzer.classify(case, fuzzer.Outcome(1, echoed)) == ("error", "")


def test_retype_changes_every_use_of_one_element_type():
    text = ("func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
            "  %0 = nn.relu(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
            "  func.return %0 : tensor<2x3xf32>\n}\n")

    class Pick:  # the first present type, replaced by f80
        def choice(self, options):
            return "f80" if "f80" in options else options[0]

    assert fuzzer._retype(text, Pick()) == text.replace("f32", "f80")


# Issue 31's three classes, each an internal error before: now one located diagnostic (class "error").
ISSUE_31_CASES = [
    ("run", "func.func @main(%x: tensor<2xi0>) -> tensor<2xi0> {\n"
            "  %0 = nn.relu(%x) : (tensor<2xi0>) -> tensor<2xi0>\n  func.return %0 : tensor<2xi0>\n}\n", []),
    ("run", "func.func @main(%x: memref<2xbf16>, %y: memref<2xbf16>) {\n"
            "  \"memref.copy\"(%x, %y) : (memref<2xbf16>, memref<2xbf16>) -> ()\n  func.return\n}\n", []),
    ("opt", "func.func @main(%x: tensor<0x3xf80>, %w: tensor<4x3xf80>) -> tensor<0x4xf80> {\n"
            "  %0 = nn.dense(%x, %w) : (tensor<0x3xf80>, tensor<4x3xf80>) -> tensor<0x4xf80>\n"
            "  %1 = nn.softmax(%0) : (tensor<0x4xf80>) -> tensor<0x4xf80>\n  func.return %1 : tensor<0x4xf80>\n}\n",
     ["-p", "convert-nn-to-linalg,nn-bufferize,linalg-to-loops", "--disable-verify"]),
    ("opt", "func.func @main() -> f80 {\n  %c = arith.constant 1.5 : f80\n  func.return %c : f80\n}\n", []),
    ("opt", "func.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32> {\n"
            "  %0 = nn.conv2d(%x, %w) {padding = array<i64: -9223372036854775808, 1, 1, 1>} : "
            "(tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>\n"
            "  func.return %0 : tensor<1x2x4x4xf32>\n}\n", ["-p", "convert-nn-to-linalg", "--disable-verify"]),
]


def test_issue_31_classes_are_located_errors():
    runner = fuzzer.Runner(time_limit=20.0)
    try:
        for tool, text, extra in ISSUE_31_CASES:
            case = fuzzer.Case(tool, text, [fuzzer.MODEL, *extra])
            outcome = runner.run(case)
            assert fuzzer.classify(case, outcome) == ("error", ""), (text, outcome)
            assert outcome.stderr.startswith(f"{fuzzer.MODEL}:"), outcome.stderr  # located
    finally:
        runner.close()
