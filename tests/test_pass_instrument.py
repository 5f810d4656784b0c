"""Pass-instrument semantics (docs/architecture.md §4), ported from TVM's tests/python/relay/test_pass_instrument.py
plus the PassContext/Sequential cases of test_pass_manager.py, with exact expected event lists.

Passes are tiny module passes over xDSL builtin modules (they append an `arith.constant`);
nothing here depends on the nn dialect.
"""

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp

from xrelay import transform
from xrelay.instrument import PassInstrument, pass_instrument
from tool_passes import op_adding_pass, run_on_empty_module


pytestmark = pytest.mark.usefixtures("fresh_pass_context")


@pytest.fixture
def events():
    return []


def n_ops(mod):
    return len(list(mod.body.block.ops))


class Rec(PassInstrument):
    """Records every hook call into a shared list, prefixed by its id."""

    def __init__(self, id, events, answer=True):
        self.id = id
        self.events = events
        self.answer = answer

    def enter_pass_ctx(self):
        self.events.append(f"{self.id} enter_pass_ctx")

    def exit_pass_ctx(self):
        self.events.append(f"{self.id} exit_pass_ctx")

    def should_run(self, mod, info):
        self.events.append(f"{self.id} should_run {info.name}")
        return self.answer

    def run_before_pass(self, mod, info):
        self.events.append(f"{self.id} run_before_pass {info.name}")

    def run_after_pass(self, mod, info):
        self.events.append(f"{self.id} run_after_pass {info.name}")


def adder(name, events, opt_level=0, required=()):
    """A module pass that records `NAME pass` and returns a copy of the module with one more op."""
    return op_adding_pass(name, opt_level, required=required, on_run=lambda: events.append(f"{name} pass"))


def test_instrument_call_sequence(events):
    transform1 = adder("transform1", events, opt_level=2)
    transform2 = adder("transform2", events, opt_level=2)
    mod = ModuleOp([])
    with transform.PassContext(instruments=[Rec("%1", events), Rec("%2", events)]):
        mod = transform1(mod)
        mod = transform2(mod)
    assert events == [
        "%1 enter_pass_ctx",
        "%2 enter_pass_ctx",
        "%1 should_run transform1",
        "%2 should_run transform1",
        "%1 run_before_pass transform1",
        "%2 run_before_pass transform1",
        "transform1 pass",
        "%1 run_after_pass transform1",
        "%2 run_after_pass transform1",
        "%1 should_run transform2",
        "%2 should_run transform2",
        "%1 run_before_pass transform2",
        "%2 run_before_pass transform2",
        "transform2 pass",
        "%1 run_after_pass transform2",
        "%2 run_after_pass transform2",
        "%1 exit_pass_ctx",
        "%2 exit_pass_ctx",
    ]
    assert n_ops(mod) == 2


def test_custom_instrument_by_decorator_and_by_subclass_are_equivalent(capsys):
    class MySubclass(PassInstrument):
        def enter_pass_ctx(self):
            print("enter ctx")

        def exit_pass_ctx(self):
            print("exit ctx")

        def run_before_pass(self, mod, info):
            print("run before " + info.name)

        def run_after_pass(self, mod, info):
            print("run after " + info.name)

    @pass_instrument
    class MyTest:  # a plain class with the same hook functions
        enter_pass_ctx = MySubclass.enter_pass_ctx
        exit_pass_ctx = MySubclass.exit_pass_ctx
        run_before_pass = MySubclass.run_before_pass
        run_after_pass = MySubclass.run_after_pass

    infer_type = adder("InferType", [])
    expected = "enter ctx\nrun before InferType\nrun after InferType\nexit ctx\n"
    for instrument in (MyTest(), MySubclass()):
        with transform.PassContext(instruments=[instrument]):
            infer_type(ModuleOp([]))
        assert capsys.readouterr().out == expected
    assert isinstance(MyTest(), PassInstrument)
    assert MyTest.__name__ == "MyTest"
    assert MyTest().name == "MyTest"
    assert MySubclass().name == "MySubclass"
    # Undefined hooks are no-ops; should_run defaults to True.
    assert MyTest().should_run(None, None) is True


def test_decorator_keeps_user_hooks_and_init():
    @pass_instrument()
    class WithArgs:
        """doc"""

        def __init__(self, a, b=2):
            self.total = a + b

        def should_run(self, mod, info):
            return False

    inst = WithArgs(1, b=3)
    assert inst.total == 4
    assert inst.should_run(None, None) is False
    assert WithArgs.__doc__ == "doc"
    assert pass_instrument(WithArgs) is WithArgs  # already a PassInstrument
    with pytest.raises(TypeError, match="expected a class"):
        pass_instrument(lambda: None)


def test_should_run_veto_skips_pass_and_returns_same_module(capsys):
    @pass_instrument
    class CustomPI:
        def should_run(self, mod, info):
            # Only run passes whose name contains "InferType".
            return "InferType" in info.name

        def run_before_pass(self, mod, info):
            print(info.name)

    body_runs = []
    annotate = adder("AnnotateSpans", body_runs)
    anf = adder("ToANormalForm", body_runs)
    infer_type = adder("InferType", body_runs)
    mod = ModuleOp([])
    with transform.PassContext(instruments=[CustomPI()]):
        skipped = annotate(mod)
        assert skipped is mod
        skipped = anf(skipped)
        assert skipped is mod
        mod = infer_type(skipped)
    assert capsys.readouterr().out == "InferType\n"
    assert body_runs == ["InferType pass"]
    assert n_ops(mod) == 1


def test_multiple_instruments(capsys):
    @pass_instrument
    class SkipPass:
        def __init__(self, skip_pass_name):
            self.skip_pass_name = skip_pass_name

        def should_run(self, mod, info):
            return self.skip_pass_name not in info.name

    @pass_instrument
    class PrintPassName:
        def run_before_pass(self, mod, info):
            print(info.name)

    passes = [adder(name, []) for name in ("AnnotateSpans", "ToANormalForm", "InferType")]
    mod = ModuleOp([])
    with transform.PassContext(instruments=[SkipPass("AnnotateSpans"), SkipPass("ToANormalForm"), PrintPassName()]):
        for pass_ in passes:
            mod = pass_(mod)
    assert capsys.readouterr().out == "InferType\n"


def test_every_should_run_is_asked_even_after_a_veto(events):
    pass_ = adder("P", events)
    with transform.PassContext(instruments=[Rec("%1", events, answer=False), Rec("%2", events)]):
        pass_(ModuleOp([]))
    assert events == [
        "%1 enter_pass_ctx",
        "%2 enter_pass_ctx",
        "%1 should_run P",
        "%2 should_run P",
        "%1 exit_pass_ctx",
        "%2 exit_pass_ctx",
    ]


def test_instrument_pass_counts():
    @pass_instrument
    class PassesCounter:
        def __init__(self):
            self.run_before_count = 0
            self.run_after_count = 0

        def __clear(self):
            self.run_before_count = 0
            self.run_after_count = 0

        def enter_pass_ctx(self):
            self.__clear()

        def exit_pass_ctx(self):
            self.__clear()

        def run_before_pass(self, mod, info):
            self.run_before_count = self.run_before_count + 1

        def run_after_pass(self, mod, info):
            self.run_after_count = self.run_after_count + 1

    counter = PassesCounter()
    seq = transform.Sequential([adder(f"p{i}", []) for i in range(4)])
    with transform.PassContext(instruments=[counter]):
        seq(ModuleOp([]))
        assert counter.run_before_count == 5  # the Sequential and its 4 children
        assert counter.run_after_count == 5
    # Out of the pass context scope, reset by exit_pass_ctx.
    assert counter.run_before_count == 0
    assert counter.run_after_count == 0


def test_non_bool_should_run_is_a_type_error(events):
    class ReturnsNone(PassInstrument):
        def should_run(self, mod, info):
            events.append("none should_run")

    pass_ = adder("P", events)
    for bad in ([ReturnsNone()], [Rec("%1", events, answer=1)]):
        events.clear()
        with pytest.raises(TypeError, match="should_run returned"):
            with transform.PassContext(instruments=[*bad, Rec("%2", events)]):
                pass_(ModuleOp([]))
        # Raised at once: %2 is never asked and the pass never runs; the with still exits.
        assert "P pass" not in events
        assert "%2 should_run P" not in events
        assert events[-1] == "%2 exit_pass_ctx"


# -- exceptions (docs/architecture.md §4, items 7-10) ------------------------------------------------------------


class Broken(Rec):
    """A Rec whose hook named `where` records itself and then raises."""

    def __init__(self, id, events, where):
        super().__init__(id, events)
        self.where = where

    def _maybe_raise(self, hook):
        if hook == self.where:
            raise RuntimeError(f"{self.id} broken {hook}")

    def enter_pass_ctx(self):
        super().enter_pass_ctx()
        self._maybe_raise("enter_pass_ctx")

    def exit_pass_ctx(self):
        super().exit_pass_ctx()
        self._maybe_raise("exit_pass_ctx")

    def should_run(self, mod, info):
        answer = super().should_run(mod, info)
        self._maybe_raise("should_run")
        return answer

    def run_before_pass(self, mod, info):
        super().run_before_pass(mod, info)
        self._maybe_raise("run_before_pass")

    def run_after_pass(self, mod, info):
        super().run_after_pass(mod, info)
        self._maybe_raise("run_after_pass")


def test_enter_pass_ctx_exception(events):
    ctx = transform.PassContext(instruments=[Rec("%1", events), Rec("%2", events), Broken("%3", events, "enter_pass_ctx"), Rec("%4", events)])
    with pytest.raises(RuntimeError, match="%3 broken enter_pass_ctx"):
        with ctx:
            events.append("body")  # never reached
    assert events == [
        "%1 enter_pass_ctx",
        "%2 enter_pass_ctx",
        "%3 enter_pass_ctx",
        "%2 exit_pass_ctx",
        "%1 exit_pass_ctx",
    ]
    assert transform.PassContext.current() is not ctx
    assert ctx.instruments == []
    assert transform.PassContext.current().instruments == []  # TVM's default context: an empty Array


def test_enter_pass_ctx_exception_global(events):
    cur = transform.PassContext.current()
    with pytest.raises(RuntimeError, match="%2 broken enter_pass_ctx"):
        cur.override_instruments([Rec("%1", events), Broken("%2", events, "enter_pass_ctx")])
    assert events == ["%1 enter_pass_ctx", "%2 enter_pass_ctx", "%1 exit_pass_ctx"]
    assert not cur.instruments


def test_exit_pass_ctx_exception(events):
    ctx = transform.PassContext(instruments=[Rec("%1", events), Broken("%2", events, "exit_pass_ctx"), Rec("%3", events)])
    with pytest.raises(RuntimeError, match="%2 broken exit_pass_ctx"):
        with ctx:
            pass
    assert events == [
        "%1 enter_pass_ctx",
        "%2 enter_pass_ctx",
        "%3 enter_pass_ctx",
        "%1 exit_pass_ctx",
        "%2 exit_pass_ctx",
    ]
    assert transform.PassContext.current() is not ctx
    assert not ctx.instruments


def test_exit_pass_ctx_exception_global(events):
    cur = transform.PassContext.current()
    with pytest.raises(RuntimeError, match="%1 broken exit_pass_ctx"):
        cur.override_instruments([Broken("%1", events, "exit_pass_ctx")])
        cur.override_instruments([Rec("%new", events)])
    # The old list failed to exit: cleared, and the new instrument was never installed nor entered.
    assert events == ["%1 enter_pass_ctx", "%1 exit_pass_ctx"]
    assert not cur.instruments


def test_pass_exception(events):
    @transform.module_pass(opt_level=2)
    def transform_fn(mod, ctx):
        events.append("transform pass")
        raise RuntimeError("Just a dummy error")

    with pytest.raises(RuntimeError, match="dummy"):
        with transform.PassContext(instruments=[Rec("%1", events), Rec("%2", events)]):
            transform_fn(ModuleOp([]))
    assert events == [
        "%1 enter_pass_ctx",
        "%2 enter_pass_ctx",
        "%1 should_run transform_fn",
        "%2 should_run transform_fn",
        "%1 run_before_pass transform_fn",
        "%2 run_before_pass transform_fn",
        "transform pass",
        "%1 exit_pass_ctx",
        "%2 exit_pass_ctx",
    ]


@pytest.mark.parametrize("where, expected", [
    ("should_run", [
        "%1 enter_pass_ctx",
        "%2 enter_pass_ctx",
        "%1 should_run transform",
        "%1 exit_pass_ctx",
        "%2 exit_pass_ctx",
    ]),
    ("run_before_pass", [
        "%1 enter_pass_ctx",
        "%2 enter_pass_ctx",
        "%1 should_run transform",
        "%2 should_run transform",
        "%1 run_before_pass transform",
        "%1 exit_pass_ctx",
        "%2 exit_pass_ctx",
    ]),
    ("run_after_pass", [
        "%1 enter_pass_ctx",
        "%2 enter_pass_ctx",
        "%1 should_run transform",
        "%2 should_run transform",
        "%1 run_before_pass transform",
        "%2 run_before_pass transform",
        "transform pass",
        "%1 run_after_pass transform",
        "%1 exit_pass_ctx",
        "%2 exit_pass_ctx",
    ]),
])
def test_exception_in_a_pass_hook_propagates_and_with_exits_every_instrument(events, where, expected):
    pass_ = adder("transform", events, opt_level=2)
    with pytest.raises(RuntimeError, match=f"%1 broken {where}"):
        with transform.PassContext(instruments=[Broken("%1", events, where), Rec("%2", events)]):
            pass_(ModuleOp([]))
    assert events == expected


@pytest.mark.parametrize("where", ["should_run", "run_before_pass", "run_after_pass", "body"])
def test_exceptions_on_global_context_do_not_exit(events, where):
    pass_ = adder("P", events)
    if where == "body":
        pass_ = transform.module_pass(lambda mod, ctx: 1 / 0, opt_level=0, name="P")
    cur = transform.PassContext.current()
    cur.override_instruments([Rec("%1", events), Broken("%2", events, where)])
    events.clear()
    with pytest.raises((RuntimeError, ZeroDivisionError)):
        pass_(ModuleOp([]))
    assert not any("exit_pass_ctx" in e for e in events)
    assert len(cur.instruments) == 2  # not cleared
    events.clear()
    cur.override_instruments([])
    assert events == ["%1 exit_pass_ctx", "%2 exit_pass_ctx"]


def test_failed_pass_leaves_received_module_unchanged(events):
    @transform.module_pass(opt_level=0, name="Grow")
    def grow_then_fail(mod, ctx):
        new_mod = mod.clone()
        new_mod.body.block.add_op(arith.ConstantOp.from_int_and_width(7, 32))
        raise ValueError("after growing")

    mod = ModuleOp([arith.ConstantOp.from_int_and_width(1, 32)])
    before = str(mod)
    with pytest.raises(ValueError):
        with transform.PassContext(instruments=[Rec("%1", events)]):
            grow_then_fail(mod)
    assert str(mod) == before


# -- override_instruments and nesting ------------------------------------------------------------


def test_override_instruments_on_a_with_context(events):
    pass_ = adder("P", events)
    with transform.PassContext(instruments=[Rec("%1", events)]) as ctx:
        assert transform.PassContext.current() is ctx
        ctx.override_instruments([Rec("%2", events)])
        pass_(ModuleOp([]))
    assert events == [
        "%1 enter_pass_ctx",
        "%1 exit_pass_ctx",
        "%2 enter_pass_ctx",
        "%2 should_run P",
        "%2 run_before_pass P",
        "P pass",
        "%2 run_after_pass P",
        "%2 exit_pass_ctx",
    ]


def test_override_on_global_context_and_inner_with_hides_it(events):
    pass_ = adder("P", events)
    cur = transform.PassContext.current()
    assert cur.opt_level == 2 and cur.instruments == [] and cur.required_pass == () and cur.disabled_pass == ()
    cur.override_instruments([Rec("%g", events)])
    pass_(ModuleOp([]))
    with transform.PassContext(instruments=[Rec("%w", events)]):
        pass_(ModuleOp([]))
    pass_(ModuleOp([]))
    cur.override_instruments(None)
    assert cur.instruments is None
    assert events == [
        "%g enter_pass_ctx",
        "%g should_run P",
        "%g run_before_pass P",
        "P pass",
        "%g run_after_pass P",
        "%w enter_pass_ctx",
        "%w should_run P",
        "%w run_before_pass P",
        "P pass",
        "%w run_after_pass P",
        "%w exit_pass_ctx",
        "%g should_run P",
        "%g run_before_pass P",
        "P pass",
        "%g run_after_pass P",
        "%g exit_pass_ctx",
    ]


def test_nested_contexts_hide_outer_instruments(events):
    pass_ = adder("P", events)
    with transform.PassContext(instruments=[Rec("%outer", events)]) as outer:
        pass_(ModuleOp([]))
        with transform.PassContext(opt_level=3, instruments=[Rec("%inner", events)]) as inner:
            assert transform.PassContext.current() is inner
            pass_(ModuleOp([]))
        with transform.PassContext():  # no instruments at all inside
            pass_(ModuleOp([]))
        assert transform.PassContext.current() is outer
        pass_(ModuleOp([]))
    assert events == [
        "%outer enter_pass_ctx",
        "%outer should_run P",
        "%outer run_before_pass P",
        "P pass",
        "%outer run_after_pass P",
        "%inner enter_pass_ctx",
        "%inner should_run P",
        "%inner run_before_pass P",
        "P pass",
        "%inner run_after_pass P",
        "%inner exit_pass_ctx",
        "P pass",
        "%outer should_run P",
        "%outer run_before_pass P",
        "P pass",
        "%outer run_after_pass P",
        "%outer exit_pass_ctx",
    ]


def test_nested_pass_calls_give_nested_pairs(events):
    inner = adder("Inner", events)
    outer = op_adding_pass("Outer", calls=[inner, inner], on_run=lambda: events.append("Outer pass"))
    assert n_ops(run_on_empty_module(outer, Rec("%1", events))) == 3  # Inner twice, then Outer
    assert events == [
        "%1 enter_pass_ctx",
        "%1 should_run Outer",
        "%1 run_before_pass Outer",
        "Outer pass",
        "%1 should_run Inner",
        "%1 run_before_pass Inner",
        "Inner pass",
        "%1 run_after_pass Inner",
        "%1 should_run Inner",
        "%1 run_before_pass Inner",
        "Inner pass",
        "%1 run_after_pass Inner",
        "%1 run_after_pass Outer",
        "%1 exit_pass_ctx",
    ]


def test_before_sees_input_and_after_sees_output():
    seen = []

    class Sizes(PassInstrument):
        def run_before_pass(self, mod, info):
            seen.append(("before", n_ops(mod)))

        def run_after_pass(self, mod, info):
            seen.append(("after", n_ops(mod)))

    with transform.PassContext(instruments=[Sizes()]):
        adder("P", [])(ModuleOp([]))
    assert seen == [("before", 0), ("after", 1)]


# -- Sequential, opt levels, required and disabled passes ----------------------------------------------


def test_sequential_defaults_and_info():
    seq = transform.Sequential([adder("a", [])])
    assert seq.info == transform.PassInfo("sequential", 0, ())
    named = transform.Sequential([], opt_level=3, name="FoldScaleAxis", required=["InferType"])
    assert named.info.name == "FoldScaleAxis"
    assert named.info.opt_level == 3
    assert named.info.required == ("InferType",)
    with pytest.raises(TypeError, match="passes must be a list"):
        transform.Sequential(adder("a", []))
    with pytest.raises(TypeError, match=r"passes\[1\]"):
        transform.Sequential([adder("a", []), "not a pass"])


def test_sequential_filters_children_by_opt_level(events):
    seq = transform.Sequential(
        [adder("Backward", events, opt_level=3), adder("Forward", events, opt_level=3), adder("Fold", events, opt_level=2)],
        name="FoldScaleAxis",
    )
    assert n_ops(run_on_empty_module(seq, Rec("%1", events))) == 1
    assert events == [
        "%1 enter_pass_ctx",
        "%1 should_run FoldScaleAxis",
        "%1 run_before_pass FoldScaleAxis",
        "%1 should_run Fold",
        "%1 run_before_pass Fold",
        "Fold pass",
        "%1 run_after_pass Fold",
        "%1 run_after_pass FoldScaleAxis",
        "%1 exit_pass_ctx",
    ]
    events.clear()
    with transform.PassContext(opt_level=3):
        mod = seq(ModuleOp([]))
    assert events == ["Backward pass", "Forward pass", "Fold pass"]
    assert n_ops(mod) == 3


def test_directly_called_passes_are_never_filtered(events):
    high = adder("High", events, opt_level=4, required=["NotRegisteredAnywhere"])
    seq = transform.Sequential([high], opt_level=4, name="Seq")
    with transform.PassContext(opt_level=0, disabled_pass=["High", "Seq"]):
        high(ModuleOp([]))  # own `required` not resolved either (the name is not registered)
        seq(ModuleOp([]))  # the Sequential runs, but its disabled child does not
    assert events == ["High pass"]


def test_required_and_disabled_passes_in_sequential(events):
    seq = transform.Sequential(
        [adder("A", events, opt_level=1), adder("B", events, opt_level=4), adder("C", events, opt_level=0)]
    )
    with transform.PassContext(opt_level=2, required_pass=["B"], disabled_pass=["C"], instruments=[Rec("%1", events)]):
        seq(ModuleOp([]))
    # B is required: it runs despite opt_level 4 and is not asked should_run.
    assert events == [
        "%1 enter_pass_ctx",
        "%1 should_run sequential",
        "%1 run_before_pass sequential",
        "%1 should_run A",
        "%1 run_before_pass A",
        "A pass",
        "%1 run_after_pass A",
        "%1 run_before_pass B",
        "B pass",
        "%1 run_after_pass B",
        "%1 run_after_pass sequential",
        "%1 exit_pass_ctx",
    ]
    events.clear()
    # disabled wins over required
    with transform.PassContext(opt_level=3, required_pass=["A"], disabled_pass=["A"]):
        seq(ModuleOp([]))
    assert events == ["C pass"]


def test_required_pass_skips_should_run_even_when_called_directly(events):
    pass_ = adder("Req", events)
    assert n_ops(run_on_empty_module(pass_, Rec("%1", events, answer=False), required_pass=["Req"])) == 1
    assert events == [
        "%1 enter_pass_ctx",
        "%1 run_before_pass Req",
        "Req pass",
        "%1 run_after_pass Req",
        "%1 exit_pass_ctx",
    ]


def test_child_required_passes_run_as_siblings_before_it(events):
    transform.register_pass("test_pi.InferType", lambda: adder("test_pi.InferType", events, opt_level=4), override=True)
    transform.register_pass("test_pi.Canon", lambda: adder("test_pi.Canon", events, opt_level=3), override=True)
    convert = adder("Convert", events, opt_level=3, required=["test_pi.InferType", "test_pi.Canon"])
    seq = transform.Sequential([convert, adder("Fold", events, opt_level=2)])
    # The required passes run through the instruments, without the opt-level/disabled check.
    assert n_ops(run_on_empty_module(seq, Rec("%1", events), opt_level=3, disabled_pass=["test_pi.Canon"])) == 4
    assert events == [
        "%1 enter_pass_ctx",
        "%1 should_run sequential",
        "%1 run_before_pass sequential",
        "%1 should_run test_pi.InferType",
        "%1 run_before_pass test_pi.InferType",
        "test_pi.InferType pass",
        "%1 run_after_pass test_pi.InferType",
        "%1 should_run test_pi.Canon",
        "%1 run_before_pass test_pi.Canon",
        "test_pi.Canon pass",
        "%1 run_after_pass test_pi.Canon",
        "%1 should_run Convert",
        "%1 run_before_pass Convert",
        "Convert pass",
        "%1 run_after_pass Convert",
        "%1 should_run Fold",
        "%1 run_before_pass Fold",
        "Fold pass",
        "%1 run_after_pass Fold",
        "%1 run_after_pass sequential",
        "%1 exit_pass_ctx",
    ]
    events.clear()
    # A filtered-out child does not resolve its required passes either.
    with transform.PassContext(opt_level=2):
        seq(ModuleOp([]))
    assert events == ["Fold pass"]


def test_nested_sequential(events):
    inner = transform.Sequential([adder("X", events, opt_level=1), adder("Y", events, opt_level=3)], opt_level=2, name="Inner")
    outer = transform.Sequential([adder("W", events), inner, transform.Sequential([adder("Z", events)], opt_level=3, name="Skipped")], name="Outer")
    with transform.PassContext(opt_level=2, instruments=[Rec("%1", events)]):
        outer(ModuleOp([]))
    assert events == [
        "%1 enter_pass_ctx",
        "%1 should_run Outer",
        "%1 run_before_pass Outer",
        "%1 should_run W",
        "%1 run_before_pass W",
        "W pass",
        "%1 run_after_pass W",
        "%1 should_run Inner",
        "%1 run_before_pass Inner",
        "%1 should_run X",
        "%1 run_before_pass X",
        "X pass",
        "%1 run_after_pass X",
        "%1 run_after_pass Inner",
        "%1 run_after_pass Outer",
        "%1 exit_pass_ctx",
    ]


def test_vetoed_sequential_runs_no_children(events):
    @pass_instrument
    class NoSeq:
        def should_run(self, mod, info):
            return info.name != "sequential"

    seq = transform.Sequential([adder("A", events)])
    mod = ModuleOp([])
    with transform.PassContext(instruments=[NoSeq()]):
        assert seq(mod) is mod
    assert events == []


# -- module_pass, PassInfo, registry, PassContext arguments ------------------------------------


def test_module_pass_forms():
    with pytest.raises(ValueError, match="opt_level"):
        transform.module_pass(lambda mod, ctx: mod)

    @transform.module_pass(opt_level=1, required=["InferType"])
    def my_pass(mod, ctx):
        assert ctx is transform.PassContext.current()
        return mod

    assert isinstance(my_pass, transform.Pass) and isinstance(my_pass, transform.ModulePass)
    assert my_pass.info == transform.PassInfo("my_pass", 1, ("InferType",))

    @transform.module_pass(opt_level=2, name="Appender")
    class AppendConstants:
        def __init__(self, count):
            self.count = count

        def transform_module(self, mod, ctx):
            new_mod = mod.clone()
            for _ in range(self.count):
                new_mod.body.block.add_op(arith.ConstantOp.from_int_and_width(0, 32))
            return new_mod

    pass_ = AppendConstants(3)
    assert pass_.info.name == "Appender" and pass_.info.opt_level == 2
    assert pass_.count == 3  # attribute fallback to the wrapped instance
    assert AppendConstants.__name__ == "AppendConstants"
    assert n_ops(pass_(ModuleOp([]))) == 3

    with pytest.raises(TypeError, match="transform_module"):
        transform.module_pass(type("NoBody", (), {}), opt_level=0)
    with pytest.raises(TypeError, match="returned None"):
        transform.module_pass(lambda mod, ctx: None, opt_level=0, name="Nothing")(ModuleOp([]))


def test_pass_info_validation():
    info = transform.PassInfo("P", 2, ["A", "B"])
    assert info.required == ("A", "B")
    assert transform.PassInfo("P", 0).required == ()
    with pytest.raises(TypeError):
        transform.PassInfo("P", "2")
    with pytest.raises(TypeError):
        transform.PassInfo("P", 2, "A")
    with pytest.raises(Exception):
        info.name = "Q"  # frozen


def test_pass_context_arguments():
    ctx = transform.PassContext(opt_level=3, required_pass=["A"], disabled_pass={"B"}, config={"k": 1})
    assert ctx.opt_level == 3
    assert ctx.required_pass == ("A",)
    assert ctx.disabled_pass == ("B",)
    assert ctx.config == {"k": 1}
    assert transform.PassContext().config == {}
    with pytest.raises(AttributeError):
        ctx.opt_level = 1  # read-only, as in TVM
    with pytest.raises(TypeError, match="required_pass"):
        transform.PassContext(required_pass="A")
    with pytest.raises(TypeError, match="instruments"):
        transform.PassContext(instruments=Rec("%1", []))
    with pytest.raises(TypeError, match="opt_level"):
        transform.PassContext(opt_level="3")


def test_registry_errors():
    with pytest.raises(ValueError, match="unknown pass 'NoSuchPassAnywhere'"):
        transform.get_pass("NoSuchPassAnywhere")
    transform.register_pass("test_pi.Dup", lambda: adder("test_pi.Dup", []), override=True)
    with pytest.raises(ValueError, match="already registered"):
        transform.register_pass("test_pi.Dup", lambda: adder("other", []))
    assert transform.get_pass("test_pi.Dup").info.name == "test_pi.Dup"


def test_leaving_a_context_that_is_not_current_is_an_error():
    outer = transform.PassContext()
    inner = transform.PassContext()
    outer.__enter__()
    inner.__enter__()
    with pytest.raises(RuntimeError, match="not the current"):
        outer.__exit__(None, None, None)
    inner.__exit__(None, None, None)
    outer.__exit__(None, None, None)


# -- beyond TVM: run_after_pass_failed ---------------------------------------------------------


class FailAware(Rec):
    def run_after_pass_failed(self, mod, info):
        self.events.append(f"{self.id} run_after_pass_failed {info.name}")


@pytest.mark.parametrize(
    "where, expected_failed",
    [
        ("run_before_pass", ["%0"]),  # %1's before raised: only %0 saw a completed before
        ("body", ["%0", "%1", "%2"]),
        ("run_after_pass", ["%1", "%2"]),  # %0's after completed, %1's raised
    ],
)
def test_run_after_pass_failed_reaches_instruments_left_open(events, where, expected_failed):
    pass_ = adder("P", events)
    if where == "body":
        pass_ = transform.module_pass(lambda mod, ctx: 1 / 0, opt_level=0, name="P")
        middle = FailAware("%1", events)
    else:
        middle = type("BrokenFailAware", (Broken, FailAware), {})("%1", events, where)
    with pytest.raises((RuntimeError, ZeroDivisionError)):
        with transform.PassContext(instruments=[FailAware("%0", events), middle, FailAware("%2", events)]):
            pass_(ModuleOp([]))
    failed = [e.split()[0] for e in events if "run_after_pass_failed" in e]
    assert failed == expected_failed
    # TVM-visible behaviour is unchanged: no run_after_pass for the instruments after the failure.
    assert "%2 run_after_pass P" not in events


def test_run_after_pass_failed_sees_the_pass_error():
    import sys

    errors = []

    class Catcher(PassInstrument):
        def run_after_pass_failed(self, mod, info):
            errors.append((info.name, repr(sys.exception())))

    @transform.module_pass(opt_level=0, name="Boom")
    def boom(mod, ctx):
        raise KeyError("k")

    with pytest.raises(KeyError):
        with transform.PassContext(instruments=[Catcher()]):
            boom(ModuleOp([]))
    assert errors == [("Boom", "KeyError('k')")]
