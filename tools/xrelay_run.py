"""`xrelay-run`: execute a model's `@main` on numpy inputs, at a chosen lowering level.

    xrelay-run model.mlir --level nn|linalg|memref|loops --input data=x.npy [--input name=y.npy ...] \\
        --params p.npz -o out.npy [--repeat N] [--progress]

`@main`'s arguments are bound by name: `--input NAME=FILE.npy` (an `--input FILE.npy` without a name
binds the first argument not given otherwise) and every array of `--params FILE.npz`. Arrays are read
with `np.load(..., allow_pickle=False)`. The module is lowered from its own level (nn for a model;
a file `xrelay-opt` lowered part-way is recognised) to `--level` (default: its own level) and run by
`xrelay.runtime.run`; the result goes to `-o out.npy` (`out.npz` holds several results as
`output_0`, `output_1`, ...) or, without `-o`, is summarised on stdout. `--repeat N` runs once
untimed (`--warmup`, one-time set-up; its results are the ones saved), then N timed runs, and prints
the median latency. Progress goes to stderr when it is a terminal (`--progress` forces it,
`--no-progress` silences it).

Every bad input (unreadable or pickled file, unknown or missing argument, wrong shape or dtype, a
module that does not parse or verify) is one diagnostic on stderr and exit status 1; the output file
is written only after a successful run, never partially.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects.arguments import argument_names
from xrelay.tools.diagnostics import (
    ToolError,
    atomic_output,
    check_output_path,
    location_of,
    one_line_usage_errors,
    parse_module_file,
    run_tool,
    source_line,
)

PROG = "xrelay-run"


# --- levels ----------------------------------------------------------------------------------


LEVEL_DESCRIPTIONS: dict[str, str] = {
    "nn": "nn ops on the numpy reference kernels",
    "linalg": "linalg on tensors, vectorised numpy execution",
    "memref": "linalg on memrefs (bufferized), vectorised numpy execution",
    "loops": "scf loops on the scalar interpreter",
}
"""The levels `--level` accepts, in lowering order (level -> what runs there). `xrelay.runtime.run`
executes a module at any of them."""


def module_level(module: ModuleOp) -> str:
    """The level a module is at: `nn` if any nn op is left, then linalg on tensors or memrefs, then loops."""
    linalg_on_memrefs = linalg_on_tensors = memrefs = False
    for op in module.walk():
        dialect = op.name.split(".", 1)[0]
        if dialect == "nn":
            return "nn"
        if dialect == "linalg":
            on_memrefs = any(isinstance(operand.type, MemRefType) for operand in op.operands)
            linalg_on_memrefs |= on_memrefs
            linalg_on_tensors |= not on_memrefs
        memrefs |= dialect == "memref" or op.name == "scf.for"
    if linalg_on_memrefs:
        return "memref"
    if linalg_on_tensors:
        return "linalg"
    return "loops" if memrefs else "linalg"


def lower_to(module: ModuleOp, current: str, target: str) -> ModuleOp:
    """Lower `module` from level `current` to level `target` with `xrelay.lowering` (only the passes
    between the two levels for a module that is already part-way down)."""
    order = list(LEVEL_DESCRIPTIONS)
    if order.index(target) == order.index(current):
        return module
    if order.index(target) < order.index(current):
        lower_ones = ", ".join(order[order.index(current):])
        raise ToolError(f"the module is already at the {current} level, below --level {target} "
                        f"(it can run at: {lower_ones})")
    try:
        lowering = importlib.import_module("xrelay.lowering")
        lower = lowering.lower
    except (ImportError, AttributeError):
        raise ToolError(
            f"--level {target} is not available yet: xrelay.lowering.lower is not implemented (use --level nn)"
        ) from None
    try:
        if current == "nn":
            return lower(module, to=target)
        steps: dict[str, tuple[str, ...]] = lowering.LEVEL_PASSES
        remaining = steps[target][len(steps[current]):]
        from xrelay import transform

        return transform.Sequential([getattr(lowering, name)() for name in remaining], name=f"lower-to-{target}")(module)
    except ToolError:
        raise
    except Exception as error:
        message = str(error).strip().split("\n")[0]
        raise ToolError(f"cannot lower the module to {target}: {type(error).__name__}: {message}") from error


# --- progress -------------------------------------------------------------------------------------


class Progress:
    """A one-line status on stderr ("xrelay-run: running 3/10 (1.2 s)"), refreshed twice a second.

    On a terminal the line is rewritten in place and erased at the end; on anything else (only when
    forced with --progress) each new status is one line.
    """

    def __init__(self, stream: IO[str], enabled: bool, prog: str = PROG):
        self.prog = prog
        self.stream = stream
        self.enabled = enabled
        self.tty = stream.isatty() if hasattr(stream, "isatty") else False
        self.status = ""
        self.started = time.perf_counter()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._ticker: threading.Thread | None = None
        if enabled and self.tty:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()

    def update(self, status: str) -> None:
        """Show a new status; its elapsed time counts from now."""
        if not self.enabled:
            return
        with self._lock:
            self.status, self.started = status, time.perf_counter()
            if self.tty:
                self._draw()
            else:
                print(f"{self.prog}: {status}", file=self.stream, flush=True)

    def _draw(self) -> None:
        elapsed = time.perf_counter() - self.started
        self.stream.write(f"\r\x1b[K{self.prog}: {self.status} ({elapsed:.1f} s)")
        self.stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            with self._lock:
                if self.status:
                    self._draw()

    def close(self) -> None:
        """Stop refreshing and erase the status line (before any result or error is printed)."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self.enabled and self.tty and self.status:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


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


def find_main(module: ModuleOp) -> func.FuncOp:
    """`func.func @main` (or the module's only function)."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    chosen = next((f for f in functions if f.sym_name.data == "main"), functions[0] if len(functions) == 1 else None)
    if chosen is None:
        raise ToolError("the module has no func.func @main to run")
    if len(chosen.body.blocks) > 1:  # a CFG: no executor runs branches between blocks
        raise ToolError(f"@{chosen.sym_name.data} has {len(chosen.body.blocks)} blocks; xrelay runs "
                        "single-block functions only", location_of(chosen), source_line(chosen))
    return chosen



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
    from xrelay.dialects.constant import dtype_of

    try:
        shape = tuple(expected.get_shape())
        dtype = dtype_of(expected.get_element_type())
    except (AttributeError, TypeError):
        raise ToolError(f"argument '{name}' has type {expected}, which xrelay-run cannot feed") from None
    if any(dim < 0 for dim in shape):  # `?` is a negative sentinel in xDSL
        raise ToolError(f"argument '{name}' has type {expected} with a dynamic dimension, which xrelay-run cannot feed")
    value = argument.value
    where = f"{kind} '{name}' from '{argument.source}'"
    if value.shape != shape:
        raise ToolError(f"{where} has shape {value.shape}, but the argument is {expected} (shape {shape})")
    if value.dtype != dtype:
        # Only float->float or int->int (e.g. float64 data for an f32 argument); ints for a float
        # argument are more likely a wrong file than a wish.
        if value.dtype.kind != dtype.kind or not np.can_cast(value.dtype, dtype, casting="same_kind"):
            raise ToolError(f"{where} has dtype {value.dtype}, but the argument is {expected} ({dtype})")
        value = value.astype(dtype)
    return value


# --- outputs --------------------------------------------------------------------------------------------


def check_output_kind(path: str, n_results: int) -> None:
    """`.npy` for one result, `.npz` for any number; checked before the (possibly long) run."""
    check_output_path(path)
    if path.endswith(".npz"):
        return
    if not path.endswith(".npy"):
        raise ToolError(f"output file '{path}' must end in .npy (one result) or .npz (several results)")
    if n_results != 1:
        raise ToolError(f"@main returns {n_results} results; use an .npz output file (got '{path}')")


def save_outputs(path: str, results: list[np.ndarray]) -> None:
    """Write the results to `path` atomically (a failure leaves no file)."""
    with atomic_output(path) as f:
        if path.endswith(".npz"):
            np.savez(f, **{f"output_{i}": r for i, r in enumerate(results)})
        else:
            np.save(f, results[0], allow_pickle=False)


def summarise(results: list[np.ndarray], stream: IO[str]) -> None:
    """Print each result's dtype, shape and (abbreviated) values."""
    for i, result in enumerate(results):
        values = np.array2string(result, threshold=20, edgeitems=3, precision=6)
        print(f"output_{i}: {result.dtype} {tuple(result.shape)}\n{values}", file=stream)


# --- the driver ---------------------------------------------------------------------------------------------


def _input_spec(text: str, names: Sequence[str] = ()) -> tuple[str | None, str]:
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


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Run a model's @main on numpy inputs at a chosen lowering level."
    )
    parser.add_argument("model", help="the .mlir module to run (func.func @main), or an .onnx model")
    parser.add_argument(
        "--level", choices=list(LEVEL_DESCRIPTIONS), default=None,
        help="lower the module to this level, then run it (default: the module's own level, nn for an nn "
        "model): " + "; ".join(f"{name}: {what}" for name, what in LEVEL_DESCRIPTIONS.items()),
    )
    parser.add_argument(
        "--backend", choices=["xrelay", "iree"], default="xrelay",
        help="xrelay: xrelay's own executors (default); iree: compile the module (nn or linalg on tensors) "
        "with IREE for this CPU and run it natively (needs pip install 'xrelay[iree]')",
    )
    parser.add_argument(
        "--input", action="append", default=[], metavar="NAME=FILE.npy",
        help="bind @main's argument NAME to an array file (repeatable; a bare FILE binds the next unbound argument)",
    )
    parser.add_argument(
        "--params", action="append", default=[], metavar="FILE.npz",
        help="bind every array of an .npz archive to the @main argument of the same name (repeatable)",
    )
    parser.add_argument("-o", "--output", metavar="OUT.npy|OUT.npz", help="write the result(s) here")
    parser.add_argument("--repeat", type=int, default=None, metavar="N",
                        help="time N runs and print the median latency")
    parser.add_argument("--warmup", type=int, default=1, metavar="K",
                        help="with --repeat: untimed runs before the timed ones (default 1)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show progress on stderr (default: only when stderr is a terminal)")
    return one_line_usage_errors(parser)


def run(args: argparse.Namespace, stdout: IO[str], stderr: IO[str]) -> int:
    """Load, bind, lower, run and save, in that order; any failure raises ToolError."""
    if args.repeat is not None and args.repeat < 1:
        raise ToolError(f"--repeat must be at least 1, got {args.repeat}")
    if args.warmup < 0:
        raise ToolError(f"--warmup must be at least 0, got {args.warmup}")
    progress = Progress(stderr, enabled=args.progress if args.progress is not None else stderr.isatty())
    try:
        progress.update(f"parsing {args.model}")
        from xrelay.dialects import make_context

        if args.model.endswith(".onnx"):  # imported with its weights bound as constants
            from xrelay.tools.onnx_input import import_onnx

            module = import_onnx(args.model, args.model, progress=progress.update)[0]
        else:
            module = parse_module_file(_full_context(make_context()), args.model)
        name_entry_main(module)
        main = find_main(module)
        n_results = len(main.function_type.outputs.data)
        if args.output is not None:
            check_output_kind(args.output, n_results)

        progress.update("loading inputs")
        params = [(name, Argument(value, path)) for path in args.params for name, value in load_params(path).items()]
        named: list[tuple[str, Argument]] = []
        unnamed: list[Argument] = []
        for spec in args.input:
            name, path = _input_spec(spec, argument_names(main))
            argument = Argument(load_array(path, f"input '{name}'" if name else "input"), path)
            (unnamed.append(argument) if name is None else named.append((name, argument)))
        inputs, parameters = bind_arguments(main, named, unnamed, params)

        current = module_level(module)
        level = args.level or current
        if args.backend == "iree":
            from xrelay.runtime.iree_backend import INSTALL_HINT, available

            if not available():
                raise ToolError(INSTALL_HINT)
            if level not in ("nn", "linalg"):
                raise ToolError(f"--backend iree runs nn- or linalg-level modules, not the {level} level")
        if level != current:
            progress.update(f"lowering to {level}")
            module = lower_to(module, current, level)

        repeat = args.repeat or 1
        warmup = args.warmup if args.repeat is not None else 0
        runs = warmup + repeat
        latencies: list[float] = []
        results = None
        for i in range(runs):
            what = "warming up" if i < warmup else "running"
            where = f"{level} level" + (" through IREE" if args.backend == "iree" else "")
            progress.update(f"{what} at {where}" + (f" {i + 1}/{runs}" if runs > 1 else ""))
            start = time.perf_counter()
            outcome = _execute(module, inputs, parameters, args.backend)
            if i >= warmup:
                latencies.append(time.perf_counter() - start)
            if results is None:
                results = outcome
    finally:
        progress.close()

    if args.output is not None:
        save_outputs(args.output, results)
    else:
        summarise(results, stdout)
    if args.repeat is not None:
        median = statistics.median(latencies) * 1e3
        print(
            f"median latency: {median:.3f} ms over {repeat} timed run(s) at {where} "
            f"(min {min(latencies) * 1e3:.3f} ms, max {max(latencies) * 1e3:.3f} ms; {warmup} warm-up run(s) not timed)",
            file=stdout,
        )
    return 0


def name_entry_main(module: ModuleOp) -> None:
    """Upstream tools name the function after the model (`@small_cnn`): a module without `@main` whose
    only function has a body gets that function run as `@main` (renamed)."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import StringAttr

    functions = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    if len(functions) == 1 and not any(isinstance(op, func.FuncOp) and op.sym_name.data == "main" for op in module.ops):
        functions[0].sym_name = StringAttr("main")


def _full_context(ctx):
    """`make_context()` plus every other xDSL dialect, loaded on demand (lowered IR may use them)."""
    from xdsl.universe import Universe

    registered = set(ctx.registered_dialect_names)
    for name, factory in Universe.get_multiverse().all_dialects.items():
        if name not in registered:
            ctx.register_dialect(name, factory)
    return ctx


def _execute(module: ModuleOp, inputs: dict[str, np.ndarray], params: dict[str, np.ndarray],
             backend: str = "xrelay") -> list[np.ndarray]:
    from xrelay.runtime import run

    try:
        outcome = run(module, inputs, params, backend=backend)
    except (ValueError, DiagnosticException) as error:
        raise ToolError(str(error).strip().split("\n")[0]) from error
    except ArithmeticError as error:  # the inputs' values (an integer division by zero): not a bug
        raise ToolError(f"execution failed: {type(error).__name__}: {error}") from error
    except Exception as error:
        if type(error).__name__ in ("KernelError", "ExecutionError"):
            raise ToolError(f"execution failed: {error}") from error
        raise
    outputs = list(outcome) if isinstance(outcome, (list, tuple)) else [outcome]
    return [np.asarray(output) for output in outputs]


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: returns the exit status (0 success, 1 error)."""
    args = make_parser().parse_args(argv)
    return run_tool(PROG, lambda: run(args, sys.stdout, sys.stderr))


if __name__ == "__main__":
    sys.exit(main())
