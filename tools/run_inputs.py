"""`xrelay-run`'s inputs: `.npy`/`.npz` files loaded safely, and bound to `@main`'s arguments.

Arrays are read with `np.load(..., allow_pickle=False)`; every unreadable, pickled or corrupt file is
one ToolError naming it. `bind_arguments` matches `--input NAME=FILE`, `--input INDEX=FILE` and bare
`--input FILE` (the next argument left, in order, as iree-run-module's `--input=@FILE`) and the arrays
of `--params FILE.npz` (by name, by position `"0"`, or positionally as `np.savez`'s `arr_0, arr_1`) to
`@main`'s arguments, and checks each array's shape and dtype against its argument
(`dialects/arguments.py`). Upstream MLIR names arguments `%arg0, %arg1, ...`: their names are
`arg0, arg1, ...`, and positions bind them too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import IO
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func

from xrelay.dialects.arguments import argument_names, checked_argument, ssa_name_hint
from xrelay.tools.diagnostics import ToolError

# --- loading arrays ---------------------------------------------------------------------------------


def _unreadable(path: str, what: str, reason: str) -> ToolError:
    return ToolError(f"cannot load {what} from '{path}': {reason}")


def _load(path: str, what: str):
    """`np.load(path, allow_pickle=False)` with every failure turned into one clear ToolError."""
    try:
        with open(path, "rb") as f:
            magic = f.read(6)
        loaded = np.load(path, allow_pickle=False)
    except OSError as error:
        raise _unreadable(path, what, error.strerror or str(error)) from None
    except ValueError as error:
        if magic[:1] == b"\x80" or "Object arrays" in str(error):
            raise _unreadable(path, what, "it holds pickled Python objects, which xrelay-run never loads "
                              "(save plain arrays with np.save / np.savez)") from None
        if magic.startswith(b"\x93NUMPY"):
            raise _unreadable(path, what, f"truncated or corrupt .npy file ({error})") from None
        raise _unreadable(path, what, "not a .npy or .npz file") from None
    except Exception as error:  # noqa: BLE001 - truncated or corrupt files raise many kinds
        raise _unreadable(path, what, f"corrupt file ({type(error).__name__}: {error})") from None
    return loaded


def _npz_arrays(archive, path: str, what: str) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    try:
        with archive:
            for name in archive.files:
                arrays[name] = archive[name]
                if not isinstance(arrays[name], np.ndarray):  # numpy hands back a non-.npy member's bytes
                    raise _unreadable(path, what, f"member '{name}' is not a .npy array")
    except ToolError:
        raise
    except ValueError as error:
        if "Object arrays" in str(error):
            raise _unreadable(path, what, f"array '{name}' holds pickled Python objects, which xrelay-run "
                              "never loads") from None
        raise _unreadable(path, what, f"array '{name}': {error}") from None
    except Exception as error:  # noqa: BLE001 - corrupt member
        raise _unreadable(path, what, f"array '{name}': {type(error).__name__}: {error}") from None
    return arrays


def load_array(path: str, what: str) -> np.ndarray:
    """One array from a `.npy` file (or a `.npz` holding exactly one)."""
    loaded = _load(path, what)
    if isinstance(loaded, np.ndarray):
        return loaded
    arrays = _npz_arrays(loaded, path, what)
    if len(arrays) != 1:
        raise _unreadable(path, what, f"an .npz archive with {len(arrays)} arrays; give one .npy per input "
                          "or pass the archive with --params")
    return next(iter(arrays.values()))


def load_params(path: str) -> dict[str, np.ndarray]:
    """The named arrays of an `.npz` parameter file."""
    loaded = _load(path, "parameters")
    if isinstance(loaded, np.ndarray):
        raise _unreadable(path, "parameters", "a single .npy array; parameters come as an .npz archive "
                          "whose array names are @main's argument names (np.savez(path, **params))")
    return _npz_arrays(loaded, path, "parameters")


# --- binding arguments --------------------------------------------------------------------------------

Key = str | int | None
"""Which argument a value is for: a name, a 0-based position, or None for the next argument left."""

_SAVEZ_POSITIONAL = re.compile(r"arr_(\d+)")
"""`np.savez(path, a, b)` names its positional arrays arr_0, arr_1, ..."""


@dataclass
class Argument:
    """One array for a `@main` argument: which one (`key`), where it came from, as the user wrote it."""

    value: np.ndarray
    source: str
    key: Key = None
    kind: str = "input"  # or "parameter"
    label: str | None = None  # the member of an .npz, or the NAME/INDEX of --input NAME=FILE


def _name_list(names: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")


def input_spec(text: str, names: Sequence[str] = ()) -> tuple[Key, str]:
    """`--input`'s value -> (key, path): `NAME=PATH` (NAME is taken as given when it names an argument,
    as imported ONNX names such as `gpu_0/data_0` do), `INDEX=PATH` (a 0-based argument position), or a
    bare `PATH` / `@PATH` (iree-run-module's spelling; an `=` inside a directory name is no NAME):
    the next argument left."""
    for argument in names:
        if text.startswith(argument + "=") and len(text) > len(argument) + 1:
            return argument, text[len(argument) + 1:]
    name, sep, path = text.partition("=")
    if sep and not path and name:
        raise ToolError(f"--input '{text}': no file after '='")
    if sep and name and os.sep not in name:
        return (int(name) if name.isdecimal() else name), path
    return None, text[1:] if text.startswith("@") else text


def param_arguments(path: str, names: Sequence[str]) -> list[Argument]:
    """The arrays of an `.npz` parameter file, each keyed by its member name: an argument's name, else a
    0-based position (`"0"`), else `arr_<i>` (`np.savez(path, a, b)`), positional in the order of i."""
    members = load_params(path)
    arguments, positional = [], []
    for member, value in members.items():
        argument = Argument(value, path, member, "parameter", member)
        if member not in names and member.isdecimal():
            argument.key = int(member)
        elif member not in names and (match := _SAVEZ_POSITIONAL.fullmatch(member)):
            argument.key = None
            positional.append((int(match.group(1)), argument))
            continue
        arguments.append(argument)
    return arguments + [argument for _, argument in sorted(positional, key=lambda p: p[0])]


def _aliases(main: func.FuncOp, names: Sequence[str]) -> dict[str, str]:
    """Other spellings of argument names -> the name: an ONNX name's SSA hint (`gpu_0_data_0` for
    `gpu_0/data_0`) and the hint as the IR prints it (`%gpu_0_data`); a spelling two arguments share,
    or that is another argument's name, binds none."""
    spellings: dict[str, set[str]] = {}
    for name, arg in zip(names, main.body.block.args):
        hint = arg.name_hint or ""
        for spelling in {hint, re.sub(r"_\d+$", "", hint), ssa_name_hint(name)} - {"", name}:
            spellings.setdefault(spelling, set()).add(name)
    return {s: next(iter(owners)) for s, owners in spellings.items() if len(owners) == 1 and s not in names}


def bind_arguments(main: func.FuncOp, given: Sequence[Argument], stderr: IO[str] | None = None
                   ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Match inputs and parameters to `@main`'s arguments and check every shape and dtype.

    Named and indexed values bind first; positional ones (bare `--input` files in order, then the
    `arr_<i>` arrays of `--params` files) fill the arguments left, in argument order. Returns (inputs,
    params) as the runtime takes them, arrays cast to the argument's dtype when that is a same-kind cast
    (float64 data for an f32 argument; said once on `stderr`, not for an `--params` archive).
    """
    names = argument_names(main)
    aliases = _aliases(main, names)
    arguments = dict(zip(names, main.body.block.args))
    entry = f"@{main.sym_name.data}"
    bound: dict[str, Argument] = {}

    def describe(argument: Argument) -> str:
        label = f"'{argument.label}' " if argument.label is not None else ""
        return f"{argument.kind} {label}from '{argument.source}'"

    def bind(name: str, argument: Argument) -> None:
        if name in bound:
            raise ToolError(f"argument '{name}' is given twice: by '{bound[name].source}' and '{argument.source}'")
        bound[name] = argument

    for argument in given:
        key = argument.key
        if isinstance(key, int):
            if key >= len(names):
                raise ToolError(f"{describe(argument)}: {entry} has {len(names)} argument(s), so no argument "
                                f"#{key} (positions count from 0: {_name_list([f'{i}={n}' for i, n in enumerate(names)])})")
            bind(names[key], argument)
        elif key is not None:
            key = argument.key = aliases.get(key, key)
            if key not in arguments:
                hint = ""
                if argument.kind == "parameter" and not any(a.key in arguments for a in given if a.kind == "parameter"):
                    hint = " (none of the file's names is an argument: were the parameters already bound?)"
                raise ToolError(f"{describe(argument)} is not an argument of {entry} "
                                f"(its arguments: {_name_list(names)}){hint}")
            bind(key, argument)
    positional = sorted((a for a in given if a.key is None), key=lambda a: a.kind == "parameter")  # inputs first
    free = [name for name in names if name not in bound]
    if len(positional) > len(free):
        sources = _name_list([f"{a.source}" + (f"[{a.label}]" if a.label else "") for a in positional], 4)
        raise ToolError(f"{len(positional)} positional value(s) ({sources}) but only {len(free)} argument(s) "
                        f"of {entry} left to bind" + (f" ({_name_list(free)})" if free else ""))
    for name, argument in zip(free, positional):
        argument.label = argument.label if argument.kind == "parameter" else name
        bind(name, argument)

    missing = [f"'{name}' ({arguments[name].type})" for name in names if name not in bound]
    if missing:
        raise ToolError(
            f"no value for argument(s) {_name_list(missing)} of {entry}: pass --input NAME=FILE.npy, "
            "--input INDEX=FILE.npy, --input FILE.npy (the next argument left) or --params FILE.npz"
        )
    inputs: dict[str, np.ndarray] = {}
    parameters: dict[str, np.ndarray] = {}
    cast = []
    for name, argument in bound.items():
        value = _checked(name, argument, arguments[name].type, describe(argument))
        (parameters if argument.kind == "parameter" else inputs)[name] = value
        if value.dtype != argument.value.dtype and argument.kind == "input":
            cast.append(f"'{name}' ({argument.value.dtype} -> {value.dtype})")
    if cast and stderr is not None:
        print(f"xrelay-run: warning: input(s) {_name_list(cast)} cast to the argument's element type", file=stderr)
    return inputs, parameters


def _checked(name: str, argument: Argument, expected, where: str) -> np.ndarray:
    try:
        return checked_argument(argument.value, expected, name, where, runner="xrelay-run")
    except ValueError as error:
        located = ToolError(str(error))
        located.argument = name  # type: ignore[attr-defined] # xrelay-run puts the caret under it
        raise located from None
