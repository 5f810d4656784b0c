"""`make_module`: a `func.func @main` module from a few nn ops, for the pass tests."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Attribute, Block, Region

from xrelay.dialects import nn
from xrelay.frontend import GraphBuilder


def make_module(args: Mapping[str, Sequence[int]] | Sequence[Sequence[int] | Attribute], body: Callable) -> ModuleOp:
    """`@main` over f32 tensor arguments and `body(values, emit)`'s results.

    `args` is either {name: shape} (named arguments; `body` gets {name: value}) or a list of shapes
    or types (`body` gets the list of values). `emit(op)` appends an op and returns its result
    (its results when it has several)."""
    named = isinstance(args, Mapping)
    specs = list(args.values()) if named else list(args)
    block = Block(arg_types=[s if isinstance(s, Attribute) else TensorType(f32, s) for s in specs])
    if named:
        for arg, name in zip(block.args, args):
            arg.name_hint = name
    ops = []

    def emit(op):
        ops.append(op)
        return op.results[0] if len(op.results) == 1 else op.results

    results = body(dict(zip(args, block.args)) if named else block.args, emit)
    block.add_ops([*ops, func.ReturnOp(*results)])
    main = func.FuncOp("main", ([a.type for a in block.args], [r.type for r in results]), Region(block))
    return ModuleOp([main])


class RandomGraph:
    """A `frontend.GraphBuilder` (`b`) over a random input shape, with random constants drawn from
    `rng` (numpy's Generator or RandomState): the base of the random-graph generators. `dtype`
    is the input's element type."""

    def __init__(self, input_shape: tuple[int, ...], rng, dtype: str = "float32"):
        self.b = GraphBuilder(input_shape, dtype=dtype)
        self.input_shape = input_shape
        self.rng = rng

    def const(self, shape, low=-1.0, high=1.0):
        value = self.rng.uniform(low, high, size=shape).astype("float32")
        return self.b.op(nn.ConstantOp, value).results[0]

    def op(self, name, *operands, **attrs):
        return self.b.op(nn.OPS[name], *operands, **attrs).results[0]


def op_names(module: ModuleOp) -> list[str]:
    """The names of `@main`'s ops in order, its `nn.constant`s left out."""
    return [op.name for op in module.body.block.first_op.body.block.ops if op.name != "nn.constant"]


def single_op_linalg(op_class: type, shape: Sequence[int], **attrs) -> ModuleOp:
    """`@main` applying one nn op (with `attrs`) to its argument `data` of `shape`, lowered to linalg
    on tensors."""
    from xrelay.lowering import lower

    b = GraphBuilder(None)
    return lower(b.finish(b.op(op_class, b.param("data", shape), **attrs)), to="linalg")


def structured_ops(module: ModuleOp, kind: str) -> list:
    """The linalg structured ops of `module` with a reduction loop (`kind` "reduction") or with
    parallel loops only ("parallel")."""
    from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation

    found = []
    for op in module.walk():
        if isinstance(op, LinalgStructuredOperation):
            reduces = any(str(it.data) == "reduction" for it in op.get_iterator_types())
            if reduces == (kind == "reduction"):
                found.append(op)
    return found


IDENTITY4 = "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>"
PARALLEL4 = '["parallel", "parallel", "parallel", "parallel"]'


def generic4(result: str, ins: Sequence[tuple[str, str]], out_type: str, body: str | Sequence[str],
             in_maps: Sequence[str] | None = None) -> str:
    """MLIR text: a fresh `tensor.empty` of `out_type` and `%<result>`, an all-parallel 4-D
    `linalg.generic` into it over `ins` ((value, type) pairs, read through `in_maps`, identity maps
    by default); its block arguments are %in0, %in1, ... and `body` (a line or lines) computes the yielded %s."""
    args = [f"in{i}" for i in range(len(ins))]
    maps = [*(in_maps or [IDENTITY4] * len(ins)), IDENTITY4]
    return "\n".join([
        f"%{result}_out = tensor.empty() : {out_type}",
        f"  %{result} = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = {PARALLEL4}}}",
        f"      ins({', '.join('%' + v for v, _ in ins)} : {', '.join(t for _, t in ins)}) "
        f"outs(%{result}_out : {out_type}) {{",
        f"  ^bb0({', '.join(f'%{a}: f32' for a in args)}, %o: f32):",
        *(f"    {line}" for line in ([body] if isinstance(body, str) else body)),
        "    linalg.yield %s : f32",
        f"  }} -> {out_type}"])


def formed(module: ModuleOp, placed: bool = True, **split_options) -> ModuleOp:
    """`module` (linalg on tensors) after `xrelay.build`'s kernel phase (form-kernels,
    choose-conv-algorithm, split-kernels, plan-memory unless not `placed`: the program then runs on
    fresh arrays): what the executor fuses, it fuses inside the kernels these passes form.
    `split_options` are `split-kernels`' (`min_points=0`: every elementwise kernel splits)."""
    from xrelay.passes.build import kernel_passes
    from xrelay.passes.kernels.plan_memory import PlanMemory
    from xrelay.passes.kernels.split_kernels import SplitKernels

    for kernel_pass in kernel_passes():
        if isinstance(kernel_pass, PlanMemory) and not placed:
            continue
        if isinstance(kernel_pass, SplitKernels):
            kernel_pass = SplitKernels(**split_options)
        module = kernel_pass(module)
    return module
