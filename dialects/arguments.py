"""The names of a function's arguments, as users and parameter files give them.

An argument's name is its SSA name hint (`%data`, `%conv0_weight`) unless the function carries an
argument attribute `xrelay.name`, which then wins. Imported models need it: ONNX names such as
`gpu_0/data_0` or `onnx::Conv_193` are not valid SSA names, and xDSL's printer drops a trailing
`_<digits>` from name hints (`%data_0` prints as `%data`), so only an attribute survives printing and
parsing. `runtime.run`, `bind_params_by_name` and `xrelay-run` all name arguments through here.
"""

from __future__ import annotations

import re

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr
from xdsl.dialects.func import FuncOp

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
