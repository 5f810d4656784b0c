"""NestingInstrument (instrument/nesting.py): the frames it hands its hooks, written out by hand for
nested passes, a Sequential, a failing nested pass, a vetoed pass, hooks that raise, and a pass whose
start the instrument did not see; and that every built-in instrument is built on it.

Passes are tiny module passes over empty xDSL modules, each adding one `arith.constant`, so the number
of ops in a module names it: a frame's `received` module and the module a pass returned show as op counts.
"""

import sys

import pytest
from xdsl.dialects.builtin import ModuleOp

from xrelay import transform
from xrelay.instrument import NestingInstrument, PassTimingInstrument
from xrelay.instrument.bisect import OptBisect
from xrelay.instrument.ir_diff import IRDiff
from xrelay.instrument.memory import PassMemoryInstrument
from xrelay.instrument.numerical_bisect import NumericalBisect
from xrelay.instrument.op_count import OpCountDiff
from xrelay.instrument.print_ir import PrintIR
from xrelay.instrument.reproducer import CrashReproducer
from xrelay.instrument.statistics import PassStatisticsInstrument
from xrelay.instrument.trace import ChromeTraceInstrument
from xrelay.tools.xrelay_opt import PipelineChecks
from tool_passes import op_adding_pass as adding, run_on_empty_module

pytestmark = pytest.mark.usefixtures("fresh_pass_context")


def n_ops(mod):
    return len(list(mod.body.block.ops))


def raising(name, calls=()):
    """A pass that runs `calls`, then raises ValueError(name)."""

    @transform.module_pass(opt_level=0, name=name)
    def body(mod, ctx):
        for nested in calls:
            mod = nested(mod)
        raise ValueError(name)

    return body


class Recorder(NestingInstrument):
    """Writes every hook call as one line: the frame (name, depth, ops of the received module), the
    names of the passes on the stack, and what the hook got. `veto` names passes `should_run` refuses;
    `raise_in` names the hook (and pass) that raises."""

    def __init__(self, events, veto=(), raise_in=(None, None)):
        super().__init__()
        self.events = events
        self.veto = veto
        self.raise_in = raise_in

    def _stack(self):
        return "[" + ",".join(frame.info.name for frame in self.running) + "]"

    def _maybe_raise(self, hook, frame):
        if self.raise_in == (hook, frame.info.name):
            raise RuntimeError(f"{hook} of {frame.info.name}")

    def should_run(self, mod, info):
        return info.name not in self.veto

    def entered(self, frame):
        frame.state = f"state of {frame.info.name}"
        self.events.append(f"entered {frame.info.name} depth {frame.depth} received {n_ops(frame.received)} "
                           f"running {self._stack()}")
        self._maybe_raise("entered", frame)

    def left(self, frame, mod):
        self.events.append(f"left {frame.info.name} depth {frame.depth} received {n_ops(frame.received)} "
                           f"returned {n_ops(mod)} running {self._stack()} ({frame.state})")
        self._maybe_raise("left", frame)

    def failed(self, frame):
        error = sys.exc_info()[1]
        self.events.append(f"failed {frame.info.name} depth {frame.depth} received {n_ops(frame.received)} "
                           f"running {self._stack()} error {type(error).__name__}: {error}")

    def ended_unseen(self, info, mod, failed):
        self.events.append(f"ended unseen {info.name} failed {failed} module {n_ops(mod)} running {self._stack()}")


@pytest.fixture
def events():
    return []


def test_nested_passes_get_their_received_module_and_depth(events):
    inner_a, inner_b = adding("InnerA"), adding("InnerB")
    outer = adding("Outer", calls=[inner_a, inner_b])
    recorder = Recorder(events)
    assert n_ops(run_on_empty_module(outer, recorder)) == 3
    assert events == [
        "entered Outer depth 0 received 0 running []",
        "entered InnerA depth 1 received 0 running [Outer]",
        "left InnerA depth 1 received 0 returned 1 running [Outer,InnerA] (state of InnerA)",
        "entered InnerB depth 1 received 1 running [Outer]",
        "left InnerB depth 1 received 1 returned 2 running [Outer,InnerB] (state of InnerB)",
        "left Outer depth 0 received 0 returned 3 running [Outer] (state of Outer)",
    ]
    assert recorder.running == []


def test_a_sequential_and_its_children_nest(events):
    # The Sequential is a pass too: its children run at depth 1, a nested Sequential's at depth 2.
    # FoldLater (opt level 3) is left out at opt level 2 and gets no hook.
    pipeline = transform.Sequential([
        adding("A"),
        transform.Sequential([adding("B"), adding("C")], name="inner"),
        adding("FoldLater", opt_level=3),
    ], name="outer")
    with transform.PassContext(opt_level=2, instruments=[Recorder(events)]):
        pipeline(ModuleOp([]))
    assert events == [
        "entered outer depth 0 received 0 running []",
        "entered A depth 1 received 0 running [outer]",
        "left A depth 1 received 0 returned 1 running [outer,A] (state of A)",
        "entered inner depth 1 received 1 running [outer]",
        "entered B depth 2 received 1 running [outer,inner]",
        "left B depth 2 received 1 returned 2 running [outer,inner,B] (state of B)",
        "entered C depth 2 received 2 running [outer,inner]",
        "left C depth 2 received 2 returned 3 running [outer,inner,C] (state of C)",
        "left inner depth 1 received 1 returned 3 running [outer,inner] (state of inner)",
        "left outer depth 0 received 0 returned 3 running [outer] (state of outer)",
    ]


def test_a_failing_nested_pass_fails_every_enclosing_frame_and_leaves_the_stack_empty(events):
    boom = raising("Boom")
    outer = adding("Outer", calls=[adding("Fine"), boom])
    recorder = Recorder(events)
    with transform.PassContext(instruments=[recorder]):
        with pytest.raises(ValueError, match="Boom"):
            transform.Sequential([adding("First"), outer])(ModuleOp([]))
        assert recorder.running == []
        adding("After")(ModuleOp([]))  # the next pass is top-level again
    assert events == [
        "entered sequential depth 0 received 0 running []",
        "entered First depth 1 received 0 running [sequential]",
        "left First depth 1 received 0 returned 1 running [sequential,First] (state of First)",
        "entered Outer depth 1 received 1 running [sequential]",
        "entered Fine depth 2 received 1 running [sequential,Outer]",
        "left Fine depth 2 received 1 returned 2 running [sequential,Outer,Fine] (state of Fine)",
        "entered Boom depth 2 received 2 running [sequential,Outer]",
        "failed Boom depth 2 received 2 running [sequential,Outer] error ValueError: Boom",
        "failed Outer depth 1 received 1 running [sequential] error ValueError: Boom",
        "failed sequential depth 0 received 0 running [] error ValueError: Boom",
        "entered After depth 0 received 0 running []",
        "left After depth 0 received 0 returned 1 running [After] (state of After)",
    ]


def test_a_vetoed_pass_gets_no_frame(events):
    # should_run refuses Skipped: no hook, no frame; the next child receives A's result at depth 1.
    pipeline = transform.Sequential([adding("A"), adding("Skipped"), adding("B")])
    assert n_ops(run_on_empty_module(pipeline, Recorder(events, veto=("Skipped",)))) == 2
    assert events == [
        "entered sequential depth 0 received 0 running []",
        "entered A depth 1 received 0 running [sequential]",
        "left A depth 1 received 0 returned 1 running [sequential,A] (state of A)",
        "entered B depth 1 received 1 running [sequential]",
        "left B depth 1 received 1 returned 2 running [sequential,B] (state of B)",
        "left sequential depth 0 received 0 returned 2 running [sequential] (state of sequential)",
    ]


def test_a_vetoed_nested_pass_inside_a_failing_pass(events):
    # The veto comes from another instrument: the recorder is not asked to start Vetoed either.
    outer = raising("Outer", calls=[adding("Vetoed")])
    with transform.PassContext(instruments=[OptBisect(0, print_decisions=False, always_run=["Outer"]),
                                            Recorder(events)]):
        with pytest.raises(ValueError, match="Outer"):
            outer(ModuleOp([]))
    assert events == [
        "entered Outer depth 0 received 0 running []",
        "failed Outer depth 0 received 0 running [] error ValueError: Outer",
    ]


@pytest.mark.parametrize("hook, expected", [
    # The PassContext calls no end hook for an instrument whose run_before_pass raised; the passes
    # around it still end as failed.
    ("entered", [
        "entered Outer depth 0 received 0 running []",
        "entered Inner depth 1 received 0 running [Outer]",
        "failed Outer depth 0 received 0 running [] error RuntimeError: entered of Inner",
    ]),
    # The frame stays pushed while `left` runs, so when it raises, run_after_pass_failed finds it.
    ("left", [
        "entered Outer depth 0 received 0 running []",
        "entered Inner depth 1 received 0 running [Outer]",
        "left Inner depth 1 received 0 returned 1 running [Outer,Inner] (state of Inner)",
        "failed Inner depth 1 received 0 running [Outer] error RuntimeError: left of Inner",
        "failed Outer depth 0 received 0 running [] error RuntimeError: left of Inner",
    ]),
])
def test_a_hook_that_raises_leaves_the_stack_right(events, hook, expected):
    recorder = Recorder(events, raise_in=(hook, "Inner"))
    with transform.PassContext(instruments=[recorder]):
        with pytest.raises(RuntimeError, match=f"{hook} of Inner"):
            adding("Outer", calls=[adding("Inner")])(ModuleOp([]))
        assert recorder.running == []
    assert events == expected


def test_an_instrument_installed_inside_a_pass_sees_its_end_unseen(events):
    # TVM reads the context's instruments again after the body: the new one gets run_after_pass only.
    @transform.module_pass(opt_level=0, name="Switch")
    def switch(mod, ctx):
        ctx.override_instruments([Recorder(events)])
        return adding("Inside")(mod)

    with transform.PassContext(instruments=[Recorder(events)]):
        switch(ModuleOp([]))
    assert events == [
        "entered Switch depth 0 received 0 running []",
        "entered Inside depth 0 received 0 running []",
        "left Inside depth 0 received 0 returned 1 running [Inside] (state of Inside)",
        "ended unseen Switch failed False module 1 running []",
    ]


def test_entering_a_context_again_starts_an_empty_stack(events):
    # The same recorder in an inner context entered from a pass body: inside it passes are top-level;
    # the outer pass, failing afterwards, ends unseen (its frame went with the re-entry).
    recorder = Recorder(events)

    @transform.module_pass(opt_level=0, name="Reenter")
    def reenter(mod, ctx):
        with transform.PassContext(instruments=[recorder]):
            adding("Inside")(mod)
        raise ValueError("after the inner context")

    with transform.PassContext(instruments=[recorder]):
        with pytest.raises(ValueError):
            reenter(ModuleOp([]))
    assert events == [
        "entered Reenter depth 0 received 0 running []",
        "entered Inside depth 0 received 0 running []",
        "left Inside depth 0 received 0 returned 1 running [Inside] (state of Inside)",
        "ended unseen Reenter failed True module 0 running []",
    ]


def test_timing_installed_inside_a_pass_pops_the_shared_profile(clock, capsys):
    # TVM: the profile stack is per thread, so the new timing instrument's run_after_pass closes the
    # entry the old one opened (its ended_unseen; reads: Switch starts at 0, ends at 40). The old
    # one's exit cleared the recorded tree, so nothing is left to render, and no pass is open.
    clock.extend([0, 40])

    @transform.module_pass(opt_level=0, name="Switch")
    def switch(mod, ctx):
        ctx.override_instruments([PassTimingInstrument()])
        return mod

    with transform.PassContext(instruments=[PassTimingInstrument()]):
        switch(ModuleOp([]))
        assert PassTimingInstrument.render() == ""  # not "cannot print pass profile while still in a pass!"
    assert clock == []
    assert capsys.readouterr().err == "Warning: no passes have been profiled, did you enable pass profiling?\n"


BUILT_IN = [PrintIR, IRDiff, ChromeTraceInstrument, OpCountDiff, PassMemoryInstrument, CrashReproducer,
            NumericalBisect, PassTimingInstrument, PipelineChecks, PassStatisticsInstrument]


@pytest.mark.parametrize("instrument_class", BUILT_IN, ids=lambda cls: cls.__name__)
def test_built_in_instruments_use_the_hooks_not_their_own_stack(instrument_class):
    assert issubclass(instrument_class, NestingInstrument)
    for hook in ("run_before_pass", "run_after_pass", "run_after_pass_failed"):
        assert getattr(instrument_class, hook) is getattr(NestingInstrument, hook), hook


def test_opt_bisect_keeps_no_stack():
    # OptBisect only answers should_run, which sees every pass before any frame exists.
    assert not issubclass(OptBisect, NestingInstrument)
    assert "should_run" in vars(OptBisect)
