"""QA: a pass that fails inside an xDSL rewrite pattern reports the failing op, not a print of the
whole module (xDSL's pattern walker attaches one as an exception note; with bound ResNet-18
weights that is ~90 MB in every traceback)."""

from __future__ import annotations

import subprocess
import sys
import traceback

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from xrelay import passes, transform
from xrelay.dialects import make_context, nn

# A constant folded by FoldConstant into a result whose stored type is wrong (only possible with
# the verifier off): the kernel returns (1, 4), the op claims (1, 5).
BAD_FOLD = """
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x5xf32> {
  %a = nn.constant dense<1.0> : tensor<1x4xf32>
  %b = nn.relu(%a) : (tensor<1x4xf32>) -> tensor<1x5xf32>
  %c = nn.relu(%b) : (tensor<1x5xf32>) -> tensor<1x5xf32>
  func.return %c : tensor<1x5xf32>
}
"""

BIG_ELEMENTS = 200_000  # a 0.8 MB constant: its hex print alone is 1.6 MB


def bad_fold_module(with_big_constant: bool) -> ModuleOp:
    module = Parser(make_context(), BAD_FOLD).parse_module()
    if with_big_constant:
        # An unused-by-the-failure big constant, as bound weights are.
        main = next(iter(module.ops))
        first = main.body.block.first_op
        main.body.block.insert_op_before(nn.ConstantOp(np.arange(BIG_ELEMENTS, dtype=np.float32)), first)
    return module


def notes_size(error: BaseException) -> int:
    return sum(len(note) for note in getattr(error, "__notes__", ()))


def test_fold_constant_failure_names_the_op_without_printing_the_module():
    module = bad_fold_module(with_big_constant=True)
    with pytest.raises(ValueError, match=r"nn.relu kernel returned shape \(1, 4\)") as caught:
        passes.FoldConstant()(module)
    error = caught.value
    formatted = "".join(traceback.format_exception(error))
    assert len(formatted) < 20_000, f"traceback is {len(formatted)} characters"
    notes = "\n".join(getattr(error, "__notes__", ()))
    assert "nn.relu(%a)" in notes  # the failing op is named, the big constant is not printed
    assert "0x00000000" not in notes  # the hex of arange starts with 0.0


class _RaiseOnRelu(RewritePattern):
    def match_and_rewrite(self, op, rewriter: PatternRewriter) -> None:
        if op.name == "nn.relu":
            raise RuntimeError("pattern failed on purpose")


class _FailingXdslPass(ModulePass):
    name = "qa-failing-pattern"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(_RaiseOnRelu()).rewrite_module(op)


def test_wrapped_xdsl_pass_failure_keeps_notes_small():
    module = bad_fold_module(with_big_constant=True)
    with pytest.raises(RuntimeError, match="pattern failed on purpose") as caught:
        transform.Sequential([_FailingXdslPass()])(module)
    assert notes_size(caught.value) < 5_000
    assert '"nn.relu"(%a)' in "\n".join(caught.value.__notes__)


def test_small_module_notes_are_cut_to_the_failing_op_too():
    # The excerpt does not depend on the module's size: the op line and xDSL's marker box.
    with pytest.raises(RuntimeError) as caught:
        transform.Sequential([_FailingXdslPass()])(bad_fold_module(with_big_constant=False))
    notes = "\n".join(caught.value.__notes__)
    assert '"nn.relu"(%a)' in notes
    assert "func.return" not in notes


def test_xrelay_opt_pass_failure_is_one_short_diagnostic(tmp_path):
    path = tmp_path / "bad_fold.mlir"
    module = bad_fold_module(with_big_constant=True)
    path.write_text(str(module))
    proc = subprocess.run(
        [sys.executable, "-m", "xrelay.tools.xrelay_opt", str(path), "--disable-verify", "-p", "fold-constant",
         "-o", str(tmp_path / "out.mlir")],
        capture_output=True, text=True, env={"XRELAY_TRACEBACK": "", "PATH": ""},
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr) < 2_000, proc.stderr[:500]
    lines = proc.stderr.split("\n")
    assert lines[0].startswith(f"{path}:")
    assert lines[0].endswith(": error: pass 'FoldConstant' failed on 'nn.relu': ValueError: FoldConstant: "
                             "nn.relu kernel returned shape (1, 4), the op's type is tensor<1x5xf32>")
    assert "nn.relu(%a)" in lines[1] and lines[2].strip() == "^"
    assert not (tmp_path / "out.mlir").exists()


def test_xrelay_pass_failure_names_the_op_and_never_prints_the_module(monkeypatch):
    # xrelay's own passes rewrite through `rewrite_module`: a failing pattern skips xDSL's print of
    # the whole module (seconds for bound ResNet-18) and says which op failed.
    from xdsl.utils.diagnostic import Diagnostic

    def no_print(*args, **kwargs):
        raise AssertionError("xDSL printed the module for a diagnostic")

    monkeypatch.setattr(Diagnostic, "raise_exception", no_print)
    module = bad_fold_module(with_big_constant=True)
    with pytest.raises(ValueError, match="nn.relu kernel returned shape") as caught:
        passes.FoldConstant()(module)
    error = caught.value
    assert error.failing_op.name == "nn.relu"
    assert [note for note in error.__notes__ if note.startswith("while rewriting")] == [
        "while rewriting %b = nn.relu(%a) : (tensor<1x4xf32>) -> tensor<1x5xf32>"]


def test_xrelay_opt_names_the_place_of_the_op_a_pass_failed_on(tmp_path):
    path = tmp_path / "bad_fold.mlir"
    path.write_text(BAD_FOLD)
    proc = subprocess.run(
        [sys.executable, "-m", "xrelay.tools.xrelay_opt", str(path), "--disable-verify", "-p", "fold-constant"],
        capture_output=True, text=True, env={"XRELAY_TRACEBACK": "", "PATH": ""},
    )
    assert proc.returncode == 1
    assert proc.stderr.split("\n") == [
        f"{path}:4:3: error: pass 'FoldConstant' failed on 'nn.relu': ValueError: FoldConstant: nn.relu kernel "
        "returned shape (1, 4), the op's type is tensor<1x5xf32>",
        "  %b = nn.relu(%a) : (tensor<1x4xf32>) -> tensor<1x5xf32>",
        "  ^",
        "",
    ]
