"""What TVM's tutorial prints, copied from shared/seed/pass_instrument_tutorial.txt, for
tests/test_tutorial.py (the example's whole output) and tests/test_tutorial_exception_demos.py (one
exception-handling demo at a time)."""

SEED_OP_DIFF = """\
[(1, 'CanonicalizeOps', {'nn.add': 1, 'nn.bias_add': -1}),
 (1, 'ConvertLayout', {'nn.expand_dims': 1, 'nn.layout_transform': 23}),
 (1, 'FoldConstant', {'nn.expand_dims': -1, 'nn.layout_transform': -21}),
 (0, 'sequential', {'nn.add': 1, 'nn.bias_add': -1, 'nn.layout_transform': 2})]"""

# Demo 1: PassBadEnterCtx between two PassFine, in `with`.
BAD_ENTER_DEMO = """\
PassFine_0 enter_pass_ctx
PassBadEnterCtx bad enter_pass_ctx!!!
PassFine_0 exit_pass_ctx
Catching ValueError: PassBadEnterCtx bad enter_pass_ctx
"""

# Demo 2: PassBadExitCtx between two PassFine, in `with`.
BAD_EXIT_DEMO = """\
PassFine_0 enter_pass_ctx
PassBadExitCtx enter_pass_ctx
PassFine_1 enter_pass_ctx
PassFine_0 should_run
PassBadExitCtx should_run
PassFine_1 should_run
PassFine_0 run_before_pass
PassBadExitCtx run_before_pass
PassFine_1 run_before_pass
PassFine_0 run_after_pass
PassBadExitCtx run_after_pass
PassFine_1 run_after_pass
PassFine_0 exit_pass_ctx
PassBadExitCtx bad exit_pass_ctx!!!
Catching ValueError: PassBadExitCtx bad exit_pass_ctx
"""

# Demos 3 and 4: PassBadRunBefore between two PassFine, in `with` (3) and on the current context (4).
# Both print the same pieces; only where the exits come differs.
RUN_BEFORE_ENTERS = """\
PassFine_0 enter_pass_ctx
PassBadRunBefore enter_pass_ctx
PassFine_1 enter_pass_ctx
"""
RUN_BEFORE_FAILS = """\
PassFine_0 should_run
PassBadRunBefore should_run
PassFine_1 should_run
PassFine_0 run_before_pass
PassBadRunBefore bad run_before_pass!!!
"""
RUN_BEFORE_EXITS = """\
PassFine_0 exit_pass_ctx
PassBadRunBefore exit_pass_ctx
PassFine_1 exit_pass_ctx
"""
RUN_BEFORE_CATCHING = "Catching ValueError: PassBadRunBefore bad run_before_pass\n"

# Demo 3 (`with` exits every instrument before the except clause), then clearing its instruments.
BAD_RUN_BEFORE_DEMO = RUN_BEFORE_ENTERS + RUN_BEFORE_FAILS + RUN_BEFORE_EXITS + RUN_BEFORE_CATCHING
# Demo 4: entering is override_instruments; nothing exits until they are cleared.
BAD_RUN_BEFORE_CURRENT_CONTEXT_DEMO = RUN_BEFORE_FAILS + RUN_BEFORE_CATCHING

# The tutorial's last lines: the four demos, with the prints of clearing the instruments after demo 3
# and of installing and clearing them around demo 4.
SEED_EXCEPTION_DEMOS = (
    BAD_ENTER_DEMO
    + BAD_EXIT_DEMO
    + BAD_RUN_BEFORE_DEMO + RUN_BEFORE_EXITS
    + RUN_BEFORE_ENTERS + BAD_RUN_BEFORE_CURRENT_CONTEXT_DEMO + RUN_BEFORE_EXITS
)
