"""The seed tutorial's four exception-handling demos, reproduced line for line.

Expected output is copied from /work/shared/seed/pass_instrument_tutorial.txt. xrelay's
exceptions are plain Python exceptions, so the "Catching" line prints the exception with
`traceback.format_exception_only(ex)[-1].strip()` ("ValueError: ..."), as TVM's str(ex) does.
"""

import traceback

import pytest
from xdsl.dialects.builtin import ModuleOp

from xrelay import transform
from xrelay.instrument import pass_instrument


pytestmark = pytest.mark.usefixtures("fresh_pass_context")


@transform.module_pass(opt_level=0, name="InferType")
def infer_type(mod, ctx):
    """Stand-in for Relay's InferType: returns the module unchanged."""
    return mod


class PassExampleBase:
    def __init__(self, name):
        self._name = name

    def enter_pass_ctx(self):
        print(self._name, "enter_pass_ctx")

    def exit_pass_ctx(self):
        print(self._name, "exit_pass_ctx")

    def should_run(self, mod, info):
        print(self._name, "should_run")
        return True

    def run_before_pass(self, mod, pass_info):
        print(self._name, "run_before_pass")

    def run_after_pass(self, mod, pass_info):
        print(self._name, "run_after_pass")


@pass_instrument
class PassFine(PassExampleBase):
    pass


@pass_instrument
class PassBadEnterCtx(PassExampleBase):
    def enter_pass_ctx(self):
        print(self._name, "bad enter_pass_ctx!!!")
        raise ValueError("{} bad enter_pass_ctx".format(self._name))


@pass_instrument
class PassBadExitCtx(PassExampleBase):
    def exit_pass_ctx(self):
        print(self._name, "bad exit_pass_ctx!!!")
        raise ValueError("{} bad exit_pass_ctx".format(self._name))


@pass_instrument
class PassBadRunBefore(PassExampleBase):
    def run_before_pass(self, mod, pass_info):
        print(self._name, "bad run_before_pass!!!")
        raise ValueError("{} bad run_before_pass".format(self._name))


def catching(ex):
    print("Catching", traceback.format_exception_only(ex)[-1].strip())


def test_exception_in_enter_pass_ctx(capsys):
    relay_mod = ModuleOp([])
    demo_ctx = transform.PassContext(
        instruments=[
            PassFine("PassFine_0"),
            PassBadEnterCtx("PassBadEnterCtx"),
            PassFine("PassFine_1"),
        ]
    )
    try:
        with demo_ctx:
            relay_mod = infer_type(relay_mod)
    except ValueError as ex:
        catching(ex)
    assert capsys.readouterr().out == (
        "PassFine_0 enter_pass_ctx\n"
        "PassBadEnterCtx bad enter_pass_ctx!!!\n"
        "PassFine_0 exit_pass_ctx\n"
        "Catching ValueError: PassBadEnterCtx bad enter_pass_ctx\n"
    )
    # The failure cleared the instruments, so nothing is printed.
    demo_ctx.override_instruments([])
    assert capsys.readouterr().out == ""
    assert transform.PassContext.current() is not demo_ctx


def test_exception_in_exit_pass_ctx(capsys):
    relay_mod = ModuleOp([])
    demo_ctx = transform.PassContext(
        instruments=[
            PassFine("PassFine_0"),
            PassBadExitCtx("PassBadExitCtx"),
            PassFine("PassFine_1"),
        ]
    )
    try:
        # PassFine_1 execute enter_pass_ctx, but not exit_pass_ctx.
        with demo_ctx:
            relay_mod = infer_type(relay_mod)
    except ValueError as ex:
        catching(ex)
    assert capsys.readouterr().out == (
        "PassFine_0 enter_pass_ctx\n"
        "PassBadExitCtx enter_pass_ctx\n"
        "PassFine_1 enter_pass_ctx\n"
        "PassFine_0 should_run\n"
        "PassBadExitCtx should_run\n"
        "PassFine_1 should_run\n"
        "PassFine_0 run_before_pass\n"
        "PassBadExitCtx run_before_pass\n"
        "PassFine_1 run_before_pass\n"
        "PassFine_0 run_after_pass\n"
        "PassBadExitCtx run_after_pass\n"
        "PassFine_1 run_after_pass\n"
        "PassFine_0 exit_pass_ctx\n"
        "PassBadExitCtx bad exit_pass_ctx!!!\n"
        "Catching ValueError: PassBadExitCtx bad exit_pass_ctx\n"
    )
    assert demo_ctx.instruments == []


def test_exception_in_run_before_pass_with_context(capsys):
    relay_mod = ModuleOp([])
    demo_ctx = transform.PassContext(
        instruments=[
            PassFine("PassFine_0"),
            PassBadRunBefore("PassBadRunBefore"),
            PassFine("PassFine_1"),
        ]
    )
    try:
        # All exit_pass_ctx are called.
        with demo_ctx:
            relay_mod = infer_type(relay_mod)
    except ValueError as ex:
        catching(ex)
    assert capsys.readouterr().out == (
        "PassFine_0 enter_pass_ctx\n"
        "PassBadRunBefore enter_pass_ctx\n"
        "PassFine_1 enter_pass_ctx\n"
        "PassFine_0 should_run\n"
        "PassBadRunBefore should_run\n"
        "PassFine_1 should_run\n"
        "PassFine_0 run_before_pass\n"
        "PassBadRunBefore bad run_before_pass!!!\n"
        "PassFine_0 exit_pass_ctx\n"
        "PassBadRunBefore exit_pass_ctx\n"
        "PassFine_1 exit_pass_ctx\n"
        "Catching ValueError: PassBadRunBefore bad run_before_pass\n"
    )
    # Instrumentation is not disabled: override_instruments exits the old instruments.
    demo_ctx.override_instruments([])
    assert capsys.readouterr().out == (
        "PassFine_0 exit_pass_ctx\n"
        "PassBadRunBefore exit_pass_ctx\n"
        "PassFine_1 exit_pass_ctx\n"
    )


def test_exception_in_run_before_pass_on_global_context(capsys):
    relay_mod = ModuleOp([])
    cur_pass_ctx = transform.PassContext.current()
    cur_pass_ctx.override_instruments(
        [
            PassFine("PassFine_0"),
            PassBadRunBefore("PassBadRunBefore"),
            PassFine("PassFine_1"),
        ]
    )
    assert capsys.readouterr().out == (
        "PassFine_0 enter_pass_ctx\n"
        "PassBadRunBefore enter_pass_ctx\n"
        "PassFine_1 enter_pass_ctx\n"
    )
    try:
        # No ``exit_pass_ctx`` got executed.
        relay_mod = infer_type(relay_mod)
    except ValueError as ex:
        catching(ex)
    assert capsys.readouterr().out == (
        "PassFine_0 should_run\n"
        "PassBadRunBefore should_run\n"
        "PassFine_1 should_run\n"
        "PassFine_0 run_before_pass\n"
        "PassBadRunBefore bad run_before_pass!!!\n"
        "Catching ValueError: PassBadRunBefore bad run_before_pass\n"
    )
    cur_pass_ctx.override_instruments([])
    assert capsys.readouterr().out == (
        "PassFine_0 exit_pass_ctx\n"
        "PassBadRunBefore exit_pass_ctx\n"
        "PassFine_1 exit_pass_ctx\n"
    )
