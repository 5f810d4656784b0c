"""The tutorial port prints what TVM's tutorial prints (shared/seed/pass_instrument_tutorial.txt).

Expected texts are copied from the seed (tests/tutorial_seed.py); timings differ run to run, so the
timing trees are compared by shape (names and nesting) and by the arithmetic of their percentages.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tutorial_seed import SEED_EXCEPTION_DEMOS, SEED_OP_DIFF

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "pass_instrument_tutorial.py"

TIMING_LINE = re.compile(r"^(\t*)(\w+): (\d+)us \[(\d+)us\] \((\d+\.\d\d)%; (\d+\.\d\d)%\)$")


@pytest.fixture(scope="module")
def tutorial_output() -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def timing_trees(out: str) -> list[list[str]]:
    trees = []
    for block in out.split("Printing results of timing profile...\n")[1:]:
        trees.append([line for line in block.splitlines() if TIMING_LINE.match(line)][:4])
    return trees


def test_prints_resnet18_ir(tutorial_output):
    assert "Printing the IR module..." in tutorial_output
    assert re.search(r"func\.func @main\(%data ?: tensor<1x3x224x224xf32>", tutorial_output)
    assert "%conv0_weight" in tutorial_output
    assert tutorial_output.count("nn.conv2d(") == 21


def test_timing_trees_have_the_seeds_shape(tutorial_output):
    trees = timing_trees(tutorial_output)
    assert len(trees) == 2
    for tree in trees:
        shape = [(len(m.group(1)), m.group(2)) for m in map(TIMING_LINE.match, tree)]
        assert shape == [(0, "InferType"), (0, "FoldScaleAxis"), (1, "FoldConstant"), (2, "InferType")]
        rows = [TIMING_LINE.match(line) for line in tree]
        total = [int(r.group(3)) for r in rows]
        self_ = [int(r.group(4)) for r in rows]
        # self = total minus children; the top-level parent is the sum of top-level totals.
        assert self_[0] == total[0] and self_[3] == total[3]
        assert abs(self_[2] - (total[2] - total[3])) <= 1
        assert abs(self_[1] - (total[1] - total[2])) <= 1
        top = total[0] + total[1]
        assert abs(float(rows[1].group(5)) - 100 * total[1] / top) < 0.1


def test_op_diff_is_the_seeds(tutorial_output):
    assert SEED_OP_DIFF in tutorial_output


def test_exception_demos_line_for_line(tutorial_output):
    assert tutorial_output.endswith(SEED_EXCEPTION_DEMOS)
