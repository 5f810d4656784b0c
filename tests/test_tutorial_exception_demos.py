"""The seed tutorial's four exception-handling demos, one at a time, with the example's own
instruments and helpers (examples/pass_instrument_tutorial.py) on an empty module.

Expected output is the seed's (tests/tutorial_seed.py). xrelay's exceptions are plain Python
exceptions, so the "Catching" line prints the exception with
`traceback.format_exception_only(ex)[-1].strip()` ("ValueError: ..."), as TVM's str(ex) does.
"""

import importlib.util
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp

from xrelay import transform
from tutorial_seed import (
    BAD_ENTER_DEMO,
    BAD_EXIT_DEMO,
    BAD_RUN_BEFORE_CURRENT_CONTEXT_DEMO,
    BAD_RUN_BEFORE_DEMO,
    RUN_BEFORE_ENTERS,
    RUN_BEFORE_EXITS,
)

pytestmark = pytest.mark.usefixtures("fresh_pass_context")

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "pass_instrument_tutorial.py"
_spec = importlib.util.spec_from_file_location("pass_instrument_tutorial", EXAMPLE)
tutorial = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tutorial)  # defines the classes; the sections only run in main()


@pytest.mark.parametrize("bad_class, printed, keeps_instruments, printed_when_cleared", [
    # A failing enter exits the instruments already entered and clears the list.
    (tutorial.PassBadEnterCtx, BAD_ENTER_DEMO, False, ""),
    # A failing exit stops exiting there (PassFine_1 never exits) and clears the list.
    (tutorial.PassBadExitCtx, BAD_EXIT_DEMO, False, ""),
    # A failing run_before_pass: `with` exits every instrument; the list is kept, so clearing it
    # (override_instruments) exits them all again.
    (tutorial.PassBadRunBefore, BAD_RUN_BEFORE_DEMO, True, RUN_BEFORE_EXITS),
], ids=["enter_pass_ctx", "exit_pass_ctx", "run_before_pass"])
def test_exception_in_a_with_context(capsys, bad_class, printed, keeps_instruments, printed_when_cleared):
    instruments = tutorial.fine_bad_fine(bad_class)
    assert [inst._name for inst in instruments] == ["PassFine_0", bad_class.__name__, "PassFine_1"]
    demo_ctx = transform.PassContext(instruments=instruments)
    module = ModuleOp([])
    assert tutorial.infer_type_catching(module, demo_ctx) is not None
    assert capsys.readouterr().out == printed
    assert transform.PassContext.current() is not demo_ctx
    assert demo_ctx.instruments == (instruments if keeps_instruments else [])
    demo_ctx.override_instruments([])
    assert capsys.readouterr().out == printed_when_cleared


def test_exception_in_run_before_pass_on_the_current_context(capsys):
    cur_pass_ctx = transform.PassContext.current()
    cur_pass_ctx.override_instruments(tutorial.fine_bad_fine(tutorial.PassBadRunBefore))
    assert capsys.readouterr().out == RUN_BEFORE_ENTERS
    tutorial.infer_type_catching(ModuleOp([]))  # no `with`: no exit_pass_ctx
    assert capsys.readouterr().out == BAD_RUN_BEFORE_CURRENT_CONTEXT_DEMO
    assert len(cur_pass_ctx.instruments) == 3
    cur_pass_ctx.override_instruments([])
    assert capsys.readouterr().out == RUN_BEFORE_EXITS
