"""`bind_params_by_name`: turn named `@main` arguments into `nn.constant` ops, like TVM's function."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import BlockArgument

from xrelay.dialects import nn
from xrelay.dialects.arguments import argument_names, find_main
from xrelay.dialects.constant import dtype_of

FuncOrModule = TypeVar("FuncOrModule", FuncOp, ModuleOp)


def _as_array(name: str, value: object) -> np.ndarray:
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()  # tvm.nd.NDArray and friends
    array = np.asarray(value)
    if array.dtype == object:
        raise ValueError(f"bind_params_by_name: parameter {name!r} is not a numeric array")
    return array


def _checked_value(name: str, arg: BlockArgument, value: object) -> np.ndarray:
    array = _as_array(name, value)
    assert isinstance(arg.type, TensorType), f"argument {name!r} is not a tensor"
    shape = tuple(arg.type.get_shape())
    dtype = dtype_of(arg.type.element_type)
    if array.shape != shape or array.dtype != dtype:
        raise ValueError(
            f"bind_params_by_name: parameter {name!r} expects {arg.type} "
            f"(shape {shape}, {dtype}) but was given shape {array.shape}, {array.dtype}"
        )
    return np.ascontiguousarray(array)


def _bind_func(func: FuncOp, params: Mapping[str, object]) -> None:
    """Bind in place: constants go to the top of the body in argument order, the arguments go away."""
    if func.is_declaration:
        raise ValueError(f"bind_params_by_name: @{func.sym_name.data} is a declaration without a body")
    block = func.body.block
    names = dict(zip(block.args, argument_names(func)))
    seen: set[str] = set()
    for name in names.values():
        if name in params and name in seen:
            raise ValueError(
                f"bind_params_by_name: multiple arguments of @{func.sym_name.data} are named {name!r}"
            )
        seen.add(name)
    to_bind = [arg for arg in block.args if names[arg] in params]
    values = [_checked_value(names[arg], arg, params[names[arg]]) for arg in to_bind]  # check all first
    if func.arg_attrs is not None:  # keep per-argument attributes aligned with the remaining arguments
        kept = [attrs for arg, attrs in zip(block.args, func.arg_attrs.data) if arg not in to_bind]
        func.arg_attrs = ArrayAttr(kept)
    anchor = block.first_op
    for arg, value in zip(to_bind, values):
        const = nn.ConstantOp(value)
        if anchor is None:
            block.add_op(const)
        else:
            block.insert_op_before(const, anchor)
        arg.replace_all_uses_with(const.results[0])  # the constant inherits the name hint
        block.erase_arg(arg)
    func.update_function_type()


def bind_params_by_name(func_or_module: FuncOrModule, params: Mapping[str, object]) -> FuncOrModule:
    """A copy of the function (or of the module, binding its `@main`) where every argument whose
    name is a key of `params` is replaced by an `nn.constant` of that value.

    Names that match no argument are ignored, as in TVM. A value whose shape or dtype differs from
    the argument's type raises `ValueError` naming the parameter. The input is not modified.
    """
    if isinstance(func_or_module, ModuleOp):
        module = func_or_module.clone()
        main = find_main(module, "bind_params_by_name")
        _bind_func(main, params)
        return module
    if isinstance(func_or_module, FuncOp):
        func = func_or_module.clone()
        _bind_func(func, params)
        return func
    raise TypeError(
        f"bind_params_by_name expects a func.func or a builtin.module, got {type(func_or_module).__name__}"
    )
