"""xDSL ModulePasses as instrumented passes (`transform.wrap`, Sequential children, get_pass) and XRelayPass."""

from dataclasses import dataclass

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp, i32
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

from xrelay import transform
from xrelay.instrument import PassInstrument, pass_manager


pytestmark = pytest.mark.usefixtures("fresh_pass_context")


class Names(PassInstrument):
    def __init__(self):
        self.events = []

    def run_before_pass(self, mod, info):
        self.events.append(f"before {info.name}")

    def run_after_pass(self, mod, info):
        self.events.append(f"after {info.name}")


def n_ops(mod):
    return len(list(mod.body.block.ops))


@dataclass(frozen=True)
class AppendConstant(ModulePass):
    """Appends `arith.constant value` to the module body, in place."""

    name = "append-constant"
    value: int = 1
    fail: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        op.body.block.add_op(arith.ConstantOp.from_int_and_width(self.value, 32))
        if self.fail:
            raise ValueError("append-constant failed after modifying the module")


def test_wrap_runs_on_a_clone_through_instruments():
    names = Names()
    mod = ModuleOp([])
    wrapped = transform.wrap(AppendConstant())
    assert wrapped.info == transform.PassInfo("append-constant", 0, ())
    renamed = transform.wrap(AppendConstant(value=2), name="AppendTwo", opt_level=3, required=["X"])
    assert renamed.info == transform.PassInfo("AppendTwo", 3, ("X",))
    with transform.PassContext(instruments=[names]):
        new_mod = wrapped(mod)
    assert n_ops(mod) == 0  # the received module is untouched
    assert n_ops(new_mod) == 1
    assert names.events == ["before append-constant", "after append-constant"]


def test_failing_xdsl_pass_leaves_module_unchanged():
    mod = ModuleOp([arith.ConstantOp.from_int_and_width(5, 32)])
    text = str(mod)
    with pytest.raises(ValueError, match="append-constant failed"):
        transform.wrap(AppendConstant(fail=True))(mod)
    assert str(mod) == text


def test_sequential_accepts_module_pass_instances():
    names = Names()
    seq = transform.Sequential([AppendConstant(), transform.wrap(AppendConstant(7), name="Seven", opt_level=3)])
    assert [child.info.name for child in seq.passes] == ["append-constant", "Seven"]
    with transform.PassContext(instruments=[names]):
        mod = seq(ModuleOp([]))
    assert n_ops(mod) == 1  # "Seven" is filtered out at opt_level 2
    assert names.events == ["before sequential", "before append-constant", "after append-constant", "after sequential"]


def test_wrap_rejects_non_passes():
    with pytest.raises(TypeError, match="call it first"):
        transform.wrap(AppendConstant)
    with pytest.raises(TypeError, match="ModulePass instance"):
        transform.wrap("cse")


def make_function_with_duplicates():
    c1 = arith.ConstantOp.from_int_and_width(3, 32)
    c2 = arith.ConstantOp.from_int_and_width(3, 32)
    add = arith.AddiOp(c1, c2)
    ret = func.ReturnOp(add)
    fn = func.FuncOp("main", ((), (i32,)))
    fn.body.block.add_ops([c1, c2, add, ret])
    return ModuleOp([fn])


def test_upstream_pass_by_name_and_instance():
    mod = make_function_with_duplicates()
    names = Names()
    with transform.PassContext(instruments=[names]):
        by_name = transform.get_pass("cse")(mod)
        by_instance = transform.Sequential([CommonSubexpressionElimination()])(mod)
    fn_ops = lambda m: [op.name for op in m.body.block.first_op.body.block.ops]  # noqa: E731
    assert fn_ops(mod) == ["arith.constant", "arith.constant", "arith.addi", "func.return"]
    assert fn_ops(by_name) == ["arith.constant", "arith.addi", "func.return"]
    assert fn_ops(by_instance) == ["arith.constant", "arith.addi", "func.return"]
    assert names.events == ["before cse", "after cse", "before sequential", "before cse", "after cse", "after sequential"]


# -- XRelayPass ---------------------------------------------------------------------------------


@transform.register_xrelay_pass
@dataclass(frozen=True)
class AppendNinePass(transform.XRelayPass):
    """Appends a constant; a function-level pass, so InferType runs after it."""

    name = "append-nine"
    tvm_name = "AppendNinePass"
    opt_level = 3
    required = ("TestRequirement",)
    infer_type_after = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        op.body.block.add_op(arith.ConstantOp.from_int_and_width(9, 32))


@pytest.fixture
def fake_infer_type(monkeypatch):
    """Register a stand-in "InferType" (counts ops) for the duration of a test."""
    try:  # make sure a later lazy import of xrelay.passes cannot collide with the stand-in
        pass_manager._load_builtin_passes()
    except Exception:  # noqa: BLE001 - best effort: the test only needs the stand-in afterwards
        pass
    seen = []

    @transform.module_pass(opt_level=0, name="InferType")
    def infer_type(mod, ctx):
        seen.append(n_ops(mod))
        return mod

    monkeypatch.setitem(pass_manager._REGISTRY, "InferType", lambda: infer_type)
    return seen


def test_xrelay_pass_is_callable_instrumented_and_runs_infer_type_nested(fake_infer_type):
    names = Names()
    pass_ = AppendNinePass()
    assert isinstance(pass_, transform.Pass) and isinstance(pass_, ModulePass)
    assert pass_.info == transform.PassInfo("AppendNinePass", 3, ("TestRequirement",))
    mod = ModuleOp([])
    with transform.PassContext(instruments=[names]):
        new_mod = pass_(mod)
    assert n_ops(mod) == 0 and n_ops(new_mod) == 1
    assert fake_infer_type == [1]  # InferType saw the rewritten module
    assert names.events == ["before AppendNinePass", "before InferType", "after InferType", "after AppendNinePass"]


def test_xrelay_pass_apply_is_plain_in_place_xdsl():
    mod = ModuleOp([])
    AppendNinePass().apply(Context(), mod)
    assert n_ops(mod) == 1


def test_register_xrelay_pass_registers_both_names(fake_infer_type):
    assert isinstance(transform.get_pass("AppendNinePass"), AppendNinePass)
    assert isinstance(transform.get_pass("append-nine"), AppendNinePass)
    with pytest.raises(TypeError, match="XRelayPass subclass"):
        transform.register_xrelay_pass(AppendConstant)


def test_xrelay_pass_in_sequential_resolves_required(fake_infer_type, monkeypatch):
    ran = []

    @transform.module_pass(opt_level=0, name="TestRequirement")
    def requirement(mod, ctx):
        ran.append("TestRequirement")
        return mod

    monkeypatch.setitem(pass_manager._REGISTRY, "TestRequirement", lambda: requirement)
    names = Names()
    seq = transform.Sequential([AppendNinePass()])
    with transform.PassContext(opt_level=2, instruments=[names]):
        seq(ModuleOp([]))  # filtered out (opt_level 3)
    with transform.PassContext(opt_level=3, instruments=[names]):
        seq(ModuleOp([]))
    assert ran == ["TestRequirement"]
    assert names.events == [
        "before sequential",
        "after sequential",
        "before sequential",
        "before TestRequirement",
        "after TestRequirement",
        "before AppendNinePass",
        "before InferType",
        "after InferType",
        "after AppendNinePass",
        "after sequential",
    ]
