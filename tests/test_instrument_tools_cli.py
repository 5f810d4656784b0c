"""The power-tool flags of xrelay-opt, run in-process on the bound tiny model, with test-only passes
registered for the test through `monkeypatch` on `xrelay.passes.ALL_PASSES` (what xrelay-opt lists):
a pass that perturbs a weight (numerical bisect) and one that raises when run nested (reproducer)."""

import json
from dataclasses import dataclass

import numpy as np
import pytest
from xdsl.passes import ModulePass

from xrelay import transform
from xrelay.dialects import nn
from xrelay.frontend import bind_params_by_name, tiny
from xrelay.passes import ALL_PASSES
from xrelay.tools.xrelay_opt import main
from tool_passes import perturb_first_large_constant, raising_xdsl_pass


@dataclass(frozen=True)
class PerturbWeight(ModulePass):
    """Deliberately wrong: scales the first constant of 16+ elements by 1.01."""

    name = "test-perturb-weight"

    def apply(self, ctx, op):
        perturb_first_large_constant(op)


RaiseOnSoftmax = raising_xdsl_pass("RaiseOnSoftmax", "test-raise-on-softmax", nn.SoftmaxOp, RuntimeError,
                                   "softmax is not supported")


@dataclass(frozen=True)
class NestedRaise(ModulePass):
    """Runs test-raise-on-softmax as a nested instrumented pass (which raises)."""

    name = "test-nested-raise"

    def apply(self, ctx, op):
        transform.wrap(RaiseOnSoftmax())(op)


@pytest.fixture
def model(tmp_path, monkeypatch):
    monkeypatch.setitem(ALL_PASSES, PerturbWeight.name, lambda: PerturbWeight)
    monkeypatch.setitem(ALL_PASSES, RaiseOnSoftmax.name, lambda: RaiseOnSoftmax)
    monkeypatch.setitem(ALL_PASSES, NestedRaise.name, lambda: NestedRaise)
    mod, params = tiny.get_workload(batch_size=1, image_shape=(3, 8, 8))
    path = tmp_path / "tiny.mlir"
    path.write_text(str(bind_params_by_name(mod, params)))
    return path


def opt(capsys, *argv):
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


PIPELINE = "simplify-inference,fold-constant,test-perturb-weight,fold-scale-axis,canonicalize-ops"


def test_numerical_bisect_names_the_wrong_pass(capsys, model, tmp_path):
    status, out, err = opt(capsys, model, "-p", PIPELINE, "--opt-level", "3", "--numerical-bisect",
                           "--numerical-bisect-atol", "1e-6", "-o", tmp_path / "out.mlir")
    assert status == 1  # a drift found is the run's answer: scripts see it; the output is still written
    assert (tmp_path / "out.mlir").read_text().startswith("builtin.module")
    lines = err.splitlines()
    first_drift = next(i for i, line in enumerate(lines) if line.endswith(" DRIFT"))
    assert lines[first_drift].startswith("numerical-bisect: test-perturb-weight (depth 1): max abs ")
    assert all(not line.endswith("DRIFT") for line in lines[:first_drift])
    assert lines[0].startswith("numerical-bisect: SimplifyInference (depth 1): ")
    assert lines[-1].startswith("numerical-bisect: first drifting pass: test-perturb-weight (depth 1): max abs ")
    assert lines[-1].endswith("(rtol 0.0001, atol 1e-06)")


def test_numerical_bisect_with_the_real_passes_only(capsys, model, tmp_path):
    x = tmp_path / "x.npy"
    np.save(x, np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32))
    status, out, err = opt(capsys, model, "-p", PIPELINE.replace("test-perturb-weight,", ""), "--opt-level", "3",
                           "--numerical-bisect", "--numerical-bisect-input", f"data={x}", "-o", tmp_path / "o.mlir")
    assert status == 0
    assert "DRIFT" not in err
    assert err.splitlines()[-1].startswith("numerical-bisect: no pass drifted (rtol 0.0001, atol 1e-05) in ")


def test_reproducer_of_a_nested_failure_replays(capsys, model, tmp_path):
    repro = tmp_path / "repro.mlir"
    status, out, err = opt(capsys, model, "-p", "fold-constant,test-nested-raise", "--crash-reproducer", repro)
    assert status == 1
    message = "xrelay-opt: error: pass 'test-raise-on-softmax' failed: RuntimeError: softmax is not supported"
    assert err == f"{message} (crash reproducer written to {repro}; replay: xrelay-opt --run-reproducer {repro})\n"
    header = repro.read_text().split("builtin.module", 1)[0]
    assert header == (
        '// xrelay-reproducer: failed-pass: "test-raise-on-softmax"\n'
        "// xrelay-reproducer: depth: 2\n"
        '// xrelay-reproducer: error: "RuntimeError: softmax is not supported"\n'
        '// xrelay-reproducer: pipeline: "test-raise-on-softmax"\n'
        "// xrelay-reproducer: opt-level: 2\n"
        "// xrelay-reproducer: required-pass: []\n"
        "// xrelay-reproducer: disabled-pass: []\n"
        "// xrelay-reproducer: config: {}\n"
        '// xrelay-reproducer: full-pipeline: "fold-constant,test-nested-raise"\n'
    )
    status, out, err = opt(capsys, "--run-reproducer", repro)
    assert (status, out, err) == (1, "", message + "\n")


def test_reproducer_when_only_the_pipeline_sees_the_failure(capsys, model, tmp_path, monkeypatch):
    """A pass whose output the verifier rejects after it returned: the reproducer is the whole pipeline
    on its input (MLIR's default reproducer), and the replay fails the same way."""

    @dataclass(frozen=True)
    class BreakTypes(ModulePass):
        name = "test-break-types"

        def apply(self, ctx, op):
            from xdsl.dialects.builtin import TensorType, f32

            relu = next(o for o in op.walk() if isinstance(o, nn.ReluOp))
            relu.results[0]._type = TensorType(f32, [7])

    monkeypatch.setitem(ALL_PASSES, BreakTypes.name, lambda: BreakTypes)
    repro = tmp_path / "repro.mlir"
    status, _, err = opt(capsys, model, "-p", "fold-constant,test-break-types", "--crash-reproducer", repro)
    assert status == 1 and "test-break-types" in err
    header = repro.read_text().split("builtin.module", 1)[0]
    assert '// xrelay-reproducer: failed-pass: "sequential"\n' in header
    assert '// xrelay-reproducer: pipeline: "fold-constant,test-break-types"\n' in header
    status, _, replay_err = opt(capsys, "--run-reproducer", repro)
    # The same diagnostic, located in the reproducer instead of the original input.
    assert status == 1
    assert replay_err.startswith(f"{repro}:")
    assert replay_err.splitlines()[0].split(": error: ", 1)[1] == err.splitlines()[0].split(": error: ", 1)[1]


def test_trace_json_of_the_tiny_pipeline_is_nested_and_valid(capsys, model, tmp_path):
    trace = tmp_path / "trace.json"
    status, _, _ = opt(capsys, model, "-p", PIPELINE, "--opt-level", "3", "--trace-json", trace, "-o",
                       tmp_path / "o.mlir")
    assert status == 0
    events = [e for e in json.loads(trace.read_text())["traceEvents"] if e["ph"] == "X"]
    assert events[0]["name"] == "sequential" and events[0]["args"]["depth"] == 0
    for event in events:
        assert set(event) == {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"}
        assert event["dur"] >= 0
    # Children inside parents: every event at depth d > 0 lies in the nearest earlier event at depth d-1.
    for index, event in enumerate(events):
        depth = event["args"]["depth"]
        if depth == 0:
            continue
        parent = next(e for e in reversed(events[:index]) if e["args"]["depth"] == depth - 1)
        assert parent["ts"] <= event["ts"] and event["ts"] + event["dur"] <= parent["ts"] + parent["dur"]
    perturb = next(e for e in events if e["name"] == "test-perturb-weight")
    assert perturb["args"]["changed"] is True and perturb["args"]["op_count_delta"] == {}


def test_print_ir_elides_large_constants_when_asked(capsys, model, tmp_path):
    status, _, err = opt(capsys, model, "-p", "fold-constant", "--print-ir-after=fold-constant",
                         "--elide-constants-if-larger", "16", "-o", tmp_path / "o.mlir")
    assert status == 0
    assert err.startswith("// -----// IR Dump After FoldConstant (depth 1) //----- //\n")
    assert "dense_resource<__elided_" in err and '"0x' not in err
    status, _, err = opt(capsys, model, "-p", "fold-constant", "--print-ir-after=FoldConstant", "-o",
                         tmp_path / "o.mlir")
    assert '"0x' in err  # without the flag, dumps are complete


@dataclass(frozen=True)
class FailOn(ModulePass):
    """Fails only with its option: raises when the module has an op named `op`."""

    name = "test-fail-on"
    op: str = "none"

    def apply(self, ctx, module):
        if any(o.name == self.op for o in module.walk()):
            raise RuntimeError(f"{self.op} found")


def test_a_python_reproducer_records_the_options_and_replays_on_the_command_line(capsys, model, tmp_path,
                                                                               monkeypatch):
    from xrelay.instrument.reproducer import CrashReproducer

    monkeypatch.setitem(ALL_PASSES, FailOn.name, lambda: FailOn)
    repro = tmp_path / "repro.mlir"
    module = transform.get_pass("infer-type")(parse_file(model))
    with pytest.raises(RuntimeError, match="nn.softmax found"):
        with transform.PassContext(instruments=[CrashReproducer(repro)]):
            transform.Sequential([transform.wrap(FailOn(op="nn.softmax"))])(module)
    assert '// xrelay-reproducer: pipeline: "test-fail-on{op=\\"nn.softmax\\"}"\n' in repro.read_text()
    status, out, err = opt(capsys, "--run-reproducer", repro)
    assert (status, out, err) == (1, "", "xrelay-opt: error: pass 'test-fail-on' failed: RuntimeError: "
                                         "nn.softmax found\n")


def test_run_reproducer_fails_when_the_recorded_failure_does_not_happen(capsys, model, tmp_path, monkeypatch):
    repro = tmp_path / "repro.mlir"
    status, _, _ = opt(capsys, model, "-p", "test-raise-on-softmax", "--crash-reproducer", repro)
    assert status == 1
    monkeypatch.setitem(ALL_PASSES, RaiseOnSoftmax.name, lambda: FixedSoftmax)  # the pass is fixed
    status, out, err = opt(capsys, "--run-reproducer", repro, "-o", tmp_path / "out.mlir")
    assert (status, out) == (1, "")
    assert err == (f"{repro}: error: the reproducer recorded pass 'test-raise-on-softmax' failing with RuntimeError: "
                   "softmax is not supported, but pipeline 'test-raise-on-softmax' ran without error (not reproduced)\n")
    assert not (tmp_path / "out.mlir").exists()


@dataclass(frozen=True)
class FixedSoftmax(ModulePass):
    name = "test-raise-on-softmax"

    def apply(self, ctx, module):
        pass


def parse_file(path):
    from xdsl.parser import Parser

    from xrelay.dialects import make_context

    return Parser(make_context(), path.read_text()).parse_module()


@pytest.mark.parametrize("name", ["SimplifyInference", "simplify-inference", "Simplify.*"])
def test_print_ir_after_change_takes_pass_names(capsys, model, tmp_path, name):
    # The second SimplifyInference finds nothing left to change: only the first is printed, and no other pass.
    status, out, err = opt(capsys, model, "-p", "simplify-inference,simplify-inference",
                           f"--print-ir-after-change={name}", "-o", tmp_path / "out.mlir")
    assert status == 0
    headers = [line for line in err.splitlines() if line.startswith("// -----//")]
    assert headers == ["// -----// IR Dump After SimplifyInference (depth 1) //----- //"]
    assert "nn.batch_norm" not in err.split(headers[0], 1)[1]


def test_print_ir_after_change_rejects_an_unknown_name(capsys, model):
    status, out, err = opt(capsys, model, "-p", "simplify-inference", "--print-ir-after-change=SimplifyInferenc")
    assert (status, out, err) == (1, "", "xrelay-opt: error: unknown pass 'SimplifyInferenc' in "
                                         "--print-ir-after-change (did you mean 'SimplifyInference'?)\n")
