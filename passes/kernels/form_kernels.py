"""`form-kernels`: group linalg-on-tensors ops into the `kernel.dispatch` ops the executor runs as one step.

Dispatch region formation (IREE's, TVM's FuseOps) over any op sequence, by what each op is, read from
its iterator types and indexing maps, never by op names or a model's shapes:

- a **root** is a structured op with one result and a reduction loop: a convolution or a matmul (a
  contraction `out += a * b`, with or without a window), a pooling or a reduction; its init, when a
  `linalg.fill` only it reads, joins it (the root then overwrites it);
- its **epilogue** is the chain of elementwise ops after it: each member an all-parallel
  `linalg.generic` with one result and one scalar op in its body, reading the value before it once,
  with its own output's map and type (row r of the member is row r of the value); the chain's values
  other than its last are read by nothing outside the kernel (a later member may read an earlier
  value again: `x * sigmoid(x)`), the longest chain that keeps them so;
- a chain of such elementwise ops that follows no root forms an "elementwise" kernel of its own;
- the **destination** (of a convolution or an elementwise chain, `DESTINATION_ROOTS`): a `tensor.pad`
  of the chain's last value by a constant joins the kernel, which
  then writes its result into the pad's interior (the value stays a result if others read it too:
  only readers after the pad, since the kernel is placed at its last member);
- a "transpose" kernel: a `linalg.transpose` read, through reshapes each read only by the next, only
  by a constant pad whose interior is a view of the transpose's result shape (a channel shuffle
  before a padded convolution): the pad copies from the transpose's input through the permutation,
  one pass over the data instead of two.

Ops in between that the kernel does not take stay where they are: the kernel is placed at its last
member, where every value it reads is defined. `test-drop-epilogue` (a test-only option) drops the
last epilogue member of every kernel: a deliberately wrong formation for the numerical bisect's tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, func, math, tensor
from xdsl.dialects.builtin import ModuleOp, TensorType, UnitAttr
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from xrelay.dialects.kernel import FORMED, DispatchOp, YieldOp
from xrelay.pass_base import XRelayPass, register_xrelay_pass
from xrelay.runtime.kernels.linalg_structured import contraction_pair

ONE_OP_BODIES = (
    arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp, arith.MaximumfOp, arith.MinimumfOp, arith.NegfOp,
    math.ExpOp, math.ErfOp, arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.MaxSIOp, arith.MinSIOp,
)
"""Scalar ops an epilogue member's body may be (one numpy ufunc each, run row block by row block)."""


DESTINATION_ROOTS = ("conv", "elementwise")
"""Kernels that take a destination pad: the CPU executor writes a convolution's rows, and an elementwise
chain's, into the pad's interior; a pool's, a matmul's or a reduction's it does not."""


def root_kind(op: Operation) -> str | None:
    """"conv", "matmul", "pool" or "reduce" for a structured op on tensors with one result and a
    reduction loop, else None."""
    if not isinstance(op, LinalgStructuredOperation) or len(op.results) != 1 or len(op.outputs) != 1:
        return None
    if not isinstance(op.results[0].type, TensorType):
        return None
    if not any(str(it.data) == "reduction" for it in op.get_iterator_types()):
        return None
    windowed = any(_has_window(m.data) for m in op.get_indexing_maps().data[:len(op.inputs)])
    if contraction_pair(op, 0) is not None:  # out += a * b
        return "conv" if windowed else "matmul"
    return "pool" if windowed else "reduce"


def _has_window(affine_map) -> bool:
    """Whether a map indexes some axis by a sum of loops (a window: `oh * s + kh`)."""
    return any(not _is_single_dim(result) for result in affine_map.results)


def _is_single_dim(expr) -> bool:
    from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr

    return isinstance(expr, AffineDimExpr | AffineConstantExpr)


def epilogue_input(op: Operation, value: SSAValue) -> bool:
    """Whether `op` may continue a kernel whose current value is `value` (see the module docstring;
    which values it reads is checked once the chain is grown)."""
    if not isinstance(op, linalg.GenericOp) or len(op.results) != 1 or len(op.outputs) != 1:
        return False
    if any(str(it.data) != "parallel" for it in op.get_iterator_types()):
        return False
    if not is_one_op_body(op):
        return False
    maps = op.get_indexing_maps().data
    out_map, out_type = maps[len(op.inputs)], op.outputs[0].type
    uses = [i for i, v in enumerate(op.inputs) if v is value]
    return len(uses) == 1 and value.type == out_type == op.results[0].type and maps[uses[0]] == out_map


def is_one_op_body(op: linalg.GenericOp) -> bool:
    """Whether the body is one `ONE_OP_BODIES` op of block arguments and scalar constants."""
    block = op.body.block
    computed = [inner for inner in block.ops if not isinstance(inner, arith.ConstantOp | linalg.YieldOp)]
    if len(computed) != 1 or not isinstance(computed[0], ONE_OP_BODIES):
        return False
    yielded = block.last_op.operands
    return len(yielded) == 1 and yielded[0] is computed[0].results[0]


def constant_pad(op: Operation, value: SSAValue) -> bool:
    """Whether `op` pads `value` with static widths by one constant."""
    if not isinstance(op, tensor.PadOp) or op.source is not value or op.low or op.high:
        return False
    yielded = op.region.block.last_op.operands[0]
    return isinstance(yielded.owner, arith.ConstantOp)


def init_fill(root: LinalgStructuredOperation) -> list[Operation]:
    """The root's init fill (and the `tensor.empty` it fills) when only the root reads them."""
    init = root.outputs[0]
    fill = init.owner
    if not (isinstance(fill, linalg.FillOp) and init.has_one_use()):
        return []
    empty = fill.outputs[0].owner
    members = [fill]
    if isinstance(empty, tensor.EmptyOp) and empty.results[0].has_one_use():
        members.insert(0, empty)
    return members


@dataclass
class Kernel:
    root: str
    members: list[Operation]
    """Every op the kernel takes, in the order they run."""
    results: list[SSAValue]
    """The values others read (outside the kernel)."""


def transpose_into_pad(op: Operation, taken: set[Operation]) -> Kernel | None:
    """The "transpose" kernel of `op` (see the module docstring), or None."""
    if not isinstance(op, linalg.TransposeOp) or len(op.results) != 1:
        return None
    empty = op.outputs[0].owner
    members: list[Operation] = [empty] if isinstance(empty, tensor.EmptyOp) and empty.results[0].has_one_use() else []
    members.append(op)
    value = op.results[0]
    while value.has_one_use() and (user := next(iter(value.uses)).operation) not in taken:
        if isinstance(user, tensor.CollapseShapeOp | tensor.ExpandShapeOp | tensor.ReshapeOp):
            members.append(user)
            value = user.results[0]
        elif constant_pad(user, value) and _interior_views(user, tuple(op.results[0].type.get_shape())):
            return Kernel("transpose", [*members, user], [user.results[0]])
        else:
            break
    return None


def _interior_views(pad: tensor.PadOp, shape: tuple[int, ...]) -> bool:
    """Whether the interior of the pad's (C-contiguous) result reshapes to `shape` without a copy."""
    padded = tuple(pad.result.type.get_shape())
    strides = tuple(int(np.prod(padded[i + 1:])) for i in range(len(padded)))
    buffer = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), padded, strides)
    interior = tuple(slice(lo, lo + n) for lo, n in zip(pad.static_low.get_values(), pad.source.type.get_shape()))
    try:
        np.reshape(buffer[interior], shape, copy=False)
    except ValueError:
        return False
    return True


def grow(first: Operation, root: str, taken: set[Operation], position: dict[Operation, int]) -> Kernel:
    """The kernel starting at `first` (a root, or the first elementwise op of a chain)."""
    members: list[Operation] = init_fill(first) if root != "elementwise" else []
    empty = first.outputs[0].owner if root == "elementwise" else None
    if isinstance(empty, tensor.EmptyOp) and empty.results[0].has_one_use():
        members.append(empty)
    members.append(first)
    value, chain = first.results[0], [(first.results[0], len(members))]  # (value, members up to it)
    while True:
        readers = [u.operation for u in value.uses if u.operation not in taken and epilogue_input(u.operation, value)]
        if not readers:
            break
        user = min(readers, key=lambda op: position.get(op, len(position)))
        empty = user.outputs[0].owner
        if isinstance(empty, tensor.EmptyOp) and empty.results[0].has_one_use():
            members.append(empty)
        members.append(user)
        value = user.results[0]
        chain.append((value, len(members)))
    # The longest chain whose values but the last are read only inside the kernel.
    while len(chain) > 1:
        inside = set(members)
        if all(u.operation in inside for v, _ in chain[:-1] for u in v.uses):
            break
        chain.pop()
        del members[chain[-1][1]:]
    value = chain[-1][0]
    results = [value]
    pad = next((u.operation for u in value.uses if constant_pad(u.operation, value)), None)
    # The kernel is placed at its last member: with the pad, every other reader must come after it.
    if root in DESTINATION_ROOTS and pad is not None and pad not in taken and all(
            u.operation is pad or _after_in_block(u.operation, pad) for u in value.uses):
        members.append(pad)
        results = ([] if value.has_one_use() else [value]) + [pad.results[0]]
    return Kernel(root, members, results)


def form(block: Block, drop_last_epilogue: bool = False) -> int:
    """Form the kernels of `block`; returns how many."""
    kernels: list[Kernel] = []
    taken: set[Operation] = set()
    position = {op: i for i, op in enumerate(block.ops)}
    for op in list(block.ops):
        if op in taken:
            continue
        kernel = transpose_into_pad(op, taken)
        if kernel is not None:
            taken.update(kernel.members)
            kernels.append(kernel)
            continue
        kind = root_kind(op)
        if kind is None and isinstance(op, linalg.GenericOp) and is_one_op_body(op) \
                and all(str(it.data) == "parallel" for it in op.get_iterator_types()) \
                and len(op.results) == 1 and len(op.outputs) == 1:
            kind = "elementwise"
        if kind is None:
            continue
        kernel = grow(op, kind, taken, position)
        if kind == "elementwise" and len([m for m in kernel.members if isinstance(m, linalg.GenericOp)]) < 2 \
                and not any(isinstance(m, tensor.PadOp) for m in kernel.members):
            continue  # one elementwise op alone is its own step already
        taken.update(kernel.members)
        kernels.append(kernel)
    for kernel in kernels:
        _outline(kernel, drop_last_epilogue)
    return len(kernels)


def _outline(kernel: Kernel, drop_last_epilogue: bool) -> None:
    """Move the kernel's members into a `kernel.dispatch` at the place of its last member."""
    if drop_last_epilogue:
        _drop_last_epilogue(kernel)
    last = kernel.members[-1]
    dispatch = DispatchOp(kernel.root, [v.type for v in kernel.results], Region(Block()))
    Rewriter.insert_op(dispatch, InsertPoint.after(last))
    body = dispatch.body.block
    for member in kernel.members:
        member.detach()
        body.add_op(member)
    body.add_op(YieldOp(*kernel.results))
    for value, result in zip(kernel.results, dispatch.results, strict=True):
        value.replace_uses_with_if(result, lambda use: not _inside(use.operation, dispatch))


def _drop_last_epilogue(kernel: Kernel) -> None:
    """Test only: the kernel's last epilogue member's readers read its input instead (a wrong kernel)."""
    generics = [m for m in kernel.members if isinstance(m, linalg.GenericOp) and root_kind(m) is None]
    if kernel.root == "elementwise" or not generics:
        return
    dropped = generics[-1]
    before = next(v for v in dropped.inputs if v.type == dropped.results[0].type)
    dropped.results[0].replace_all_uses_with(before)
    kernel.results = [before if v is dropped.results[0] else v for v in kernel.results]
    kernel.members.remove(dropped)
    output = dropped.outputs[0].owner
    dropped.detach()
    dropped.erase()
    if output in kernel.members and not output.results[0].uses:
        kernel.members.remove(output)
        output.detach()
        output.erase()


def _after_in_block(op: Operation, anchor: Operation) -> bool:
    """Whether `op` (or its ancestor in `anchor`'s block) comes after `anchor`."""
    block = anchor.parent_block()
    while op is not None and op.parent_block() is not block:
        op = op.parent_op()
    return op is not None and anchor.is_before_in_block(op)


def _inside(op: Operation, ancestor: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.parent_op()
    return False


@register_xrelay_pass("form-kernels")
@dataclass(frozen=True)
class FormKernels(XRelayPass):
    """Group each root with its init fill, elementwise epilogue and destination pad, and each chain of
    elementwise ops, into a `kernel.dispatch` (linalg on tensors; see the module docstring)."""

    test_drop_epilogue: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.walk():
            if isinstance(function, func.FuncOp) and function.body.blocks:
                form(function.body.block, self.test_drop_epilogue)
                function.attributes[FORMED] = UnitAttr()
