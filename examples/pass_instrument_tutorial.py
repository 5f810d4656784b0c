"""How to Use TVM Pass Instrument — the TVM tutorial, ported to xrelay.

Section for section the same program as TVM's tutorial (shared/seed/pass_instrument_tutorial.txt): the
imports change, `relay.analysis.post_order_visit` becomes an xDSL walk, and a caught exception prints as
`ValueError: ...` through `traceback.format_exception_only` (TVM's FFI puts that text in the message).
The instrument classes come first and the sections run in `main()`, so that tests can import the
classes (tests/test_tutorial_exception_demos.py runs the exception-handling demos one by one).
"""

import contextlib
import traceback
from pprint import pprint

from xrelay import passes, transform
from xrelay.frontend import bind_params_by_name, resnet
from xrelay.instrument import PassTimingInstrument, pass_instrument


def caught(ex: BaseException) -> str:
    return traceback.format_exception_only(ex)[-1].strip()


###############################################################################
# Create Customized Instrument Class
@pass_instrument
class RelayCallNodeDiffer:
    def __init__(self):
        self._op_diff = []
        # Passes can be nested.
        # Use stack to make sure we get correct before/after pairs.
        # (xrelay's own OpCountDiff derives NestingInstrument, which keeps that stack for it.)
        self._op_cnt_before_stack = []

    def enter_pass_ctx(self):
        self._op_diff = []
        self._op_cnt_before_stack = []

    def exit_pass_ctx(self):
        assert len(self._op_cnt_before_stack) == 0, "The stack is not empty. Something wrong."

    def run_before_pass(self, mod, info):
        self._op_cnt_before_stack.append((info.name, self._count_nodes(mod)))

    def run_after_pass(self, mod, info):
        # Pop out the latest recorded pass.
        name_before, op_to_cnt_before = self._op_cnt_before_stack.pop()
        assert name_before == info.name, "name_before: {}, info.name: {} doesn't match".format(
            name_before, info.name
        )
        cur_depth = len(self._op_cnt_before_stack)
        op_to_cnt_after = self._count_nodes(mod)
        op_diff = self._diff(op_to_cnt_after, op_to_cnt_before)
        # only record passes causing differences.
        if op_diff:
            self._op_diff.append((cur_depth, info.name, op_diff))

    def get_pass_to_op_diff(self):
        """
        return [
          (depth, pass_name, {op_name: diff_num, ...}), ...
        ]
        """
        return self._op_diff

    @staticmethod
    def _count_nodes(mod):
        """Count the number of occurrences of each nn operator (calls, not constants) in the module"""
        ret = {}
        for op in mod.walk():
            if op.name.startswith("nn.") and op.name != "nn.constant":
                ret[op.name] = ret.get(op.name, 0) + 1
        return ret

    @staticmethod
    def _diff(d_after, d_before):
        """Calculate the difference of two dictionary along their keys.
        The result is values in d_after minus values in d_before.
        """
        ret = {}
        key_after, key_before = set(d_after), set(d_before)
        for k in key_before & key_after:
            tmp = d_after[k] - d_before[k]
            if tmp:
                ret[k] = d_after[k] - d_before[k]
        for k in key_after - key_before:
            ret[k] = d_after[k]
        for k in key_before - key_after:
            ret[k] = -d_before[k]
        return ret


###############################################################################
# Exception Handling: instruments that print every hook, and ones that raise
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


def fine_bad_fine(bad_class):
    """The demos' instruments: PassFine_0, a `bad_class` named after its class, PassFine_1."""
    return [PassFine("PassFine_0"), bad_class(bad_class.__name__), PassFine("PassFine_1")]


def infer_type_catching(relay_mod, demo_ctx=None):
    """InferType on `relay_mod` inside `with demo_ctx:` (in the current context if None), printing
    the ValueError an instrument raises; returns the module."""
    try:
        with contextlib.nullcontext() if demo_ctx is None else demo_ctx:
            relay_mod = passes.InferType()(relay_mod)
    except ValueError as ex:
        print("Catching", caught(ex))
    return relay_mod


def main():
    ###############################################################################
    # Create An Example Relay Program
    batch_size = 1
    image_shape = (3, 224, 224)
    relay_mod, relay_params = resnet.get_workload(num_layers=18, batch_size=batch_size, image_shape=image_shape)
    print("Printing the IR module...")
    print(relay_mod)

    ###############################################################################
    # Create PassContext With Instruments
    timing_inst = PassTimingInstrument()
    with transform.PassContext(instruments=[timing_inst]):
        relay_mod = passes.InferType()(relay_mod)
        relay_mod = passes.FoldScaleAxis()(relay_mod)
        # before exiting the context, get profile results.
        profiles = timing_inst.render()
    print("Printing results of timing profile...")
    print(profiles)

    ###############################################################################
    # Use Current PassContext With Instruments
    cur_pass_ctx = transform.PassContext.current()
    cur_pass_ctx.override_instruments([timing_inst])
    relay_mod = passes.InferType()(relay_mod)
    relay_mod = passes.FoldScaleAxis()(relay_mod)
    profiles = timing_inst.render()
    print("Printing results of timing profile...")
    print(profiles)

    # Register empty list to clear existing instruments: PassTimingInstrument's exit_pass_ctx clears
    # its profiles, so a render() now would only warn
    # "Warning: no passes have been profiled, did you enable pass profiling?".
    cur_pass_ctx.override_instruments([])

    ###############################################################################
    # Apply Passes and Multiple Instrument Classes
    call_node_inst = RelayCallNodeDiffer()
    desired_layouts = {
        "nn.conv2d": ["NHWC", "HWIO"],
    }
    pass_seq = transform.Sequential(
        [
            passes.FoldConstant(),
            passes.ConvertLayout(desired_layouts),
            passes.FoldConstant(),
        ]
    )
    relay_mod = bind_params_by_name(relay_mod, relay_params)
    # timing_inst is put after call_node_inst.
    # So the execution time of ``call_node.inst.run_after_pass()`` is also counted.
    with transform.PassContext(opt_level=3, instruments=[call_node_inst, timing_inst]):
        relay_mod = pass_seq(relay_mod)
        profiles = timing_inst.render()
    # Uncomment the next line to see timing-profile results.
    # print(profiles)

    print("Printing the change in number of occurrences of each operator caused by each pass...")
    pprint(call_node_inst.get_pass_to_op_diff())

    ###############################################################################
    # Exception Handling
    # An exception in enter_pass_ctx: the instruments already entered exit, the list is cleared.
    demo_ctx = transform.PassContext(instruments=fine_bad_fine(PassBadEnterCtx))
    relay_mod = infer_type_catching(relay_mod, demo_ctx)
    demo_ctx.override_instruments([])  # no PassFine_0 exit_pass_ctx printed....etc

    # An exception in exit_pass_ctx: instruments after the failing one never exit.
    # PassFine_1 execute enter_pass_ctx, but not exit_pass_ctx.
    demo_ctx = transform.PassContext(instruments=fine_bad_fine(PassBadExitCtx))
    relay_mod = infer_type_catching(relay_mod, demo_ctx)

    # Exceptions in should_run, run_before_pass, run_after_pass are not handled: `with` exits the context.
    # All exit_pass_ctx are called.
    demo_ctx = transform.PassContext(instruments=fine_bad_fine(PassBadRunBefore))
    relay_mod = infer_type_catching(relay_mod, demo_ctx)

    # Instrumentation is not disabled, so override_instruments exits the old instruments.
    demo_ctx.override_instruments([])

    # Without `with`, exit_pass_ctx is not called: try it on the current PassContext.
    cur_pass_ctx = transform.PassContext.current()
    cur_pass_ctx.override_instruments(fine_bad_fine(PassBadRunBefore))
    # No ``exit_pass_ctx`` got executed.
    relay_mod = infer_type_catching(relay_mod)

    # Clear instruments.
    cur_pass_ctx.override_instruments([])


if __name__ == "__main__":
    main()
