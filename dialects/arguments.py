"""`@main` and its arguments: finding it, naming its arguments, checking the arrays given for them.

An argument's name is its SSA name hint (`%data`, `%conv0_weight`) unless the function carries an
argument attribute `xrelay.name`, which then wins. Imported models need it: ONNX names such as
`gpu_0/data_0` or `onnx::Conv_193` are not valid SSA names, and xDSL's printer drops a trailing
`_<digits>` from name hints (`%data_0` prints as `%data`), so only an attribute survives printing and
parsing. `runtime.run`, `bind_params_by_name` and `xrelay-run` all find `@main`, name its arguments
and (the first and last) check the arrays given for them through here.
"""

from __future__ import annotations

import re

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, MemRefType, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute

from xrelay.dialects.constant import dtype_of

NAME_ATTR = "xrelay.name"
"""The argument attribute holding an argument's external name."""


def argument_names(func: FuncOp) -> list[str]:
    """Each argument's name: its `xrelay.name` attribute, else its name hint, else `arg<i>`."""
    attrs = func.arg_attrs.data if func.arg_attrs is not None else ()
    names = []
    for i, arg in enumerate(func.body.block.args):
        name = attrs[i].data.get(NAME_ATTR) if i < len(attrs) else None
        if isinstance(name, StringAttr):
            names.append(name.data)
        else:
            names.append(arg.name_hint or f"arg{i}")
    return names


def ssa_name_hint(name: str) -> str:
    """A valid SSA name hint close to `name` (`gpu_0/data_0` -> `gpu_0_data_0`)."""
    hint = re.sub(r"[^A-Za-z0-9_$.-]", "_", name)
    return hint if re.match(r"[A-Za-z_]", hint) else "v" + hint


def set_argument_names(func: FuncOp, names: list[str]) -> None:
    """Name every argument: the name hint is a valid SSA spelling of the name, and names that
    would not survive printing (invalid characters, a trailing `_<digits>`) are also kept in the
    `xrelay.name` argument attribute."""
    args = func.body.block.args
    old = func.arg_attrs.data if func.arg_attrs is not None else [DictionaryAttr({})] * len(args)
    new = []
    for arg, name, attrs in zip(args, names, old, strict=True):
        arg.name_hint = ssa_name_hint(name)
        entries = dict(attrs.data)
        entries.pop(NAME_ATTR, None)
        if arg.name_hint != name or re.search(r"_\d+$", name):
            entries[NAME_ATTR] = StringAttr(name)
        new.append(DictionaryAttr(entries))
    func.arg_attrs = ArrayAttr(new) if any(d.data for d in new) else None


def find_main(module: ModuleOp, caller: str = "") -> FuncOp:
    """The module's `func.func @main`; ValueError (TypeError for a non-module) when there is none,
    its message starting with `caller: ` when given."""
    prefix = f"{caller}: " if caller else ""
    if not isinstance(module, ModuleOp):
        raise TypeError(f"{prefix}expected a builtin.module, got {type(module).__name__}")
    main = next((op for op in module.ops if isinstance(op, FuncOp) and op.sym_name.data == "main"), None)
    if main is None:
        raise ValueError(f"{prefix}the module has no func.func @main")
    return main


def checked_argument(value: object, expected: Attribute, name: str, where: str | None = None,
                     runner: str = "xrelay") -> np.ndarray:
    """`value` as an array of the argument type `expected` (a static tensor or memref type).

    An array of another dtype of the same kind is cast (float64 data for an f32 argument; ints for
    a float argument are more likely a wrong file than a wish). Anything else is a ValueError naming
    the value as `where` (default: `argument 'NAME'`); `runner` names what cannot feed a type that is
    not a static tensor or memref.
    """
    problem = argument_type_problem(expected, name, runner)
    if problem is not None:
        raise ValueError(problem)
    where = where or f"argument '{name}'"
    array = np.asarray(value)
    shape = tuple(expected.get_shape())
    dtype = dtype_of(expected.get_element_type())
    if array.shape != shape:
        raise ValueError(f"{where} has shape {array.shape}, but the argument is {expected} (shape {shape})")
    if array.dtype != dtype:
        if array.dtype.kind != dtype.kind:
            raise ValueError(f"{where} has dtype {array.dtype}, but the argument is {expected} ({dtype})")
        array = array.astype(dtype)
    return array


def argument_type_problem(expected: Attribute, name: str, runner: str = "xrelay") -> str | None:
    """Why no array can feed an argument `name` of type `expected` (not a static tensor or memref, or
    an element type `dtype_of` has no numpy dtype for), or None when one can."""
    shaped = isinstance(expected, TensorType | MemRefType)
    if not shaped or any(dim < 0 for dim in expected.get_shape()):  # `?` is a negative sentinel in xDSL
        dynamic = " with a dynamic dimension" if shaped else ""
        return f"argument '{name}' has type {expected}{dynamic}, which {runner} cannot feed"
    try:
        dtype_of(expected.get_element_type())
    except TypeError as error:
        return f"argument '{name}' has type {expected}, which {runner} cannot feed: {error}"
    return None
