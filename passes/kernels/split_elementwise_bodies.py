"""`split-elementwise-bodies`: an elementwise generic whose body is a chain of one-op steps becomes a
chain of one-op generics, so that each joins its producer's kernel.

`form-kernels` takes into an epilogue only generics whose body is one scalar op (`ONE_OP_BODIES`): what
the executors run as one ufunc or one step of the compiled chain kernel. Clip (ReLU6) lowers to one
generic of two, `minimumf(maximumf(x, lo), hi)`, and so ran as a step of its own after the
convolution. Here every all-parallel generic with one result whose body is such a chain

    %r = linalg.generic ins(%x, %y) outs(%e)    %t = linalg.generic ins(%x) outs(%e1) { maximumf(x, 0) }
      { maximumf(x, 0); minimumf(_, 6); addf(_, y) }   ->   %u = linalg.generic ins(%t) outs(%e2) { minimumf(t, 6) }
                                                        %r = linalg.generic ins(%u, %y) outs(%e) { addf(u, y) }

(each step one `ONE_OP_BODIES` op reading the step before it, block arguments of inputs and scalar
constants; the output's block argument unread) is split: the steps' intermediate values get fresh
`tensor.empty` outputs of the result's type, read with the output's map. The scalar function is the
same op by op, so results are bit-identical. Bodies with another op (exp, a select) stay as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from xrelay.instrument.statistics import Statistic
from xrelay.pass_base import REWRITES, XRelayPass, register_xrelay_pass, rewrite_module
from xrelay.passes.kernels.form_kernels import ONE_OP_BODIES

SPLITS = Statistic("num-split-bodies", "Number of elementwise generics split into chains of one-op generics")


def chain_steps(op: linalg.GenericOp) -> list[Operation] | None:
    """The body's ops in order when the generic is one to split (see the module docstring), else None."""
    if len(op.results) != 1 or len(op.outputs) != 1 or not isinstance(op.results[0].type, TensorType):
        return None
    if not op.results[0].type.has_static_shape() or any(str(it.data) != "parallel" for it in op.get_iterator_types()):
        return None
    block = op.body.block
    if block.args[len(op.inputs)].uses:  # the output's value is read: not an elementwise map
        return None
    steps = [inner for inner in block.ops if not isinstance(inner, arith.ConstantOp | linalg.YieldOp)]
    if len(steps) < 2 or not all(isinstance(s, ONE_OP_BODIES) for s in steps):
        return None
    if tuple(block.last_op.operands) != (steps[-1].results[0],):
        return None
    for i, step in enumerate(steps):
        previous = steps[i - 1].results[0] if i else None
        if i < len(steps) - 1 and not step.results[0].has_one_use():
            return None
        for operand in step.operands:
            if operand is previous or _scalar_input(operand, block, len(op.inputs)):
                continue
            return None
        if previous is not None and previous not in step.operands:
            return None
    return steps


def _scalar_input(value: SSAValue, block: Block, inputs: int) -> bool:
    """An input's block argument, or a constant (in the body or defined outside it)."""
    if isinstance(value, BlockArgument):
        return value.block is not block or value.index < inputs
    return isinstance(value.owner, arith.ConstantOp) or value.owner.parent_block() is not block


class SplitChainBody(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.GenericOp, rewriter: PatternRewriter) -> None:
        steps = chain_steps(op)
        if steps is None:
            return
        block = op.body.block
        maps = list(op.get_indexing_maps().data)
        out_map, result_type = maps[len(op.inputs)], op.results[0].type
        iterators = op.iterator_types
        value: SSAValue | None = None
        for i, step in enumerate(steps):
            last = i == len(steps) - 1
            if last:
                init = op.outputs[0]
            else:
                empty = tensor.EmptyOp([], result_type)
                rewriter.insert(empty, InsertPoint.before(op))
                init = empty.tensor
            ins, in_maps, body_args = [], [], {}
            if value is not None:
                ins.append(value)
                in_maps.append(out_map)
            for operand in step.operands:
                if isinstance(operand, BlockArgument) and operand.block is block and operand not in body_args:
                    body_args[operand] = len(ins)
                    ins.append(op.inputs[operand.index])
                    in_maps.append(maps[operand.index])
            new_block = Block(arg_types=[*(v.type.element_type for v in ins), result_type.element_type])
            mapping: dict[SSAValue, SSAValue] = {a: new_block.args[j] for a, j in body_args.items()}
            if value is not None:
                mapping[steps[i - 1].results[0]] = new_block.args[0]
            for operand in step.operands:
                if operand not in mapping and isinstance(operand.owner, arith.ConstantOp) \
                        and operand.owner.parent_block() is block:
                    constant = operand.owner.clone()
                    new_block.add_op(constant)
                    mapping[operand] = constant.results[0]
            clone = step.clone(value_mapper=mapping)
            new_block.add_ops([clone, linalg.YieldOp(clone.results[0])])
            generic = linalg.GenericOp(ins, [init], Region(new_block), [*in_maps, out_map], iterators, [result_type])
            rewriter.insert(generic, InsertPoint.before(op))
            value = generic.results[0]
        rewriter.replace_all_uses_with(op.results[0], value)
        rewriter.erase(op)
        SPLITS.add()


@register_xrelay_pass("split-elementwise-bodies", opt_level=0, statistics=(SPLITS, REWRITES))
@dataclass(frozen=True)
class SplitElementwiseBodies(XRelayPass):
    """Split each elementwise generic whose body is a chain of one-op steps into one generic per step."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_module(SplitChainBody(), op)
