"""The `kernel` dialect: what the CPU executor runs as one step, decided by passes (DESIGN §11).

`kernel.dispatch` groups the linalg ops of one kernel: a root (a convolution, matmul, pooling or
reduction; none for a pure elementwise chain), the root's init fill, its elementwise epilogue, each
member writing over the value before it, and the `tensor.pad` its result is written into. Like IREE's
`flow.dispatch.region` it is not isolated from above: the body reads values defined before it, and
`kernel.yield` gives the results. Running the body's ops in order is its meaning, so a module whose
kernels are inlined (or never formed) computes the same thing; the attributes say how the executor
runs it:

    %r = kernel.dispatch {root = "conv", algorithm = "winograd-f4", split = array<i64: 1, 2>}
           -> (tensor<1x58x58x64xf32>) {
      ... linalg.fill, linalg.conv_2d_nhwc_hwcf, linalg.generic (bias), linalg.generic (relu), tensor.pad
      kernel.yield %padded : tensor<1x58x58x64xf32>
    }

- `root`: "conv", "matmul", "pool", "reduce", "elementwise" (no root), or "transpose" (a transpose
  copied into its destination pad through reshapes);
- `algorithm` (set by `choose-conv-algorithm`): "winograd-f2", "winograd-f4", "im2col", "direct",
  "depthwise" or "generic";
- `split` (set by `split-kernels`): `[axis, parts]`, the axis of the first result the kernel's work is
  cut along and into how many parts (1: one thread). The executor cuts that axis: a convolution's
  filters or its pixels, a matmul's side holding it, an elementwise or pooling op's loop; a kernel that
  cannot be cut along it runs whole.

The memory placement (`plan-memory`) is written as attributes of the ops that allocate: `OFFSET`,
`IN_PLACE` and `ARENA_BYTES` below.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, StringAttr, i64
from xdsl.ir import Attribute, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator
from xdsl.utils.exceptions import VerifyException

ROOT_KINDS = ("conv", "matmul", "pool", "reduce", "elementwise", "transpose")
ALGORITHMS = ("winograd-f2", "winograd-f4", "im2col", "direct", "depthwise", "generic")


@irdl_op_definition
class DispatchOp(IRDLOperation):
    """One kernel: its body's ops run as one step of the executor (see the module docstring)."""

    name = "kernel.dispatch"

    res = var_result_def()
    body = region_def("single_block")
    root = prop_def(StringAttr)
    algorithm = opt_prop_def(StringAttr)
    split = opt_prop_def(DenseArrayBase)

    def __init__(self, root: str, result_types: Sequence[Attribute], body: Region,
                 algorithm: str | None = None, split: tuple[int, int] | None = None):
        properties: dict[str, Attribute] = {"root": StringAttr(root)}
        if algorithm is not None:
            properties["algorithm"] = StringAttr(algorithm)
        if split is not None:
            properties["split"] = DenseArrayBase.from_list(i64, split)
        super().__init__(result_types=[list(result_types)], regions=[body], properties=properties)

    @property
    def yield_op(self) -> YieldOp:
        terminator = self.body.block.last_op
        assert isinstance(terminator, YieldOp)
        return terminator

    def split_parts(self) -> tuple[int, int] | None:
        """`(axis, parts)` of the `split` attribute, or None when no pass set one."""
        if self.split is None:
            return None
        axis, parts = self.split.get_values()
        return int(axis), int(parts)

    def verify_(self) -> None:
        if self.root.data not in ROOT_KINDS:
            raise VerifyException(f"kernel.dispatch: root {self.root.data!r} is not one of {', '.join(ROOT_KINDS)}")
        if self.algorithm is not None and self.algorithm.data not in ALGORITHMS:
            raise VerifyException(
                f"kernel.dispatch: algorithm {self.algorithm.data!r} is not one of {', '.join(ALGORITHMS)}")
        if self.split is not None:
            values = self.split.get_values()
            if len(values) != 2 or values[1] < 1 or not 0 <= values[0] < _result_rank(self):
                raise VerifyException("kernel.dispatch: split must be [axis, parts] with an axis of the "
                                      "first result and parts >= 1")
        block = self.body.block
        if block.args:
            raise VerifyException("kernel.dispatch: the body takes no arguments (it reads values from above)")
        if not isinstance(block.last_op, YieldOp):
            raise VerifyException("kernel.dispatch: the body must end in kernel.yield")
        if tuple(block.last_op.operand_types) != tuple(self.result_types):
            raise VerifyException("kernel.dispatch: kernel.yield's operand types must be the dispatch's result types")

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.properties | self.attributes)
        printer.print_string(" -> (")
        printer.print_list(self.result_types, printer.print_attribute)
        printer.print_string(") ")
        printer.print_region(self.body, print_entry_block_args=False, print_block_terminators=True)

    @classmethod
    def parse(cls, parser: Parser) -> DispatchOp:
        start = parser.pos
        attributes = parser.parse_optional_attr_dict()
        root = attributes.pop("root", None)
        if not isinstance(root, StringAttr):
            parser.raise_error("kernel.dispatch needs a string attribute 'root'", start, parser.pos)
        parser.parse_punctuation("->")
        types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        body = parser.parse_region()
        op = cls(root.data, types, body)
        for name in ("algorithm", "split"):
            if name in attributes:
                op.properties[name] = attributes.pop(name)
        op.attributes.update(attributes)
        return op


def _result_rank(op: DispatchOp) -> int:
    if not op.result_types:
        return 0
    shape = getattr(op.result_types[0], "get_shape", None)
    return len(shape()) if shape is not None else 0


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The results of a `kernel.dispatch`."""

    name = "kernel.yield"

    values = var_operand_def()
    traits = traits_def(IsTerminator(), HasParent(DispatchOp))

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])

    assembly_format = "attr-dict ($values^ `:` type($values))?"


KERNEL = Dialect("kernel", [DispatchOp, YieldOp], [])


FORMED = "kernel.formed"
"""The unit attribute `form-kernels` (and the `build` pass) set on each function whose kernels passes
decided: the executor fuses nothing there that no `kernel.dispatch` says."""


def is_built(function: Operation) -> bool:
    """Whether kernel formation ran over `function` (it has `FORMED` or a `kernel.dispatch`)."""
    return FORMED in function.attributes or any(isinstance(op, DispatchOp) for op in function.walk())


OFFSET = "kernel.offset"
"""The i64 attribute `plan-memory` sets on each `tensor.empty` and `tensor.pad` whose buffer the CPU
executor allocates: the buffer's byte offset in the function's arena. Buffers whose lifetimes do not
overlap may share bytes:

    func.func @main(...) attributes {kernel.arena_bytes = 2304 : i64, kernel.formed} {
      %0 = tensor.empty() {kernel.offset = 0 : i64} : tensor<1x6x6x8xf32>
      %p = tensor.pad %r low[0, 1, 1, 0] high[0, 1, 1, 0] {...} {kernel.offset = 1152 : i64} : ...
      %c = tensor.insert_slice %a into %d[0, 0, 0, 0] [1, 6, 6, 4] [1, 1, 1, 1] {kernel.in_place} : ...

A buffer with no offset in a planned function is one the executor never touches (an elementwise op
writes over its input instead) or the source of a `kernel.in_place` insert."""

IN_PLACE = "kernel.in_place"
"""The unit attribute `plan-memory` sets on a `tensor.insert_slice` whose source buffer lives in its slice
of the destination: the source's producers write straight into the destination, the insert copies nothing."""

ARENA_BYTES = "kernel.arena_bytes"
"""The i64 attribute `plan-memory` sets on a function it placed: the bytes of its one arena. Without it the
executor allocates every buffer fresh on each run (a built module whose `plan-memory` was skipped)."""

WORKGROUP_TILES = "kernel.workgroup_tiles"
"""The attribute `iree-conv-tiles` (lowering/iree_conv_tiles.py) sets on a convolution IREE should tile
by whole output rows: `array<i64: channel_blocks, rows>`, each workgroup computing `rows` output rows of
`channel_blocks` blocks of 16 output channels (runtime/iree/conv_tiles.py sets them in IREE's
configuration)."""

ARENA_ALIGNMENT = 64
"""Bytes every block of buffers starts at a multiple of (a cache line; numpy's SIMD loops' alignment)."""
