"""docs/porting-from-tvm.md is true: TVM's tutorial "How to Use TVM Pass Instrument" (its code, taken from
tests/data/tvm_pass_instrument_tutorial.txt, a copy of shared/seed/pass_instrument_tutorial.txt), with
exactly the table's substitutions applied in order as text replacements, runs on xrelay and prints what
TVM printed there: the IR module, two timing trees of the same shape, the per-pass op diff (operator names
in the nn dialect, as the table says) and the exception demos line for line.

The tutorial's code is its paragraphs that compile as Python (an indented paragraph continues the code
before it: a class whose methods are separated by blank lines); prose and printed output do not compile.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
from pathlib import Path

import pytest

from doc_blocks import REPO, code_blocks, run_python
from tutorial_seed import SEED_EXCEPTION_DEMOS
from xrelay.instrument import pass_context

TUTORIAL = (Path(__file__).parent / "data" / "tvm_pass_instrument_tutorial.txt").read_text()
PORTING = (REPO / "docs" / "porting-from-tvm.md").read_text()
TIMING_LINE = re.compile(r"^(\t*)(\w+): (\d+)us \[(\d+)us\] \((\d+\.\d\d)%; (\d+\.\d\d)%\)$")
DIFF_HEADER = "Printing the change in number of occurrences of each operator caused by each pass...\n"


def tutorial_code(text: str) -> list[str]:
    code: list[str] = []
    for paragraph in text.split("\n\n"):
        if paragraph.startswith(" ") and code and _compiles(code[-1] + "\n\n" + paragraph):
            code[-1] += "\n\n" + paragraph
        elif paragraph.strip() and _compiles(paragraph):
            code.append(paragraph)
    return code


def _compiles(text: str) -> bool:
    try:
        compile(text, "<tutorial>", "exec")
    except SyntaxError:
        return False
    return True


def substitutions(markdown: str) -> list[tuple[str, str]]:
    """The rows of the "Substitutions" table: (TVM text, xrelay text), "—" meaning the empty text."""
    section = markdown.split("## Substitutions", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`"):
            rows.append((cells[0][1:-1], "" if cells[1] == "—" else cells[1][1:-1]))
    return rows


def seed_output_after(header: str) -> str:
    """The tutorial's printed block that starts with `header`."""
    return header + TUTORIAL.split("\n\n" + header, 1)[1].split("\n\n", 1)[0] + "\n"


def test_the_tutorial_code_is_found():
    code = tutorial_code(TUTORIAL)
    assert len(code) == 22  # counted by hand: every code paragraph of the tutorial, classes whole
    assert code[0].startswith("import tvm\n") and code[-1] == "cur_pass_ctx.override_instruments([])"
    assert any(c.startswith("@pass_instrument\nclass RelayCallNodeDiffer:") and "def _diff(" in c for c in code)


@pytest.fixture(scope="module")
def ported() -> tuple[str, str, list[int]]:
    """The ported program, its stdout, and how often each substitution applied."""
    program = "\n\n".join(tutorial_code(TUTORIAL)) + "\n"
    used = []
    for tvm, xrelay in substitutions(PORTING):
        used.append(program.count(tvm))
        program = program.replace(tvm, xrelay)
    out = io.StringIO()
    pass_context._state.default = None  # the tutorial installs instruments on the global context
    try:
        with contextlib.redirect_stdout(out):
            run_python(program, "<ported tutorial>")
    finally:
        pass_context._state.default = None
    assert not pass_context._state.stack, "the tutorial left a PassContext entered"
    return program, out.getvalue(), used


def test_every_substitution_is_used_and_no_tvm_is_left(ported):
    program, _, used = ported
    assert len(used) == 14 and all(used), used
    code = re.sub(r"#.*", "", program)  # comments may still say "relay.Function"
    assert not re.search(r"\btvm\b|\brelay\.", code)


def test_prints_the_ir_module(ported):
    _, out, _ = ported
    assert out.startswith("Printing the IR module...\nbuiltin.module {\n  func.func @main(%data: tensor<1x3x224x224xf32>")
    assert out.count("nn.conv2d(") == 21  # ResNet-18's: the seed's Relay text has 21 nn.conv2d calls too
    assert TUTORIAL.count(" = nn.conv2d(") == 21


def test_prints_two_timing_trees_of_the_seeds_shape(ported):
    _, out, _ = ported
    seed_tree = seed_output_after("Printing results of timing profile...\n").splitlines()[1:]
    # The seed's page shows TVM's tab indentation as eight spaces.
    shape = [TIMING_LINE.match(line.replace(" " * 8, "\t")).group(1, 2) for line in seed_tree]
    trees = [block.splitlines()[:len(shape)] for block in out.split("Printing results of timing profile...\n")[1:]]
    assert len(trees) == 2
    for tree in trees:
        assert [TIMING_LINE.match(line).group(1, 2) for line in tree] == shape


def test_prints_the_seeds_op_diff_in_nn_names(ported):
    _, out, _ = ported
    seed = ast.literal_eval(seed_output_after(DIFF_HEADER).removeprefix(DIFF_HEADER))
    in_nn = [(depth, name, {op if op.startswith("nn.") else f"nn.{op}": n for op, n in diff.items()})
             for depth, name, diff in seed]
    printed = out.split(DIFF_HEADER, 1)[1]
    assert ast.literal_eval(printed[:printed.index("]\n") + 1]) == in_nn


def test_prints_the_exception_demos_line_for_line(ported):
    _, out, _ = ported
    assert out.endswith(SEED_EXCEPTION_DEMOS)  # the seed's printed lines of the four demos and the clearings


def test_the_other_names_block_runs(capsys):
    block = next(b for b in code_blocks(PORTING) if b.kind == "python")
    run_python(block.text, "docs/porting-from-tvm.md")
    printed = capsys.readouterr()
    assert "func.func @main(%data: tensor<1x3x8x8xf32>" in printed.out + printed.err
