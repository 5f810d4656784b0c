"""ChromeTraceInstrument, OpCountDiff and PassMemoryInstrument on hand-written passes: exact events with
a fake clock, nesting, balance after a failing pass, and the seed differ's exact records."""

import json

import numpy as np
import pytest

from xrelay import transform
from xrelay.dialects import nn
from xrelay.instrument.memory import PassMemoryInstrument
from xrelay.instrument.op_count import OpCountDiff, count_ops, op_count_delta
from xrelay.instrument.trace import ChromeTraceInstrument
from tool_passes import RELU_ADD, drop_relu, noop, outer, parse_module, replacing_pass

# relu(x) + c + c: two adds, so a pass replacing them changes a count by 2.
SRC = RELU_ADD.replace("func.return %y", "%z = nn.add(%y, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
                       "    func.return %z")


def parse():
    return parse_module(SRC)


add_to_multiply = replacing_pass("AddToMultiply", nn.AddOp, lambda add: nn.MultiplyOp(add.operands[0], add.operands[1]))


@transform.module_pass(opt_level=0, name="Boom")
def boom(mod, ctx):
    raise ValueError("boom")


@transform.module_pass(opt_level=0, name="OuterBoom")
def outer_boom(mod, ctx):
    return boom(drop_relu(mod))


class FakeClock:
    """Nanoseconds advancing by 1000 at every reading."""

    def __init__(self):
        self.now = 0

    def __call__(self):
        self.now += 1000
        return self.now


def check_nesting(events):
    """Every pass event lies inside the interval of an enclosing event one level up (same pid/tid)."""
    passes = sorted((e for e in events if e["ph"] == "X"), key=lambda e: (e["ts"], -e["dur"]))
    stack = []
    for event in passes:
        while stack and event["ts"] >= stack[-1]["ts"] + stack[-1]["dur"]:
            stack.pop()
        assert event["args"]["depth"] == len(stack), event
        if stack:
            parent = stack[-1]
            assert parent["ts"] <= event["ts"] and event["ts"] + event["dur"] <= parent["ts"] + parent["dur"]
            assert (parent["pid"], parent["tid"]) == (event["pid"], event["tid"])
        stack.append(event)


def test_count_ops_and_delta():
    mod = parse()
    assert count_ops(mod) == {"nn.relu": 1, "nn.add": 2}  # constants, func and builtin ops not counted
    assert op_count_delta({"nn.add": 2, "nn.multiply": 1}, {"nn.add": 2, "nn.relu": 1}) == {
        "nn.multiply": 1, "nn.relu": -1}


def test_trace_events_exact_with_a_fake_clock(tmp_path):
    path = tmp_path / "trace.json"
    tracer = ChromeTraceInstrument(path, clock=FakeClock())
    with transform.PassContext(instruments=[tracer]):
        transform.Sequential([noop, outer, add_to_multiply])(parse())
    data = json.loads(path.read_text())
    assert data["displayTimeUnit"] == "ms"
    meta = [e for e in data["traceEvents"] if e["ph"] == "M"]
    assert {e["name"] for e in meta} == {"process_name", "thread_name"}
    events = [(e["name"], e["ts"], e["dur"], e["args"]) for e in data["traceEvents"] if e["ph"] == "X"]
    # Clock readings (µs after entering the context): seq 1, Noop 2-3, Outer 4, DropRelu 5-6, Outer 7,
    # AddToMultiply 8-9, seq 10.
    assert events == [
        ("sequential", 1.0, 9.0, {"depth": 0, "opt_level": 0, "changed": True,
                                  "op_count_delta": {"nn.add": -2, "nn.multiply": 2, "nn.relu": -1}}),
        ("Noop", 2.0, 1.0, {"depth": 1, "opt_level": 0, "changed": False, "op_count_delta": {}}),
        ("Outer", 4.0, 3.0, {"depth": 1, "opt_level": 0, "changed": True, "op_count_delta": {"nn.relu": -1}}),
        ("DropRelu", 5.0, 1.0, {"depth": 2, "opt_level": 0, "changed": True, "op_count_delta": {"nn.relu": -1}}),
        ("AddToMultiply", 8.0, 1.0, {"depth": 1, "opt_level": 0, "changed": True,
                                     "op_count_delta": {"nn.add": -2, "nn.multiply": 2}}),
    ]
    for e in data["traceEvents"]:
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        if e["ph"] == "X":
            assert e["cat"] == "pass"
    check_nesting(data["traceEvents"])


def test_trace_stays_balanced_when_a_nested_pass_raises(tmp_path):
    path = tmp_path / "trace.json"
    tracer = ChromeTraceInstrument(path)
    with transform.PassContext(instruments=[tracer]):
        with pytest.raises(ValueError, match="boom"):
            transform.Sequential([noop, outer_boom, noop])(parse())
    events = [e for e in json.loads(path.read_text())["traceEvents"] if e["ph"] == "X"]
    summary = [(e["name"], e["args"]["depth"], e["args"].get("failed", False), e["args"]["changed"]) for e in events]
    assert summary == [
        ("sequential", 0, True, False),
        ("Noop", 1, False, False),
        ("OuterBoom", 1, True, False),
        ("DropRelu", 2, False, True),
        ("Boom", 2, True, False),
    ]
    assert [e["args"].get("error") for e in events if e["args"].get("failed")] == ["ValueError: boom"] * 3
    check_nesting(events)
    assert tracer.running == []


def test_trace_without_a_path_keeps_the_events():
    tracer = ChromeTraceInstrument()
    with transform.PassContext(instruments=[tracer]):
        drop_relu(parse())
        drop_relu(parse())
    names = [(e["name"], e["args"]["depth"]) for e in tracer.trace()["traceEvents"] if e["ph"] == "X"]
    assert names == [("DropRelu", 0), ("DropRelu", 0)]
    json.dumps(tracer.trace())  # JSON-ready


def test_op_count_diff_records_like_the_seed_differ():
    differ = OpCountDiff()
    with transform.PassContext(instruments=[differ]):
        transform.Sequential([noop, outer, add_to_multiply])(parse())
    assert differ.get_pass_to_op_diff() == [
        (2, "DropRelu", {"nn.relu": -1}),
        (1, "Outer", {"nn.relu": -1}),
        (1, "AddToMultiply", {"nn.add": -2, "nn.multiply": 2}),
        (0, "sequential", {"nn.add": -2, "nn.multiply": 2, "nn.relu": -1}),
    ]


def test_op_count_diff_after_a_failing_pass_then_a_new_context():
    differ = OpCountDiff()
    with transform.PassContext(instruments=[differ]):
        with pytest.raises(ValueError):
            transform.Sequential([outer_boom])(parse())
        assert differ.get_pass_to_op_diff() == [(2, "DropRelu", {"nn.relu": -1})]
        drop_relu(parse())  # balanced: the next top-level pass is depth 0
        assert differ.get_pass_to_op_diff()[-1] == (0, "DropRelu", {"nn.relu": -1})
    with transform.PassContext(instruments=[differ]):  # entering starts a new record
        noop(parse())
    assert differ.get_pass_to_op_diff() == []


def test_pass_memory_sees_a_pass_that_allocates():
    @transform.module_pass(opt_level=0, name="Allocate")
    def allocate(mod, ctx):
        block = np.ones(8 * 1024 * 1024, dtype=np.uint8)  # 8 MiB, freed on return
        block[0] = 2
        return mod

    memory = PassMemoryInstrument()
    with transform.PassContext(instruments=[memory]):
        transform.Sequential([noop, allocate])(parse())
        text = memory.render()
    by_name = {run.name: run for run in memory.records}
    assert by_name["Allocate"].peak >= 8 * 1024 * 1024
    assert by_name["Noop"].peak < 1024 * 1024
    assert by_name["sequential"].peak >= by_name["Allocate"].peak  # a parent sees its children's peak
    assert abs(by_name["Allocate"].retained) < 1024 * 1024
    lines = text.splitlines()
    assert [line.split(":")[0] for line in lines] == ["sequential", "\tNoop", "\tAllocate"]
    assert lines[2].startswith("\tAllocate: peak 8.")
