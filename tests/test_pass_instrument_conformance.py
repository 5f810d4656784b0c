"""Conformance of xrelay's pass infrastructure with Apache TVM, scenario by scenario.

Every expected trace below was derived by hand from TVM's source (read from apache/tvm main,
the tvm-ffi era that TVM 0.2x ships: src/ir/transform.cc, src/ir/instrument.cc,
include/tvm/ir/transform.h, python/tvm/ir/transform.py, python/tvm/ir/instrument.py); each
test names the lines it follows. Where docs/architecture.md §4 is explicit and TVM differs, it wins
and the test says so. Passes are tiny module passes over empty xDSL modules.
"""

import pytest
from xdsl.dialects.builtin import ModuleOp

from xrelay import transform
from xrelay.instrument import PassTimingInstrument, pass_instrument, timing
from tool_passes import op_adding_pass, run_on_empty_module

WARNING = "Warning: no passes have been profiled, did you enable pass profiling?\n"


@pytest.fixture(autouse=True)
def fresh_state(fresh_pass_context):
    timing._store.__init__()
    yield
    timing._store.__init__()



@pass_instrument
class Printer:
    """The tutorial's PassExampleBase, printing every hook it receives and the pass it is about;
    `answer` is should_run's answer (or a function of the PassInfo giving it)."""

    def __init__(self, name, answer=True):
        self._name = name
        self.answer = answer

    def _saw(self, hook, info=None):
        print(self._name, hook, *([] if info is None else [info.name]))

    def enter_pass_ctx(self):
        self._saw("enter_pass_ctx")

    def exit_pass_ctx(self):
        self._saw("exit_pass_ctx")

    def should_run(self, mod, info):
        self._saw("should_run", info)
        return self.answer if not callable(self.answer) else self.answer(info)

    def run_before_pass(self, mod, info):
        self._saw("run_before_pass", info)

    def run_after_pass(self, mod, info):
        self._saw("run_after_pass", info)


@pass_instrument
class BadExit(Printer):
    def exit_pass_ctx(self):
        print(self._name, "bad exit_pass_ctx!!!")
        raise ValueError(f"{self._name} bad exit_pass_ctx")


def printing_pass(name, opt_level=0, calls=(), required=()):
    """A module pass printing `  body NAME`, calling `calls` (nested passes) and adding one op."""
    return op_adding_pass(name, opt_level, calls, required, on_run=lambda: print("  body", name))


def lines(capsys):
    return capsys.readouterr().out.splitlines()


def printed(capsys, pass_, *instruments, **context):
    """The lines printed while `pass_` runs on an empty module in a PassContext(**context) with `instruments`."""
    run_on_empty_module(pass_, *instruments, **context)
    return lines(capsys)


def ran(printer, name):
    """The lines a Printer named `printer` and printing_pass(name) print when the pass runs, nothing nested."""
    return [f"{printer} should_run {name}", f"{printer} run_before_pass {name}", f"  body {name}",
            f"{printer} run_after_pass {name}"]


# -- the global default context -------------------------------------------------------------------


def test_global_context_starts_with_an_empty_instrument_list(capsys):
    # include/tvm/ir/transform.h: `ffi::Array<instrument::PassInstrument> instruments;` with
    # `PassContextNode() = default;`, and ffi::Array() is `data_ = ArrayObj::Empty()`: the default
    # context's list is defined and empty, so OverrideInstruments exits nothing.
    cur = transform.PassContext.current()
    assert cur.instruments == []
    cur.override_instruments([Printer("A")])
    assert lines(capsys) == ["A enter_pass_ctx"]
    printing_pass("P")(ModuleOp([]))
    cur.override_instruments([])
    assert lines(capsys) == [*ran("A", "P"), "A exit_pass_ctx"]
    assert cur.instruments == []


def test_override_instruments_with_none_uninstruments_the_context(capsys):
    # TVM's own tests/python/relay/test_pass_instrument.py::test_pass_timing_instrument calls
    # override_instruments(None): the old list exits (InstrumentExitPassContext) and the new,
    # undefined, list enters nothing and instruments no pass (InstrumentBeforePass returns true).
    cur = transform.PassContext.current()
    cur.override_instruments([Printer("A")])
    cur.override_instruments(None)
    printing_pass("P")(ModuleOp([]))
    assert lines(capsys) == ["A enter_pass_ctx", "A exit_pass_ctx", "  body P"]
    assert cur.instruments is None


def test_constructor_takes_any_iterable_of_names_and_instruments(capsys):
    # python/tvm/ir/transform.py PassContext.__init__: `list(x) if x else []` for required_pass,
    # disabled_pass and instruments.
    ctx = transform.PassContext(
        required_pass=(n for n in ["R"]),
        disabled_pass=iter(["D"]),
        instruments=(inst for inst in [Printer("A")]),
    )
    assert ctx.required_pass == ("R",) and ctx.disabled_pass == ("D",)
    assert [type(inst).__name__ for inst in ctx.instruments] == ["Printer"]
    assert transform.PassContext(required_pass=None, disabled_pass=[], instruments=None).instruments == []


# -- should_run -------------------------------------------------------------------------------------


def test_veto_of_a_nested_pass_inside_a_running_pass(capsys):
    # transform.cc Pass::operator(): the nested call goes through InstrumentBeforePass too; a veto
    # returns the module it was given without before/after hooks, the outer pass carries on.
    inner = printing_pass("Inner")
    outer = printing_pass("Outer", calls=[inner])
    mod = ModuleOp([])
    with transform.PassContext(instruments=[Printer("A", answer=lambda info: info.name != "Inner")]):
        out = outer(mod)
    assert len(list(out.body.block.ops)) == 1  # only Outer added an op
    assert lines(capsys) == [
        "A enter_pass_ctx",
        "A should_run Outer",
        "A run_before_pass Outer",
        "  body Outer",
        "A should_run Inner",
        "A run_after_pass Outer",
        "A exit_pass_ctx",
    ]


def test_required_pass_is_not_asked_but_still_instrumented_when_nested(capsys):
    # InstrumentBeforePass: `if (!pass_required) { ShouldRun... }` then RunBeforePass for all.
    inner = printing_pass("Inner")
    outer = printing_pass("Outer", calls=[inner])
    # B vetoes Outer (every instrument is still asked), so Inner never runs at all.
    assert printed(capsys, outer, Printer("A"), Printer("B", answer=False), required_pass=["Inner"]) == [
        "A enter_pass_ctx",
        "B enter_pass_ctx",
        "A should_run Outer",
        "B should_run Outer",
        "A exit_pass_ctx",
        "B exit_pass_ctx",
    ]
    assert printed(capsys, outer, Printer("A"), Printer("B", answer=lambda i: i.name == "Outer"), required_pass=["Inner"]) == [
        "A enter_pass_ctx",
        "B enter_pass_ctx",
        "A should_run Outer",
        "B should_run Outer",
        "A run_before_pass Outer",
        "B run_before_pass Outer",
        "  body Outer",
        "A run_before_pass Inner",
        "B run_before_pass Inner",
        "  body Inner",
        "A run_after_pass Inner",
        "B run_after_pass Inner",
        "A run_after_pass Outer",
        "B run_after_pass Outer",
        "A exit_pass_ctx",
        "B exit_pass_ctx",
    ]


def test_should_run_answers_must_be_bool():
    # docs/architecture.md §4, item 2 (explicit): a non-bool answer is a TypeError. TVM 0.2x's FFI would also accept
    # an int (TypeTraits<bool> casts kTVMFFIInt); the documented rule wins here.
    import numpy as np

    for answer in (None, 1, 0, np.bool_(True), "yes"):
        with pytest.raises(TypeError, match="must return a bool"):
            with transform.PassContext(instruments=[Printer("A", answer=answer)]):
                printing_pass("P")(ModuleOp([]))


# -- Sequential -------------------------------------------------------------------------------------


def test_vetoed_child_still_gets_its_required_passes_first(capsys):
    # transform.cc SequentialNode::operator() (pre-ResolveDependency form, docs/architecture.md §4, item 5): the
    # required passes run through `GetPass(name)(mod, pass_ctx)` before `pass(mod, pass_ctx)`;
    # a should_run veto of the child only skips the child.
    transform.register_pass("conf.Req", lambda: printing_pass("conf.Req"), override=True)
    child = printing_pass("Child", required=["conf.Req"])
    seq = transform.Sequential([child])
    assert printed(capsys, seq, Printer("A", answer=lambda info: info.name != "Child")) == [
        "A enter_pass_ctx",
        "A should_run sequential",
        "A run_before_pass sequential",
        *ran("A", "conf.Req"),
        "A should_run Child",
        "A run_after_pass sequential",
        "A exit_pass_ctx",
    ]


def test_nested_sequentials_with_default_names_and_disabled_sequential(capsys):
    # PassContext::PassEnabled: the disabled check is by name, so disabled_pass=["sequential"]
    # drops a nested default-named Sequential, while the outer one (called directly) runs.
    inner = transform.Sequential([printing_pass("X")])
    outer = transform.Sequential([printing_pass("W"), inner, printing_pass("Y", opt_level=3)])
    assert printed(capsys, outer, Printer("A"), opt_level=3, disabled_pass=["sequential"]) == [
        "A enter_pass_ctx",
        "A should_run sequential",
        "A run_before_pass sequential",
        *ran("A", "W"),
        *ran("A", "Y"),
        "A run_after_pass sequential",
        "A exit_pass_ctx",
    ]
    # Without the disabled name, the inner Sequential (opt_level 0) runs as a nested pair; Y (opt
    # level 3) does not run at opt level 2.
    assert printed(capsys, outer, Printer("A"), opt_level=2) == [
        "A enter_pass_ctx",
        "A should_run sequential",
        "A run_before_pass sequential",
        *ran("A", "W"),
        "A should_run sequential",
        "A run_before_pass sequential",
        *ran("A", "X"),
        "A run_after_pass sequential",
        "A run_after_pass sequential",
        "A exit_pass_ctx",
    ]


def test_sequential_and_module_pass_reprs():
    # transform.cc ReprPrinter dispatches for SequentialNode and ModulePassNode.
    seq = transform.Sequential([printing_pass("A", opt_level=1), printing_pass("B")], opt_level=2, name="S")
    assert repr(seq) == "Run Sequential pass: S at the optimization level 2. The passes will be executed are: [A B ]"
    assert repr(printing_pass("A", opt_level=1)) == "Run Module pass: A at the optimization level 1"
    assert transform.Sequential().info == transform.PassInfo("sequential", 0, ())


# -- PassInfo and module_pass -------------------------------------------------------------------------


def test_pass_info_text_is_tvms():
    # transform.cc: ReprPrinter for PassInfoNode ("The meta data of the pass - ..."), which is
    # both str() and repr() of a TVM Object.
    info = transform.PassInfo("FoldConstant", 2)
    assert str(info) == repr(info) == "The meta data of the pass - pass name: FoldConstant, opt_level: 2, required passes: []\n"
    info = transform.PassInfo("ConvertLayout", 3, ["InferType", "CanonicalizeOps"])
    assert str(info) == (
        "The meta data of the pass - pass name: ConvertLayout, opt_level: 3, required passes: [\n"
        "InferType, CanonicalizeOps, ]\n"
    )
    # TVM's Python API (explicit): the constructor takes (name, opt_level, required); TVM's is
    # PassInfo(opt_level, name, required).
    assert (info.name, info.opt_level, info.required) == ("ConvertLayout", 3, ("InferType", "CanonicalizeOps"))


def test_module_pass_edge_cases():
    # python/tvm/ir/transform.py module_pass: opt_level is mandatory; `name if name else
    # pass_arg.__name__`; a class becomes a pass class; a non-callable is a TypeError.
    with pytest.raises(ValueError, match=r"^Please provide opt_level for the module pass\.$"):
        transform.module_pass(opt_level=None)
    assert transform.module_pass(lambda mod, ctx: mod, opt_level=1).info.name == "<lambda>"

    def named(mod, ctx):
        return mod

    assert transform.module_pass(named, opt_level=0, name="").info.name == "named"
    assert transform.module_pass(opt_level=0, name="Given")(named).info.name == "Given"

    @transform.module_pass(opt_level=2)
    class MyPipeline:
        def __init__(self, flag):
            self.flag = flag

        def transform_module(self, mod, ctx):
            return mod

    assert isinstance(MyPipeline, type) and MyPipeline.__name__ == "MyPipeline"
    instance = MyPipeline(flag=True)
    assert isinstance(instance, transform.ModulePass)
    assert instance.info.name == "MyPipeline" and instance.flag is True
    with pytest.raises(TypeError, match="pass_func must be a callable for Module pass"):
        transform.module_pass(42, opt_level=0)


def test_pass_instrument_decorator_edge_cases():
    # python/tvm/ir/instrument.py pass_instrument: `if not inspect.isclass(pi_cls): raise
    # TypeError("pi_cls must be a class")`; the name handed to C++ is `cls.__name__`.
    with pytest.raises(TypeError, match="pi_cls must be a class"):
        pass_instrument(lambda: None)

    class Derived(Printer):
        pass

    assert Printer("x").name == "Printer" and Derived("y").name == "Derived"
    assert repr(Derived("y")) == "Derived"  # ReprPrinter for BasePassInstrumentNode prints the name
    assert PassTimingInstrument().name == "PassTimingInstrument"


# -- contexts: current(), nesting, re-entering, failing exits ---------------------------------------


def test_current_through_nested_withs_and_exceptions():
    # transform.cc EnterWithScope pushes after InstrumentEnterPassContext; ExitWithScope pops
    # before InstrumentExitPassContext; Python's `with` always calls __exit__.
    default = transform.PassContext.current()
    outer, inner = transform.PassContext(opt_level=1), transform.PassContext(opt_level=3)
    with outer:
        assert transform.PassContext.current() is outer
        with pytest.raises(KeyError):
            with inner:
                assert transform.PassContext.current() is inner
                raise KeyError("body")
        assert transform.PassContext.current() is outer
    assert transform.PassContext.current() is default


def test_failing_exit_of_an_inner_context_leaves_the_outer_one_intact(capsys):
    # ExitWithScope pops first, then InstrumentExitPassContext stops at the failure and
    # ClearOnError clears only the inner context's list.
    outer = transform.PassContext(instruments=[Printer("O")])
    inner = transform.PassContext(instruments=[Printer("I0"), BadExit("I1"), Printer("I2")])
    with outer:
        with pytest.raises(ValueError, match="I1 bad exit_pass_ctx"):
            with inner:
                printing_pass("P")(ModuleOp([]))
        assert transform.PassContext.current() is outer
        assert inner.instruments == [] and len(outer.instruments) == 1
        printing_pass("Q")(ModuleOp([]))
    assert lines(capsys) == [
        "O enter_pass_ctx",
        "I0 enter_pass_ctx",
        "I1 enter_pass_ctx",
        "I2 enter_pass_ctx",
        "I0 should_run P",
        "I1 should_run P",
        "I2 should_run P",
        "I0 run_before_pass P",
        "I1 run_before_pass P",
        "I2 run_before_pass P",
        "  body P",
        "I0 run_after_pass P",
        "I1 run_after_pass P",
        "I2 run_after_pass P",
        "I0 exit_pass_ctx",
        "I1 bad exit_pass_ctx!!!",
        *ran("O", "Q"),
        "O exit_pass_ctx",
    ]


def test_reentering_a_context_reenters_its_instruments(capsys):
    # Each `with` runs EnterWithScope/ExitWithScope again over the same instrument list; the same
    # context may even be entered while already current (the stack holds it twice).
    ctx = transform.PassContext(instruments=[Printer("A")])
    with ctx:
        pass
    with ctx:
        with ctx:
            assert transform.PassContext.current() is ctx
        assert transform.PassContext.current() is ctx
    assert lines(capsys) == [
        "A enter_pass_ctx",
        "A exit_pass_ctx",
        "A enter_pass_ctx",
        "A enter_pass_ctx",
        "A exit_pass_ctx",
        "A exit_pass_ctx",
    ]


def test_instruments_list_keeps_order_and_objects():
    # The context keeps the instruments given, in order (the tutorial's `ctx.instruments[0].render()`).
    a, b = Printer("A"), PassTimingInstrument()
    ctx = transform.PassContext(instruments=[a, b])
    assert ctx.instruments == [a, b] and ctx.instruments[1] is b
    ctx.instruments.clear()  # a new list each time: the context's own list is untouched
    assert ctx.instruments == [a, b]


# -- PassTimingInstrument: one profile per thread, shared by every timing instrument ---------------


def test_two_timing_instruments_in_one_context_nest_each_pass(clock):
    # instrument.cc: both instruments' run_before_pass call PassProfile::EnterPass on the one
    # thread-local stack, so the second entry nests under the first; ExitPass pops the top.
    # Reads: P start (t1) 0, P start (t2) 1, P end (t1 pops t2's entry) 11, P end (t1's entry) 15.
    clock.extend([0, 1, 11, 15])
    t1, t2 = PassTimingInstrument(), PassTimingInstrument()
    with transform.PassContext(instruments=[t1, t2]):
        printing_pass("P")(ModuleOp([]))
        expected = "P: 15us [5us] (100.00%; 100.00%)\n\tP: 10us [10us] (66.67%; 66.67%)\n"
        assert t1.render() == expected
        assert t2.render() == expected
        assert PassTimingInstrument.render() == expected  # render is a static method in TVM
    assert clock == []


def test_inner_context_exit_clears_the_outer_timing_profile(clock, capsys):
    # MakePassTimingInstrument: exit_pass_ctx is `root.children.clear()` on the shared store, so
    # leaving an inner context with its own timing instrument drops what the outer one recorded.
    clock.extend([0, 10, 20, 25, 30, 34])
    outer_timer, inner_timer = PassTimingInstrument(), PassTimingInstrument()
    with transform.PassContext(instruments=[outer_timer]):
        printing_pass("A")(ModuleOp([]))
        with transform.PassContext(instruments=[inner_timer]):
            printing_pass("B")(ModuleOp([]))
            assert inner_timer.render() == "A: 10us [10us] (66.67%; 66.67%)\nB: 5us [5us] (33.33%; 33.33%)\n"
        assert outer_timer.render() == ""
        assert capsys.readouterr().err == WARNING
        printing_pass("C")(ModuleOp([]))
        assert outer_timer.render() == "C: 4us [4us] (100.00%; 100.00%)\n"
    assert inner_timer.render() == ""
    assert capsys.readouterr().err == WARNING


def test_render_inside_a_timed_pass_is_an_error_even_from_another_instance(clock):
    # RenderPassProfiles: CHECK(entry->profile_stack.empty()) << "cannot print pass profile while
    # still in a pass!" -- the stack is per thread, not per instrument.
    clock.extend([0, 1])
    idle = PassTimingInstrument()  # never installed

    @transform.module_pass(opt_level=0, name="Renders")
    def renders(mod, ctx):
        with pytest.raises(RuntimeError, match="cannot print pass profile while still in a pass!"):
            idle.render()
        return mod

    with transform.PassContext(instruments=[PassTimingInstrument()]):
        renders(ModuleOp([]))
        assert idle.render() == "Renders: 1us [1us] (100.00%; 100.00%)\n"


def test_zero_totals_print_as_cpp_doubles(clock):
    # RenderPassProfiles divides doubles: 0/0 is x86-64's default NaN (sign bit set, glibc prints
    # "-nan") and x/0 is "inf". (Real clocks never give a zero total; the fake one does.)
    clock.extend([5, 5])
    timer = PassTimingInstrument()
    with transform.PassContext(instruments=[timer]):
        printing_pass("P")(ModuleOp([]))
        assert timer.render() == "P: 0us [0us] (-nan%; -nan%)\n"
    # A parent of zero length around a 1us child (impossible with a monotonic clock).
    clock.extend([7, 7, 8, 7])
    with transform.PassContext(instruments=[timer]):
        printing_pass("Outer", calls=[printing_pass("Inner")])(ModuleOp([]))
        assert timer.render() == "Outer: 0us [-1us] (-nan%; -nan%)\n\tInner: 1us [1us] (inf%; inf%)\n"


def test_render_output_ends_with_a_newline_and_warning_goes_to_stderr(clock, capsys):
    # os << ... << "%)\n" for every line; LOG(WARNING) writes to stderr and returns String().
    assert PassTimingInstrument.render() == ""
    out_err = capsys.readouterr()
    assert out_err.out == "" and out_err.err == WARNING
    clock.extend([0, 2])
    timer = PassTimingInstrument()
    timing_ctx = transform.PassContext(instruments=[timer])
    with timing_ctx:
        printing_pass("P")(ModuleOp([]))
        text = timer.render()
    assert text.endswith("%)\n") and text.count("\n") == 1
    assert capsys.readouterr().err == ""


def test_override_from_inside_a_pass_body_switches_the_after_hooks(capsys):
    # Pass::operator() calls pass_ctx.InstrumentAfterPass(ret, info) after the body, and that reads
    # the context's instruments again: the new list gets run_after_pass, the old one does not.
    @transform.module_pass(opt_level=0, name="Switch")
    def switch(mod, pass_ctx):
        pass_ctx.override_instruments([Printer("B")])
        return mod

    assert printed(capsys, switch, Printer("A")) == [
        "A enter_pass_ctx",
        "A should_run Switch",
        "A run_before_pass Switch",
        "A exit_pass_ctx",
        "B enter_pass_ctx",
        "B run_after_pass Switch",
        "B exit_pass_ctx",
    ]


def test_contexts_and_profiles_are_per_thread(clock):
    # transform.cc PassContextThreadLocalStoreGet and instrument.cc PassProfileThreadLocalStore are
    # thread_local: another thread has its own default context, context stack and profile.
    import threading

    seen = {}

    def worker():
        seen["current"] = transform.PassContext.current()
        seen["render"] = PassTimingInstrument.render()

    clock.extend([0, 3])
    with transform.PassContext(instruments=[PassTimingInstrument()]) as ctx:
        printing_pass("P")(ModuleOp([]))
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        assert PassTimingInstrument.render() == "P: 3us [3us] (100.00%; 100.00%)\n"
    assert seen["current"] is not ctx and seen["current"] is not transform.PassContext.current()
    assert seen["current"].instruments == []
    assert seen["render"] == ""


def test_failing_enter_of_an_inner_context_keeps_the_outer_one_current(capsys):
    # EnterWithScope: InstrumentEnterPassContext throws before the push, so the inner context never
    # becomes current; ExitContextOnError exits the entered ones newest first, then ClearOnError.
    @pass_instrument
    class BadEnter(Printer):
        def enter_pass_ctx(self):
            print(self._name, "bad enter_pass_ctx!!!")
            raise ValueError(f"{self._name} bad enter_pass_ctx")

    outer = transform.PassContext(instruments=[Printer("O")])
    inner = transform.PassContext(instruments=[Printer("I0"), Printer("I1"), BadEnter("I2"), Printer("I3")])
    with outer:
        with pytest.raises(ValueError, match="I2 bad enter_pass_ctx"):
            with inner:
                pass
        assert transform.PassContext.current() is outer and inner.instruments == []
    assert lines(capsys) == [
        "O enter_pass_ctx",
        "I0 enter_pass_ctx",
        "I1 enter_pass_ctx",
        "I2 bad enter_pass_ctx!!!",
        "I1 exit_pass_ctx",
        "I0 exit_pass_ctx",
        "O exit_pass_ctx",
    ]
