"""Small test passes and the modules the tool tests share: nn passes run on the nn modules the
tool tests parse (RELU_ADD; DENSE_MODEL for xrelay-opt and xrelay-run), and `op_adding_pass` for the
infrastructure tests over empty xDSL modules."""

from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from xrelay import transform
from xrelay.instrument import PassInstrument
from xrelay.dialects import make_context, nn

DENSE_MODEL = """\
func.func @main(%data: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = nn.dense(%data, %w) : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %1 = nn.bias_add(%0, %b) {axis = -1 : i64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = nn.relu(%1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %2 : tensor<2x4xf32>
}
"""

RELU_ADD = """\
builtin.module {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %c = nn.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
    %r = nn.relu(%x) : (tensor<2xf32>) -> tensor<2xf32>
    %y = nn.add(%r, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    func.return %y : tensor<2xf32>
  }
}
"""
"""`relu(x) + [1, 2]`, written as xDSL prints it: a dump of the parsed module is this text again."""


def parse_module(text: str = RELU_ADD):
    return Parser(make_context(), text).parse_module()


def replacing_pass(name: str, op_type: type[Operation], replacement):
    """A functional module pass `name`: a clone of its input in which every `op_type` op is replaced by
    `replacement(op)`, a new op (put in its place) or an existing value (that takes its uses)."""

    @transform.module_pass(opt_level=0, name=name)
    def body(mod, ctx):
        new = mod.clone()
        for op in list(new.walk()):
            if isinstance(op, op_type):
                new_op = replacement(op)
                if isinstance(new_op, Operation):
                    Rewriter.replace_op(op, new_op)
                else:
                    Rewriter.replace_op(op, [], [new_op])
        return new

    return body


drop_relu = replacing_pass("DropRelu", nn.ReluOp, lambda relu: relu.operands[0])


def perturb_first_large_constant(module) -> bool:
    """The deliberately wrong rewrite the numerical-bisect tests find: scale the first constant of 16+
    elements by 1.01, in place. False when there is none."""
    for op in module.walk():
        if isinstance(op, nn.ConstantOp) and op.numpy().size >= 16:
            Rewriter.replace_op(op, nn.ConstantOp(op.numpy() * np.float32(1.01)))
            return True
    return False


def raising_xdsl_pass(class_name: str, name: str, op_type: type[Operation], error: type[Exception], message: str):
    """An xDSL ModulePass class with pipeline name `name` that raises `error(message)` when the module
    holds an `op_type` op (and does nothing otherwise)."""

    def apply(self, ctx, op):
        if any(isinstance(inner, op_type) for inner in op.walk()):
            raise error(message)

    namespace = {"name": name, "apply": apply, "__module__": __name__}
    return dataclass(frozen=True)(type(class_name, (ModulePass,), namespace))


@transform.module_pass(opt_level=0, name="Noop")
def noop(mod, ctx):
    return mod


@transform.module_pass(opt_level=0, name="CloneOnly")
def clone_only(mod, ctx):
    return mod.clone()


@transform.module_pass(opt_level=0, name="Outer")
def outer(mod, ctx):
    """Runs DropRelu as a nested pass."""
    return drop_relu(mod)


def op_adding_pass(name, opt_level=0, calls=(), required=(), on_run=None):
    """A module pass `name` that calls `on_run()` (if given), runs the passes `calls` on its input
    (nested passes), and returns a copy of the result with one more `arith.constant`: the number of
    ops in a module counts the passes that produced it."""

    @transform.module_pass(opt_level=opt_level, name=name, required=required)
    def body(mod, ctx):
        if on_run is not None:
            on_run()
        for nested in calls:
            mod = nested(mod)
        new_mod = mod.clone()
        new_mod.body.block.add_op(arith.ConstantOp.from_int_and_width(0, 32))
        return new_mod

    return body


def run_on_empty_module(pass_, *instruments, **context):
    """`pass_` on an empty module inside a `PassContext(**context)` with `instruments`; its result."""
    with transform.PassContext(instruments=list(instruments), **context):
        return pass_(ModuleOp([]))


class PassNames(PassInstrument):
    """Records the name of every pass that starts (`events`), nested ones included."""

    def __init__(self):
        self.events: list[str] = []

    def run_before_pass(self, mod, info):
        self.events.append(info.name)
