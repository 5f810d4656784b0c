"""CrashReproducer: the exact file for a nested failing pass, its header round trip, and replays that
fail the same way (Python API here; xrelay-opt in test_instrument_tools_cli.py and the lit tests)."""

import json

import pytest

from xrelay import transform
from xrelay.dialects import nn
from xrelay.instrument.reproducer import (
    CrashReproducer,
    Reproducer,
    parse_reproducer_header,
    read_reproducer,
    registered_pipeline_name,
    run_reproducer,
)
from tool_passes import drop_relu, parse_module, raising_xdsl_pass

SRC = """\
builtin.module {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %r = nn.relu(%x) : (tensor<2xf32>) -> tensor<2xf32>
    %y = nn.negative(%r) : (tensor<2xf32>) -> tensor<2xf32>
    func.return %y : tensor<2xf32>
  }
}
"""

WITHOUT_RELU = """\
builtin.module {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %y = nn.negative(%x) : (tensor<2xf32>) -> tensor<2xf32>
    func.return %y : tensor<2xf32>
  }
}
"""


def parse():
    return parse_module(SRC)


# A test pass with a pipeline name.
RaiseOnNegative = raising_xdsl_pass("RaiseOnNegative", "test-raise-on-negative", nn.NegativeOp, ValueError,
                                    "nn.negative is not supported\nsecond line")


EXTRA = {RaiseOnNegative.name: lambda: RaiseOnNegative}


@transform.module_pass(opt_level=1, name="Outer")
def outer(mod, ctx):
    return transform.wrap(RaiseOnNegative())(drop_relu(mod))


def test_reproducer_of_a_nested_failing_pass(tmp_path):
    path = tmp_path / "repro.mlir"
    reproducer = CrashReproducer(path, full_pipeline="outer")
    with transform.PassContext(opt_level=3, disabled_pass=["CanonicalizeOps"], config={"k": 1},
                               instruments=[reproducer]):
        with pytest.raises(ValueError, match="nn.negative is not supported"):
            transform.Sequential([outer])(parse())
    # The innermost failing pass and the module it received (relu already dropped), written once.
    assert path.read_text() == (
        '// xrelay-reproducer: failed-pass: "test-raise-on-negative"\n'
        "// xrelay-reproducer: depth: 2\n"
        '// xrelay-reproducer: error: "ValueError: nn.negative is not supported"\n'
        '// xrelay-reproducer: pipeline: "test-raise-on-negative"\n'
        "// xrelay-reproducer: opt-level: 3\n"
        "// xrelay-reproducer: required-pass: []\n"
        '// xrelay-reproducer: disabled-pass: ["CanonicalizeOps"]\n'
        '// xrelay-reproducer: config: {"k": 1}\n'
        '// xrelay-reproducer: full-pipeline: "outer"\n'
        + WITHOUT_RELU
    )
    assert len(reproducer.written) == 1
    assert read_reproducer(path) == Reproducer(
        pipeline="test-raise-on-negative", opt_level=3, disabled_pass=("CanonicalizeOps",), config={"k": 1},
        failed_pass="test-raise-on-negative", depth=2, error="ValueError: nn.negative is not supported",
        full_pipeline="outer")


def test_replay_fails_the_same_way_and_passes_once_fixed(tmp_path):
    path = tmp_path / "repro.mlir"
    with transform.PassContext(instruments=[CrashReproducer(path)]):
        with pytest.raises(ValueError, match="nn.negative is not supported"):
            transform.Sequential([outer])(parse())
    with pytest.raises(ValueError, match="nn.negative is not supported"):
        run_reproducer(path, extra_passes=EXTRA)
    # The replay runs the recorded pipeline under the recorded settings: with the pass "fixed"
    # (registered as a harmless one) it returns the module.
    fixed = {RaiseOnNegative.name: lambda: type("Fixed", (RaiseOnNegative,), {"apply": lambda self, ctx, op: None})}
    assert str(run_reproducer(path, extra_passes=fixed)) + "\n" == WITHOUT_RELU


def test_no_reproducer_when_nothing_fails(tmp_path):
    path = tmp_path / "repro.mlir"
    reproducer = CrashReproducer(path)
    with transform.PassContext(instruments=[reproducer]):
        transform.Sequential([drop_relu])(parse())
    assert not path.exists() and reproducer.written == []


def test_a_python_pass_has_no_pipeline_and_the_replay_says_so(tmp_path):
    @transform.module_pass(opt_level=0, name="PythonOnly")
    def python_only(mod, ctx):
        raise RuntimeError("broken")

    path = tmp_path / "repro.mlir"
    with transform.PassContext(instruments=[CrashReproducer(path)]):
        with pytest.raises(RuntimeError):
            python_only(parse())
    assert '// xrelay-reproducer: pipeline: ""\n' in path.read_text()
    with pytest.raises(ValueError, match=r"repro.mlir: the reproducer has no pipeline to replay \(pass 'PythonOnly'"):
        run_reproducer(path)


def test_a_later_failure_in_the_same_context_writes_again(tmp_path):
    path = tmp_path / "repro.mlir"
    reproducer = CrashReproducer(path)
    with transform.PassContext(instruments=[reproducer]):
        for _ in range(2):
            with pytest.raises(ValueError):
                transform.Sequential([outer])(parse())
    assert [r.failed_pass for r in reproducer.written] == ["test-raise-on-negative"] * 2


def test_pass_specs_and_registered_pipeline_names():
    assert registered_pipeline_name("FoldConstant") == "fold-constant"
    assert registered_pipeline_name("fold-constant") == "fold-constant"
    assert registered_pipeline_name("cse") == "cse"  # an upstream xDSL pass
    assert registered_pipeline_name("NoSuchPass") is None
    reproducer = CrashReproducer("unused.mlir", pass_specs={"ConvertLayout": 'convert-layout{x="y"}'})
    assert reproducer.pipeline_of("ConvertLayout") == 'convert-layout{x="y"}'
    assert reproducer.pipeline_of("InferType") == "infer-type"


def test_malformed_headers_are_one_clear_error():
    with pytest.raises(ValueError, match=r"r.mlir: not an xrelay reproducer"):
        parse_reproducer_header("builtin.module {}\n", "r.mlir")
    with pytest.raises(ValueError, match=r"r.mlir:2: malformed reproducer line"):
        parse_reproducer_header('// xrelay-reproducer: pipeline: "cse"\n// xrelay-reproducer: colour: 1\n', "r.mlir")
    with pytest.raises(ValueError, match=r"r.mlir:1: bad value for 'opt-level'"):
        parse_reproducer_header("// xrelay-reproducer: opt-level: three\n", "r.mlir")
    header = Reproducer(pipeline="cse", required_pass=("A",)).header()
    assert parse_reproducer_header(header) == Reproducer(pipeline="cse", required_pass=("A",))
    assert json.loads(header.splitlines()[5].split(": ", 2)[2]) == ["A"]
