"""Every power tool on the tutorial's pipeline over bound ResNet-18 (3x224x224):
Sequential([FoldConstant(), ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}), FoldConstant()]) at opt level 3.
(The numerical bisect on bound ResNet-18 is in test_instrument_tools_bisect.py.)"""

import io
import json
import re

import pytest

from xrelay import passes, transform
from xrelay.dialects import nn
from xrelay.frontend import bind_params_by_name, resnet
from xrelay.instrument.bisect import OptBisect
from xrelay.instrument.ir_diff import IRDiff
from xrelay.instrument.memory import PassMemoryInstrument
from xrelay.instrument.op_count import OpCountDiff
from xrelay.instrument.print_ir import PrintIR
from xrelay.instrument.reproducer import CrashReproducer, run_reproducer
from xrelay.instrument.trace import ChromeTraceInstrument

# docs/architecture.md §5: the tutorial's op diff with xrelay's op names.
TUTORIAL_OP_DIFF = [
    (1, "CanonicalizeOps", {"nn.add": 1, "nn.bias_add": -1}),
    (1, "ConvertLayout", {"nn.expand_dims": 1, "nn.layout_transform": 23}),
    (1, "FoldConstant", {"nn.expand_dims": -1, "nn.layout_transform": -21}),
    (0, "sequential", {"nn.add": 1, "nn.layout_transform": 2, "nn.bias_add": -1}),
]


@pytest.fixture(scope="module")
def bound_resnet18():
    mod, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 224, 224))
    return bind_params_by_name(mod, params)


def tutorial_pipeline(*extra):
    return transform.Sequential([
        passes.FoldConstant(),
        passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}),
        *extra,
        passes.FoldConstant(),
    ])


def run(mod, *instruments, extra=()):
    with transform.PassContext(opt_level=3, instruments=list(instruments)):
        return tutorial_pipeline(*extra)(mod)


def test_op_count_diff_is_the_tutorials(bound_resnet18):
    differ = OpCountDiff()
    run(bound_resnet18, differ)
    assert differ.get_pass_to_op_diff() == TUTORIAL_OP_DIFF


def test_trace_nesting_changed_flags_and_op_deltas(bound_resnet18, tmp_path):
    path = tmp_path / "trace.json"
    run(bound_resnet18, ChromeTraceInstrument(path))
    events = [e for e in json.loads(path.read_text())["traceEvents"] if e["ph"] == "X"]
    # Start order, parents first: the required InferType and CanonicalizeOps run before ConvertLayout.
    assert [(e["name"], e["args"]["depth"]) for e in events] == [
        ("sequential", 0),
        ("FoldConstant", 1), ("InferType", 2),
        ("InferType", 1),
        ("CanonicalizeOps", 1), ("InferType", 2),
        ("ConvertLayout", 1), ("InferType", 2),
        ("FoldConstant", 1), ("InferType", 2),
    ]
    stack = []
    for event in events:
        while stack and event["ts"] >= stack[-1]["ts"] + stack[-1]["dur"]:
            stack.pop()
        assert len(stack) == event["args"]["depth"]
        if stack:
            assert event["ts"] + event["dur"] <= stack[-1]["ts"] + stack[-1]["dur"]
        stack.append(event)
    deltas = [(e["args"]["depth"], e["name"], e["args"]["op_count_delta"]) for e in events if e["args"]["op_count_delta"]]
    assert sorted(deltas, key=str) == sorted(TUTORIAL_OP_DIFF, key=str)
    for event in events:
        if event["args"]["op_count_delta"]:
            assert event["args"]["changed"] is True
    assert next(e for e in events if e["name"] == "CanonicalizeOps")["args"]["changed"] is True


def test_print_ir_after_change_with_elided_weights(bound_resnet18):
    out = io.StringIO()
    run(bound_resnet18, PrintIR(after_change=True, stream=out, max_constant_elements=16))
    text = out.getvalue()
    headers = re.findall(r"^// -----// IR Dump After (\w+) \(depth (\d)\) //----- //$", text, re.MULTILINE)
    assert ("CanonicalizeOps", "1") in headers and ("ConvertLayout", "1") in headers
    assert headers[-1] == ("sequential", "0")
    assert ("InferType", "2") not in headers  # re-inferring current types changes nothing
    assert '"0x' not in text and len(text) < 2_000_000  # 45 MB of weights elided
    last_dump = text.rsplit("//----- //\n", 1)[1]
    assert last_dump.count("nn.layout_transform(") == 2
    assert last_dump.count("nn.conv2d(") == 21


def test_ir_diff_shows_the_layout_change(bound_resnet18):
    differ = IRDiff(print_diffs=False)
    run(bound_resnet18, differ)
    by_name = {(depth, name): diff for depth, name, diff in differ.diffs}
    convert = by_name[(1, "ConvertLayout")]
    added = [line for line in convert.splitlines() if line.startswith("+") and "nn.layout_transform(" in line]
    assert len(added) == 23
    canonicalize = by_name[(1, "CanonicalizeOps")]
    assert [line[:1] for line in canonicalize.splitlines() if "nn.bias_add(" in line] == ["-"]
    assert '"0x' not in "".join(by_name.values())


def test_opt_bisect_decisions_on_the_tutorial_pipeline(bound_resnet18):
    # Limit 1: FoldConstant runs; the passes ConvertLayout requires are forced (not counted, always run),
    # so bias_add is canonicalized; ConvertLayout and the last FoldConstant are skipped.
    out = io.StringIO()
    bisect = OptBisect(1, stream=out)
    result = run(bound_resnet18, bisect)
    assert [(n, name) for n, name, _ in bisect.decisions] == [(1, "FoldConstant"), (2, "ConvertLayout"),
                                                              (3, "FoldConstant")]
    assert out.getvalue().splitlines() == [
        "BISECT: running pass (1) FoldConstant on module",
        "BISECT: running pass (forced: InferType after FoldConstant) InferType on module",
        "BISECT: running pass (forced: required by ConvertLayout) InferType on module",
        "BISECT: running pass (forced: required by ConvertLayout) CanonicalizeOps on module",
        "BISECT: running pass (forced: InferType after CanonicalizeOps) InferType on module",
        "BISECT: NOT running pass (2) ConvertLayout on module",
        "BISECT: NOT running pass (3) FoldConstant on module",
    ]
    ops = [op.name for op in result.walk()]
    assert "nn.bias_add" not in ops and "nn.layout_transform" not in ops  # canonicalized, not converted


def test_crash_reproducer_replays_a_failure_inside_the_pipeline(bound_resnet18, tmp_path):
    @transform.module_pass(opt_level=0, name="RejectLayoutTransform")
    def reject(mod, ctx):
        count = sum(isinstance(op, nn.LayoutTransformOp) for op in mod.walk())
        if count:
            raise ValueError(f"{count} layout transforms")
        return mod

    path = tmp_path / "repro.mlir"
    with pytest.raises(ValueError, match="23 layout transforms"):
        run(bound_resnet18, CrashReproducer(path, pass_specs={"RejectLayoutTransform": "canonicalize-ops"}),
            extra=[reject])
    head = path.read_text()[:2000]
    assert '// xrelay-reproducer: failed-pass: "RejectLayoutTransform"\n' in head
    assert "// xrelay-reproducer: opt-level: 3\n" in head
    # The file holds ConvertLayout's output; replaying its recorded pipeline (here mapped to
    # canonicalize-ops, which runs fine) parses all the weights back.
    replayed = run_reproducer(path)
    assert sum(isinstance(op, nn.LayoutTransformOp) for op in replayed.walk()) == 23
    weights = [op for op in replayed.walk() if isinstance(op, nn.ConstantOp) and op.numpy().ndim == 4]
    assert len(weights) == 21  # every conv weight came back from the file


def test_pass_memory_on_the_tutorial_pipeline(bound_resnet18):
    memory = PassMemoryInstrument()
    with transform.PassContext(opt_level=3, instruments=[memory]):
        tutorial_pipeline()(bound_resnet18)
        text = memory.render()
    assert [line.split(":")[0] for line in text.splitlines()][:3] == ["sequential", "\tFoldConstant", "\t\tInferType"]
    assert all(run.peak >= 0 for run in memory.records)
