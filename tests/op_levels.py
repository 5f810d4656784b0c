"""Helpers for op tests: a module holding one nn op, running it at every level, folding it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.ir import Block, Region

from xrelay import passes
from xrelay.dialects import nn
from xrelay.dialects.constant import element_type_of
from xrelay.lowering import lower
from xrelay.runtime import run
from xrelay.runtime.linalg_exec import run_linalg
from xrelay.runtime.loops_exec import run_loops

LEVELS = ("linalg", "memref", "loops")


def single_op_module(op_name: str, arrays: Sequence[np.ndarray], attrs: dict) -> ModuleOp:
    """`@main(%a0, %a1, ...)` (types of `arrays`) returning the results of one nn op on them."""
    types = [TensorType(element_type_of(a.dtype), a.shape) for a in arrays]
    block = Block(arg_types=types)
    for i, arg in enumerate(block.args):
        arg.name_hint = f"a{i}"
    op = nn.make(op_name, list(block.args), **attrs)
    block.add_ops([op, func.ReturnOp(*op.results)])
    main = func.FuncOp("main", FunctionType.from_lists(types, [r.type for r in op.results]), Region(block))
    return ModuleOp([main])


def inputs_of(arrays: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    return {f"a{i}": a for i, a in enumerate(arrays)}


def run_nn(op_name: str, arrays: Sequence[np.ndarray], attrs: dict) -> np.ndarray:
    """The op's nn-level result (its numpy kernel, through the interpreter)."""
    return run(single_op_module(op_name, arrays, attrs), inputs_of(arrays))


def run_lowered(op_name: str, arrays: Sequence[np.ndarray], attrs: dict, level: str) -> np.ndarray:
    """The op's result lowered to `level` (linalg, memref or loops) and run there."""
    lowered = lower(single_op_module(op_name, arrays, attrs), to=level)
    lowered.verify()
    (result,) = (run_loops if level == "loops" else run_linalg)(lowered, inputs_of(arrays))
    return result


def fold(op_name: str, arrays: Sequence[np.ndarray], attrs: dict) -> tuple[list[str], np.ndarray]:
    """FoldConstant over `@main() { constants; op }`: the nn ops left and the returned constant's value."""
    block = Block()
    constants = [nn.ConstantOp(np.ascontiguousarray(a)) for a in arrays]
    op = nn.make(op_name, [c.result for c in constants], **attrs)
    block.add_ops([*constants, op, func.ReturnOp(op.results[0])])
    main = func.FuncOp("main", FunctionType.from_lists([], [op.results[0].type]), Region(block))
    folded = passes.FoldConstant()(ModuleOp([main]))
    names = [o.name for o in folded.walk() if o.name.startswith("nn.")]
    value = next(o for o in folded.walk() if isinstance(o, nn.ConstantOp)).numpy()
    return names, value
