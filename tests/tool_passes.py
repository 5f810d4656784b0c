"""Small functional test passes the instrument-tool tests share (run on the nn modules they parse)."""

from xdsl.parser import Parser

from xrelay import transform
from xrelay.dialects import make_context, nn


def parse_module(text: str):
    return Parser(make_context(), text).parse_module()


@transform.module_pass(opt_level=0, name="DropRelu")
def drop_relu(mod, ctx):
    """Functional: returns a clone with every relu replaced by its operand."""
    new = mod.clone()
    for op in list(new.walk()):
        if isinstance(op, nn.ReluOp):
            op.results[0].replace_all_uses_with(op.operands[0])
            op.detach()
            op.erase()
    return new


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
