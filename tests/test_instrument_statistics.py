"""Pass statistics (MLIR's `--mlir-pass-statistics`): counters checked against hand counts on small
modules, MLIR's report text in both displays, the xrelay-opt flags."""

import io

import pytest
from xdsl.parser import Parser

from xrelay import passes, transform
from xrelay.dialects import make_context
from xrelay.instrument.statistics import PassStatisticsInstrument, Statistic
from xrelay.tools.xrelay_opt import main

HEADER = (
    "===-------------------------------------------------------------------------===\n"
    "                         ... Pass statistics report ...\n"
    "===-------------------------------------------------------------------------===\n"
)

# add(c1, c2) and relu of it fold (2); c1, c2, then the add's constant become unused (3 erased).
FOLDABLE = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c1 = nn.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %c2 = nn.constant dense<[-5.0, 1.0, -1.0, 2.0]> : tensor<4xf32>
  %a = nn.add(%c1, %c2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = nn.relu(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %o = nn.add(%x, %r) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %o : tensor<4xf32>
}
"""

# NHWC: the data and the weight are transformed in (2); relu follows the conv's layout; softmax over the
# last axis is layout-sensitive, so the relu's result is transformed back (1).
CONV = """
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %c = nn.conv2d(%x, %w) {channels = 4 : i64, kernel_size = array<i64: 3, 3>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = nn.relu(%c) : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %s = nn.softmax(%r) : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  func.return %s : tensor<1x4x6x6xf32>
}
"""

# Two dead ops (a chain) and a live one.
DEAD = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d1 = nn.relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %d2 = nn.negative(%d1) : (tensor<4xf32>) -> tensor<4xf32>
  %o = nn.relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %o : tensor<4xf32>
}
"""


def parse(text):
    return Parser(make_context(), text).parse_module()


def run_with_statistics(text, pipeline, display="pipeline"):
    stream = io.StringIO()
    stats = PassStatisticsInstrument(display, stream=stream)
    with transform.PassContext(opt_level=3, instruments=[stats]):
        pipeline(parse(text))
    return stats, stream.getvalue()


def counts_of(stats, name):
    def walk(runs):
        for run in runs:
            yield run
            yield from walk(run.children)

    return [{stat.name: value for stat, value in run.counts.items()} for run in walk(stats.runs) if run.name == name]


def test_fold_constant_counts_and_the_pipeline_display():
    stats, text = run_with_statistics(FOLDABLE, transform.Sequential([passes.FoldConstant()]))
    assert counts_of(stats, "FoldConstant") == [{"num-folded": 2, "num-constants-erased": 3, "num-rewrites": 2}]
    assert text == HEADER + (
        "sequential\n"
        "  FoldConstant\n"
        "    (S) 3 num-constants-erased - Number of unused constants erased\n"
        "    (S) 2 num-folded           - Number of ops evaluated into constants\n"
        "    (S) 2 num-rewrites         - Number of ops a rewrite pattern changed\n"
        "    InferType\n"
    )


def test_list_display_sums_runs_of_a_pass_and_leaves_out_passes_without_counters():
    pipeline = transform.Sequential([passes.FoldConstant(), passes.FoldConstant()])
    _, text = run_with_statistics(FOLDABLE, pipeline, "list")
    # The second run folds nothing: the sums are the first run's; InferType and sequential have no counters.
    assert text == HEADER + (
        "  FoldConstant\n"
        "    (S) 3 num-constants-erased - Number of unused constants erased\n"
        "    (S) 2 num-folded           - Number of ops evaluated into constants\n"
        "    (S) 2 num-rewrites         - Number of ops a rewrite pattern changed\n"
    )


def test_convert_layout_and_dead_code_counts():
    stats, _ = run_with_statistics(CONV, passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}))
    assert counts_of(stats, "ConvertLayout") == [{"num-convs-converted": 1, "num-layout-transforms": 3}]
    stats, _ = run_with_statistics(DEAD, passes.DeadCodeElimination())
    assert counts_of(stats, "DeadCodeElimination") == [{"num-erased": 2}]


def test_counters_count_only_while_watched_and_only_for_the_innermost_run():
    stat = Statistic("num-test", "A test counter")
    stat.add()  # nobody watches: nothing happens

    @transform.module_pass(opt_level=0, name="Outer")
    def outer(mod, ctx):
        stat.add(2)
        mod = inner(mod)
        stat.add()
        return mod

    @transform.module_pass(opt_level=0, name="Inner")
    def inner(mod, ctx):
        stat.add(5)
        return mod

    stream = io.StringIO()
    stats = PassStatisticsInstrument(stream=stream)
    with transform.PassContext(instruments=[stats]):
        outer(parse(DEAD))
    assert counts_of(stats, "Outer") == [{"num-test": 3}]
    assert counts_of(stats, "Inner") == [{"num-test": 5}]
    assert stream.getvalue() == HEADER + (
        "Outer\n"
        "  (S) 3 num-test - A test counter\n"
        "  Inner\n"
        "    (S) 5 num-test - A test counter\n"
    )


def test_bad_display_is_an_error():
    with pytest.raises(ValueError, match="list, pipeline"):
        PassStatisticsInstrument("tree")


def test_xrelay_opt_pass_statistics_flags(tmp_path, capsys):
    path = tmp_path / "fold.mlir"
    path.write_text(FOLDABLE)
    assert main([str(path), "-p", "fold-constant", "--pass-statistics", "--pass-statistics-display=list",
                 "-o", str(tmp_path / "out.mlir")]) == 0
    assert capsys.readouterr().err == HEADER + (
        "  FoldConstant\n"
        "    (S) 3 num-constants-erased - Number of unused constants erased\n"
        "    (S) 2 num-folded           - Number of ops evaluated into constants\n"
        "    (S) 2 num-rewrites         - Number of ops a rewrite pattern changed\n"
    )
    assert main([str(path), "-p", "fold-constant", "--pass-statistics", "-o", str(tmp_path / "out.mlir")]) == 0
    assert capsys.readouterr().err.startswith(HEADER + "sequential\n  FoldConstant\n")
    assert main([str(path), "-p", "fold-constant", "--pass-statistics-display=list"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "xrelay-opt: error: --pass-statistics-display needs --pass-statistics\n"


def test_two_collectors_both_count():
    first, second = (PassStatisticsInstrument(print_on_exit=False) for _ in range(2))
    with transform.PassContext(opt_level=3, instruments=[first, second]):
        passes.FoldConstant()(parse(FOLDABLE))
    assert counts_of(first, "FoldConstant") == counts_of(second, "FoldConstant") == [
        {"num-folded": 2, "num-constants-erased": 3, "num-rewrites": 2}]
