"""Rewrite-pattern tracing (instrument/pattern_trace.py): per-pattern counts checked against hand counts on
small modules, for the stock `canonicalize` and xrelay's pattern passes, and the xrelay-opt flags."""

import pytest
from xdsl.parser import Parser
from xdsl.pattern_rewriter import PatternRewriteWalker

from xrelay import passes, transform
from xrelay.dialects import make_context
from xrelay.instrument.pattern_trace import PatternTrace
from xrelay.tools.xrelay_opt import main
from test_instrument_statistics import FOLDABLE

# canonicalize: the applier folds `x + 0` to x (erases the addi) and erases the unused c0 and the dead
# muli itself; ConstantProp swaps `5 + a` to `a + 5` (creates an addi, erases one); nothing else applies.
ARITH = """
func.func @main(%x: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c5 = arith.constant 5 : i32
  %a = arith.addi %x, %c0 : i32
  %b = arith.addi %c5, %a : i32
  %dead = arith.muli %x, %x : i32
  func.return %b : i32
}
"""

BIAS_ADD = """
func.func @main(%x: tensor<1x3xf32>, %b: tensor<3xf32>) -> tensor<1x3xf32> {
  %y = nn.bias_add(%x, %b) {axis = -1 : i64} : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  func.return %y : tensor<1x3xf32>
}
"""


POOL_AFTER_CONV = """
func.func @main(%x: tensor<1x8x4x4xf32>, %w: tensor<4x8x1x1xf32>) -> tensor<1x4x2x2xf32> {
  %c = nn.conv2d(%x, %w) {channels = 4 : i64, kernel_size = array<i64: 1, 1>} : (tensor<1x8x4x4xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x4x4xf32>
  %p = nn.avg_pool2d(%c) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>) -> tensor<1x4x2x2xf32>
  func.return %p : tensor<1x4x2x2xf32>
}
"""


def trace(text, pipeline, **options):
    tracer = PatternTrace(**options)
    with transform.PassContext(opt_level=3, instruments=[tracer]):
        pipeline(Parser(make_context(), text).parse_module())
    return tracer


def table(tracer, pass_name):
    (run,) = [run for run in tracer.runs if run.name == pass_name]
    return {name: (c.applied, c.created, c.erased) for name, c in run.patterns.items()}


def test_canonicalize_counts():
    tracer = trace(ARITH, transform.get_pass("canonicalize"), log=True)
    assert table(tracer, "canonicalize") == {
        "GreedyRewritePatternApplier": (3, {}, {"arith.addi": 1, "arith.constant": 1, "arith.muli": 1}),
        "SignlessIntegerBinaryOperationConstantProp": (1, {"arith.addi": 1}, {"arith.addi": 1}),
        "SignlessIntegerBinaryOperationZeroOrUnitRight": (0, {}, {}),
        "(post-walk region_dce)": (0, {}, {}),
    }
    assert sorted((a.pattern, a.op_name) for a in tracer.applications) == [
        ("GreedyRewritePatternApplier", "arith.addi"),
        ("GreedyRewritePatternApplier", "arith.constant"),
        ("GreedyRewritePatternApplier", "arith.muli"),
        ("SignlessIntegerBinaryOperationConstantProp", "arith.addi"),
    ]


def test_fold_constant_counts_one_try_per_op():
    tracer = trace(FOLDABLE, passes.FoldConstant())
    (run,) = tracer.runs
    counts = run.patterns["FoldConstantOp"]
    # One forward walk: func.func, c1, c2, add, relu, the last add, return; the add and the relu fold into
    # new constants; the add, the relu, c1, c2 and the add's constant are erased.
    assert (counts.tried, counts.applied) == (7, 2)
    assert counts.created == {"nn.constant": 2}
    assert counts.erased == {"nn.add": 1, "nn.relu": 1, "nn.constant": 3}
    assert list(run.patterns) == ["FoldConstantOp"]
    assert not tracer.applications  # no log unless asked


def test_pattern_pass_counts_and_the_walker_is_put_back():
    original = PatternRewriteWalker.rewrite_region
    tracer = trace(BIAS_ADD, passes.CanonicalizeOps())
    assert table(tracer, "CanonicalizeOps") == {"BiasAddToAdd": (1, {"nn.add": 1}, {"nn.bias_add": 1})}
    assert [run.name for run in tracer.runs] == ["CanonicalizeOps"]
    assert PatternRewriteWalker.rewrite_region is original


def test_a_greedy_applier_subclass_is_traced():
    # PoolAfterPointwiseConv's pattern is a GreedyRewritePatternApplier subclass with its own __init__:
    # pool(conv1x1(x)) with a 2x2 stride-2 pool becomes conv1x1(pool(x)) (fewer multiply-adds).
    tracer = trace(POOL_AFTER_CONV, passes.PoolAfterPointwiseConv())
    assert table(tracer, "PoolAfterPointwiseConv") == {
        "CheaperPoolOrder": (0, {}, {}),
        "SwapAvgPoolAndPointwiseConv": (0, {}, {}),
        "PoolBeforePointwiseConv": (1, {"nn.avg_pool2d": 1, "nn.conv2d": 1}, {"nn.avg_pool2d": 1, "nn.conv2d": 1}),
    }


def test_a_failing_pass_puts_the_walker_back():
    original = PatternRewriteWalker.rewrite_region

    @transform.module_pass(opt_level=0, name="Fails")
    def fails(mod, ctx):
        passes.CanonicalizeOps()(mod)
        raise RuntimeError("boom")

    tracer = PatternTrace()
    with pytest.raises(RuntimeError, match="boom"), transform.PassContext(instruments=[tracer]):
        fails(Parser(make_context(), BIAS_ADD).parse_module())
    assert PatternRewriteWalker.rewrite_region is original
    assert table(tracer, "CanonicalizeOps") == {"BiasAddToAdd": (1, {"nn.add": 1}, {"nn.bias_add": 1})}


def test_xrelay_opt_trace_patterns_flags(tmp_path, capsys):
    path = tmp_path / "arith.mlir"
    path.write_text(ARITH)
    assert main([str(path), "-p", "canonicalize", "--trace-patterns-log", "-o", str(tmp_path / "out.mlir")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[:3] == [
        "===-------------------------------------------------------------------------===",
        "                          ... Pattern rewrite report ...",
        "===-------------------------------------------------------------------------===",
    ]
    assert err[3] == "canonicalize (depth 1)"
    assert err[4].split() == ["pattern", "tried", "applied", "created", "erased", "time", "(ms)"]
    rows = {line.split()[0]: line.split()[1:5] for line in err[5:9]}
    assert rows["SignlessIntegerBinaryOperationConstantProp"][1:] == ["1", "1", "1"]
    assert rows["GreedyRewritePatternApplier"][1:] == ["3", "0", "3"]
    # ARITH's lines 5, 6, 7 and 4 (the muli, found dead, then the operand folded into it, then its constant).
    assert sorted(line for line in err if line.startswith("applied:")) == sorted([
        f"applied: canonicalize: GreedyRewritePatternApplier on arith.addi at {path}:5:3",
        f"applied: canonicalize: GreedyRewritePatternApplier on arith.muli at {path}:7:3",
        f"applied: canonicalize: GreedyRewritePatternApplier on arith.constant at {path}:3:3",
        f"applied: canonicalize: SignlessIntegerBinaryOperationConstantProp on arith.addi at {path}:6:3",
    ])
