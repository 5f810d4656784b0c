"""`GraphBuilder`: builds a `func.func @main` over `nn` ops the way TVM's `relay.testing.layers` builds Relay.

Parameters are created on first use as `@main` block arguments named by their `name_hint`, so the
argument order is the order of first use — the order Relay's `free_vars` gives the tutorial's ResNet.
Parameter shapes are derived from the operand types the `nn` ops infer (as Relay's InferType does).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue

from xrelay.dialects import nn
from xrelay.dialects.constant import element_type_of
from xrelay.dialects.layout import pad4

def element_type(dtype: str | np.dtype) -> Attribute:
    """The builtin element type for a Relay/numpy dtype name (`"float32"` -> `f32`); ValueError for
    one nn tensors do not hold."""
    try:
        return element_type_of(dtype)
    except TypeError as error:
        raise ValueError(f"unsupported dtype {dtype!r}: {error}") from None


def shape_of(value: SSAValue | Operation) -> tuple[int, ...]:
    """The static shape of a tensor value (or of a one-result op's result)."""
    if isinstance(value, Operation):
        value = value.results[0]
    assert isinstance(value.type, TensorType), f"expected a tensor, got {value.type}"
    return tuple(value.type.get_shape())



class GraphBuilder:
    """Appends `nn` ops to the body of a future `@main`; `finish(result)` returns the module.

    `input` is the data argument (block argument 0; None for `input_shape=None`, a function whose
    arguments all come from `param`); `params` maps names to arguments. A builder builds one
    function: after `finish` it holds no body.
    """

    def __init__(
        self, input_shape: Sequence[int] | None, dtype: str = "float32", input_name: str = "data"
    ):
        self.dtype = dtype
        self.elem = element_type(dtype)
        self.block = Block()
        self.params: dict[str, BlockArgument] = {}
        self.input = None if input_shape is None else self._add_arg(input_name, input_shape)

    def _add_arg(self, name: str, shape: Sequence[int], dtype: str | np.dtype | None = None) -> BlockArgument:
        if name in self.params:
            raise ValueError(f"parameter {name!r} is defined twice")
        elem = self.elem if dtype is None else element_type(dtype)
        arg = self.block.insert_arg(TensorType(elem, [int(d) for d in shape]), len(self.block.args))
        arg.name_hint = name
        self.params[name] = arg
        return arg

    def param(self, name: str, shape: Sequence[int], dtype: str | np.dtype | None = None) -> BlockArgument:
        """The parameter `%name`, created as the next block argument on first use (of the builder's
        dtype unless `dtype` is given)."""
        if name in self.params:
            existing = self.params[name]
            if shape_of(existing) != tuple(shape):
                raise ValueError(
                    f"parameter {name!r} used with shape {tuple(shape)} "
                    f"but defined with {shape_of(existing)}"
                )
            return existing
        return self._add_arg(name, shape, dtype)

    def op(self, op_class: type[Operation], *operands: SSAValue | Operation, **attrs) -> Operation:
        """Create `op_class(*operands, **attrs)` (types inferred by the dialect) and append it."""
        op = op_class(*operands, **attrs)
        self.block.add_op(op)
        return op

    # Layer helpers mirroring tvm.relay.testing.layers (weights named `<name>_weight`, ...).

    def conv2d(
        self,
        data: SSAValue | Operation,
        name: str,
        channels: int,
        kernel_size: Sequence[int],
        strides: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0),
        data_layout: str = "NCHW",
        kernel_layout: str = "OIHW",
        groups: int = 1,
    ) -> Operation:
        """`nn.conv2d` with a fresh `<name>_weight` parameter laid out as `kernel_layout` (`groups`
        input channel groups: the weight has in_channels / groups input channels)."""
        in_channels = shape_of(data)[data_layout.index("C")]
        dims = {"O": channels, "I": in_channels // groups, "H": kernel_size[0], "W": kernel_size[1]}
        weight = self.param(name + "_weight", [dims[c] for c in kernel_layout])
        layout_attrs = {}
        if data_layout != "NCHW" or kernel_layout != "OIHW":
            layout_attrs = {"data_layout": data_layout, "kernel_layout": kernel_layout}
        if groups != 1:
            layout_attrs["groups"] = groups
        return self.op(
            nn.Conv2DOp,
            data,
            weight,
            strides=tuple(strides),
            padding=pad4(padding),
            channels=channels,
            kernel_size=tuple(kernel_size),
            **layout_attrs,
        )

    def batch_norm(
        self,
        data: SSAValue | Operation,
        name: str,
        epsilon: float = 1e-5,
        axis: int = 1,
        scale: bool = True,
    ) -> SSAValue:
        """`nn.batch_norm` with `<name>_gamma/_beta/_moving_mean/_moving_var`; returns result 0."""
        channels = shape_of(data)[axis]
        stats = [
            self.param(f"{name}_{suffix}", [channels])
            for suffix in ("gamma", "beta", "moving_mean", "moving_var")
        ]
        attrs: dict[str, object] = {"epsilon": epsilon}
        if axis != 1:
            attrs["axis"] = axis
        if not scale:
            attrs["scale"] = False
        return self.op(nn.BatchNormOp, data, *stats, **attrs).results[0]

    def dense_add_bias(self, data: SSAValue | Operation, name: str, units: int) -> Operation:
        """`nn.dense` with `<name>_weight` [units, K] then `nn.bias_add` of `<name>_bias` on axis -1."""
        weight = self.param(name + "_weight", [units, shape_of(data)[-1]])
        dense = self.op(nn.DenseOp, data, weight, units=units)
        bias = self.param(name + "_bias", [units])
        return self.op(nn.BiasAddOp, dense, bias, axis=-1)

    def finish(self, *results: SSAValue | Operation, name: str = "main") -> ModuleOp:
        """Return `results` (an op stands for its first result) from a new `func.func @name` holding
        the built body, inside a module."""
        values = [r.results[0] if isinstance(r, Operation) else r for r in results]
        self.block.add_op(ReturnOp(*values))
        func = FuncOp(name, (self.block.arg_types, [v.type for v in values]), Region(self.block))
        self.block = None  # type: ignore[assignment]  # the body now belongs to the func
        return ModuleOp([func])
