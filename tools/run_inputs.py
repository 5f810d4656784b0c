"""`xrelay-run`'s inputs: `.npy`/`.npz` files loaded safely, and bound to `@main`'s arguments.

Arrays are read with `np.load(..., allow_pickle=False)`; every unreadable, pickled or corrupt file is
one ToolError naming it. `bind_arguments` matches `--input NAME=FILE` (a bare FILE binds the next
unbound argument) and `--params FILE.npz` arrays to `@main`'s arguments by name, and checks each
array's shape and dtype against its argument (`dialects/arguments.py`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func

from xrelay.dialects.arguments import argument_names, checked_argument
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


@dataclass
class Argument:
    """One array bound to a `@main` argument, and where it came from (for error messages)."""

    value: np.ndarray
    source: str


def _name_list(names: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")


def bind_arguments(
    main: func.FuncOp, named: list[tuple[str, Argument]], unnamed: list[Argument], params: list[tuple[str, Argument]]
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Match inputs and parameters to `@main`'s arguments and check every shape and dtype.

    Returns (inputs, params) as the runtime takes them, arrays cast to the argument's dtype when that
    is a same-kind cast (float64 data for an f32 argument).
    """
    names = argument_names(main)
    arguments = dict(zip(names, main.body.block.args))
    bound: dict[str, tuple[str, Argument]] = {}  # name -> (kind, argument)

    def bind(name: str, kind: str, argument: Argument) -> None:
        if name not in arguments:
            hint = ""
            if kind == "parameter" and not any(n in arguments for n, _ in params):
                hint = " (none of the file's names is an argument: were the parameters already bound?)"
            raise ToolError(
                f"{kind} '{name}' from '{argument.source}' is not an argument of @{main.sym_name.data} "
                f"(its arguments: {_name_list(names)}){hint}"
            )
        if name in bound:
            raise ToolError(f"argument '{name}' is given twice: by '{bound[name][1].source}' and '{argument.source}'")
        bound[name] = (kind, argument)

    for name, argument in params:
        bind(name, "parameter", argument)
    for name, argument in named:
        if name in bound and bound[name][0] == "parameter":
            raise ToolError(f"argument '{name}' is given twice: by '{bound[name][1].source}' and '{argument.source}'")
        bind(name, "input", argument)
    free = [name for name in names if name not in bound]
    if len(unnamed) > len(free):
        raise ToolError(
            f"{len(unnamed)} unnamed --input files but only {len(free)} argument(s) left to bind ({_name_list(free)})"
        )
    for name, argument in zip(free, unnamed):
        bind(name, "input", argument)

    missing = [f"'{name}' ({arguments[name].type})" for name in names if name not in bound]
    if missing:
        raise ToolError(
            f"no value for argument(s) {_name_list(missing)} of @{main.sym_name.data}: "
            "pass --input NAME=FILE.npy or --params FILE.npz"
        )
    inputs: dict[str, np.ndarray] = {}
    parameters: dict[str, np.ndarray] = {}
    for name, (kind, argument) in bound.items():
        value = _checked(name, kind, argument, arguments[name].type)
        (parameters if kind == "parameter" else inputs)[name] = value
    return inputs, parameters


def _checked(name: str, kind: str, argument: Argument, expected) -> np.ndarray:
    try:
        return checked_argument(argument.value, expected, name, f"{kind} '{name}' from '{argument.source}'",
                                runner="xrelay-run")
    except ValueError as error:
        raise ToolError(str(error)) from None


def input_spec(text: str, names: Sequence[str] = ()) -> tuple[str | None, str]:
    """`NAME=PATH` -> (NAME, PATH); a bare PATH (no `=`, or an `=` inside a directory name) -> (None, PATH).
    NAME is taken as given when it names an argument (imported ONNX names such as `gpu_0/data_0`)."""
    name, sep, path = text.partition("=")
    for argument in names:
        if text.startswith(argument + "=") and len(text) > len(argument) + 1:
            return argument, text[len(argument) + 1:]
    if sep and name and os.sep not in name and path:
        return name, path
    if sep and not path:
        raise ToolError(f"--input '{text}': no file after '='")
    return None, text
