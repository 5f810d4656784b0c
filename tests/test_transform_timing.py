"""PassTimingInstrument with a fake clock: TVM's render format (docs/architecture.md §4, item 13), hand-computed numbers."""

import pytest
from xdsl.dialects.builtin import ModuleOp

from xrelay import transform
from xrelay.instrument import PassTimingInstrument

WARNING = "Warning: no passes have been profiled, did you enable pass profiling?\n"


pytestmark = pytest.mark.usefixtures("fresh_pass_context")



def identity(name, opt_level=0, calls=()):
    @transform.module_pass(opt_level=opt_level, name=name)
    def body(mod, ctx):
        for nested in calls:
            mod = nested(mod)
        return mod

    return body


def tutorial_passes():
    """InferType, and FoldScaleAxis = Sequential(Backward (opt 3), Forward (opt 3), FoldConstant ▸ InferType)."""
    infer_type = identity("InferType")
    fold_constant = identity("FoldConstant", opt_level=2, calls=[infer_type])
    fold_scale_axis = transform.Sequential(
        [identity("BackwardFoldScaleAxis", 3), identity("ForwardFoldScaleAxis", 3), fold_constant],
        name="FoldScaleAxis",
    )
    return infer_type, fold_scale_axis


def test_render_reproduces_the_tutorial_tree(clock):
    # before/after readings: InferType 0..7168; FoldScaleAxis 10000..18242 holding
    # FoldConstant 10007..18242 holding InferType 11708..18242.
    clock.extend([0, 7168, 10000, 10007, 11708, 18242, 18242, 18242])
    infer_type, fold_scale_axis = tutorial_passes()
    timing_inst = PassTimingInstrument()
    with transform.PassContext(instruments=[timing_inst]):
        mod = infer_type(ModuleOp([]))
        mod = fold_scale_axis(mod)
        profiles = timing_inst.render()
    # all = 7168 + 8242 = 15410; e.g. FoldConstant 8235/15410 = 53.44%, 8235/8242 = 99.92%,
    # self 8235 - 6534 = 1701; nested InferType 6534/8235 = 79.34%.
    assert profiles == (
        "InferType: 7168us [7168us] (46.52%; 46.52%)\n"
        "FoldScaleAxis: 8242us [7us] (53.48%; 53.48%)\n"
        "\tFoldConstant: 8235us [1701us] (53.44%; 99.92%)\n"
        "\t\tInferType: 6534us [6534us] (42.40%; 79.34%)\n"
    )
    assert clock == []


def test_render_siblings_rounding_and_no_clear(clock, capsys):
    # A: 0..1000 with children B 100..350.5 (250.5us) and C 400..900 (500us); D: 2000..2000.5.
    clock.extend([0, 100, 350.5, 400, 900, 1000, 2000, 2000.5])
    b, c = identity("B"), identity("C")
    a = identity("A", calls=[b, c])
    d = identity("D")
    timing_inst = PassTimingInstrument()
    with transform.PassContext(instruments=[timing_inst]):
        d(a(ModuleOp([])))
        first = timing_inst.render()
        second = timing_inst.render()
    # all = 1000.5. Exact halves round to even, as C++'s fixed/setprecision(0) does:
    # A self = 1000 - 500 - 250.5 = 249.5 -> "250"; B 250.5 -> "250"; D 0.5 -> "0".
    # A 1000/1000.5 = 99.95%; B 250.5/1000.5 = 25.04%, 250.5/1000 = 25.05%; C 500/1000.5 = 49.98%.
    expected = (
        "A: 1000us [250us] (99.95%; 99.95%)\n"
        "\tB: 250us [250us] (25.04%; 25.05%)\n"
        "\tC: 500us [500us] (49.98%; 50.00%)\n"
        "D: 0us [0us] (0.05%; 0.05%)\n"
    )
    assert first == expected
    assert second == expected  # render does not clear
    assert capsys.readouterr().err == ""


def test_empty_render_warns_and_exit_clears(clock, capsys):
    timing_inst = PassTimingInstrument()
    assert timing_inst.render() == ""
    assert capsys.readouterr().err == WARNING
    clock.extend([5, 9])
    with transform.PassContext(instruments=[timing_inst]):
        identity("P")(ModuleOp([]))
        assert timing_inst.render() == "P: 4us [4us] (100.00%; 100.00%)\n"
    assert capsys.readouterr().err == ""
    assert timing_inst.render() == ""  # exit_pass_ctx cleared the profile
    assert capsys.readouterr().err == WARNING


def test_global_context_override_flow(clock, capsys):
    """The tutorial's second section: override_instruments on the current (global) context."""
    clock.extend([0, 10, 10, 30])
    timing_inst = PassTimingInstrument()
    cur_pass_ctx = transform.PassContext.current()
    cur_pass_ctx.override_instruments([timing_inst])
    mod = identity("InferType")(ModuleOp([]))
    identity("FoldScaleAxis")(mod)
    assert timing_inst.render() == (
        "InferType: 10us [10us] (33.33%; 33.33%)\n"
        "FoldScaleAxis: 20us [20us] (66.67%; 66.67%)\n"
    )
    cur_pass_ctx.override_instruments([])
    identity("NotTimed")(mod)  # no instruments any more: no clock reads
    assert timing_inst.render() == ""
    assert capsys.readouterr().err == WARNING


def test_stack_stays_balanced_after_a_pass_raises(clock):
    @transform.module_pass(opt_level=0, name="Boom")
    def boom(mod, ctx):
        raise ValueError("boom")

    outer = identity("Outer", calls=[boom])
    # Outer 0.., Boom 10..25 (failure), Outer ..40 (failure propagates), then Fine 50..60.
    clock.extend([0, 10, 25, 40, 50, 60])
    timing_inst = PassTimingInstrument()
    with transform.PassContext(instruments=[timing_inst]):
        with pytest.raises(ValueError):
            outer(ModuleOp([]))
        identity("Fine")(ModuleOp([]))
        assert timing_inst.render() == (
            "Outer: 40us [25us] (80.00%; 80.00%)\n"
            "\tBoom: 15us [15us] (30.00%; 37.50%)\n"
            "Fine: 10us [10us] (20.00%; 20.00%)\n"
        )


def test_render_inside_a_pass_is_an_error(clock):
    clock.extend([0, 1])
    timing_inst = PassTimingInstrument()

    @transform.module_pass(opt_level=0, name="Renders")
    def renders(mod, ctx):
        with pytest.raises(RuntimeError, match="still in a pass"):
            timing_inst.render()
        return mod

    with transform.PassContext(instruments=[timing_inst]):
        renders(ModuleOp([]))


def test_timing_counts_later_instruments(clock):
    """Hooks of instruments after the timer (in list order) fall inside its measured span."""
    reads = []

    class Reader:  # a plain object with one hook (duck-typed instrument)
        def run_before_pass(self, mod, info):
            reads.append(clock[0])

    clock.extend([0, 3])
    timing_inst = PassTimingInstrument()
    other = PassTimingInstrument()
    with transform.PassContext(instruments=[timing_inst, Reader()]):
        identity("P")(ModuleOp([]))
        assert timing_inst.render() == "P: 3us [3us] (100.00%; 100.00%)\n"
    assert other.render() == ""  # one shared profile per thread (as TVM), cleared on exit
    assert reads == [3]
