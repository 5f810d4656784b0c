"""`xrelay-run`: execute a model's `@main` on numpy inputs, at a chosen lowering level.

    xrelay-run model.mlir --level nn|linalg|memref|loops --input data=x.npy [--input name=y.npy ...] \\
        --params p.npz -o out.npy [--repeat N] [--progress]
    xrelay-run upstream.mlir --input x.npy --input 1=w.npy      # %arg0 in order, %arg1 by position

`@main`'s arguments (a module's only function when it has no `@main`) are bound by name (`--input
NAME=FILE.npy`; upstream's unnamed `%arg0, %arg1` are `arg0, arg1`), by 0-based position (`--input
0=FILE.npy`) or in order (a bare `--input FILE.npy`, or `--input @FILE.npy` as iree-run-module writes it,
binds the next argument left), and from `--params FILE.npz` (members named after arguments or positions,
or `np.savez`'s positional `arr_0, arr_1, ...`, which follow the bare --input files). Arrays are read
with `np.load(..., allow_pickle=False)`. The module is lowered from its own level (nn for a model;
a file `xrelay-opt` lowered part-way is recognised) to `--level` (default: its own level) and run by
`xrelay.runtime.run`; the result goes to `-o out.npy` (`out.npz` holds several results as
`output_0`, `output_1`, ...) or, without `-o`, is summarised on stdout. `--repeat N` runs once
untimed (`--warmup`, one-time set-up; its results are the ones saved), then N timed runs, and prints
the median latency and the time to the first result (parsing, set-up, first run; at the loops level
also the native executor's compilation time, or that its library came from the cache). Progress
goes to stderr when it is a terminal (`--progress` forces it,
`--no-progress` silences it).

Every bad input (unreadable or pickled file, unknown or missing argument, wrong shape or dtype, a
module that does not parse or verify) is one diagnostic on stderr and exit status 1; the output file
is written only after a successful run, never partially.
"""

from __future__ import annotations

import argparse
import functools
import io
import os
import re
import statistics
import sys
import time
from collections.abc import Sequence
from typing import IO

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.utils.exceptions import DiagnosticException

from xrelay.dialects.arguments import argument_names, argument_type_problem, find_main
from xrelay.dialects.levels import LOWERING_LEVELS, module_level
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
from xrelay.tools.opt_cli import add_version_flag
from xrelay.tools.progress import Progress
from xrelay.tools.run_inputs import Argument, bind_arguments, input_spec, load_array, param_arguments

PROG = "xrelay-run"


# --- levels ----------------------------------------------------------------------------------


LEVEL_DESCRIPTIONS: dict[str, str] = {
    "nn": "nn ops on the numpy reference kernels",
    "linalg": "linalg on tensors, vectorised numpy execution",
    "memref": "linalg on memrefs (bufferized), vectorised numpy execution",
    "loops": "scf loops compiled to C by gcc (codegen/), numpy where that cannot run",
}
"""What runs at each level `--level` accepts (`dialects/levels.py`), in lowering order."""


def lower_to(module: ModuleOp, current: str, target: str) -> ModuleOp:
    """Lower `module` from level `current` to level `target` with `xrelay.lowering` (only the passes
    between the two levels for a module that is already part-way down)."""
    order = list(LOWERING_LEVELS)
    if order.index(target) == order.index(current):
        return module
    if order.index(target) < order.index(current):
        lower_ones = ", ".join(order[order.index(current):])
        raise ToolError(f"the module is already at the {current} level, below --level {target} "
                        f"(it can run at: {lower_ones})")
    from xrelay.lowering import lower

    try:
        return lower(module, to=target, start=current)
    except Exception as error:
        message = str(error).strip().split("\n")[0]
        op = getattr(error, "failing_op", None)  # the lowering pass names the op it stopped at
        where = (location_of(op), source_line(op)) if op is not None else (None, [])
        raise ToolError(f"cannot lower the module to {target}: {type(error).__name__}: {message}", *where) from error


# --- outputs --------------------------------------------------------------------------------------------


def _is_device(path: str) -> bool:
    """A path that exists and is no regular file: a device or FIFO (`/dev/null`, `/dev/stdout`)."""
    return os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path)


def check_output_kind(path: str, n_results: int) -> None:
    """`.npy` for one result, `.npz` for any number (a device takes either: .npz for several results);
    checked before the (possibly long) run."""
    check_output_path(path)
    if path.endswith(".npz") or _is_device(path):
        return
    if not path.endswith(".npy"):
        raise ToolError(f"output file '{path}' must end in .npy (one result) or .npz (several results)")
    if n_results != 1:
        raise ToolError(f"@main returns {n_results} results; use an .npz output file (got '{path}')")


def save_outputs(path: str, results: list[np.ndarray]) -> None:
    """Write the results to `path` atomically (a failure leaves no file)."""
    data = io.BytesIO()  # numpy seeks while writing; a pipe behind /dev/stdout cannot
    if path.endswith(".npz") or (len(results) > 1 and _is_device(path)):
        np.savez(data, **{f"output_{i}": r for i, r in enumerate(results)})
    else:
        np.save(data, results[0], allow_pickle=False)
    with atomic_output(path) as f:
        f.write(data.getvalue())


def summarise(results: list[np.ndarray], stream: IO[str]) -> None:
    """Print each result's dtype, shape and (abbreviated) values."""
    for i, result in enumerate(results):
        values = np.array2string(result, threshold=20, edgeitems=3, precision=6)
        print(f"output_{i}: {result.dtype} {tuple(result.shape)}\n{values}", file=stream)


# --- the driver ---------------------------------------------------------------------------------------------


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
        "--iree-flags", default=None, metavar="FLAGS",
        help="with --backend iree: the iree-compile flags (one string, split as a shell would) in place of "
        "xrelay's defaults (runtime/iree/backend.py DEFAULT_FLAGS: data tiling and microkernels); "
        "--iree-flags= compiles with IREE's own defaults",
    )
    parser.add_argument(
        "--input", action="append", default=[], metavar="[NAME=|INDEX=|@]FILE.npy",
        help="bind an argument of @main to an array file (repeatable): NAME= by name (an ONNX name, or arg0, "
        "arg1, ... for upstream's unnamed %%arg0, %%arg1), INDEX= by 0-based position, and a bare FILE (or @FILE, "
        "as iree-run-module's --input=@FILE) the next argument left, in order",
    )
    parser.add_argument(
        "--params", action="append", default=[], metavar="FILE.npz",
        help="bind the arrays of an .npz archive (repeatable): each to the argument of its name, or of its "
        "0-based position when named \"0\", \"1\", ...; np.savez's unnamed arr_0, arr_1, ... take the "
        "arguments left, in order, after the bare --input files",
    )
    parser.add_argument("-o", "--output", metavar="OUT.npy|OUT.npz", help="write the result(s) here")
    parser.add_argument("--repeat", type=int, default=None, metavar="N",
                        help="time N runs and print the median latency")
    parser.add_argument("--warmup", type=int, default=1, metavar="K",
                        help="with --repeat: untimed runs before the timed ones (default 1)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show progress on stderr (default: only when stderr is a terminal)")
    add_version_flag(parser, PROG)
    return one_line_usage_errors(parser)


def run(args: argparse.Namespace, stdout: IO[str], stderr: IO[str]) -> int:
    """Load, bind, lower, run and save, in that order; any failure raises ToolError."""
    if args.repeat is not None and args.repeat < 1:
        raise ToolError(f"--repeat must be at least 1, got {args.repeat}")
    if args.warmup < 0:
        raise ToolError(f"--warmup must be at least 0, got {args.warmup}")
    progress = Progress(stderr, prog=PROG, enabled=args.progress if args.progress is not None else stderr.isatty())
    started = time.perf_counter()
    first_result = None  # seconds from here to the first run's results: parsing, set-up and that run
    try:
        progress.update(f"parsing {args.model}")
        from xrelay.dialects import make_context

        if args.model.endswith(".onnx"):  # imported with its weights bound as constants
            from xrelay.tools.onnx_input import import_onnx

            module = import_onnx(args.model, args.model, progress=progress.update)[0]
        else:
            module = parse_module_file(_full_context(make_context()), args.model)
        main = entry_function(module)
        n_results = len(main.function_type.outputs.data)
        if args.output is not None:
            check_output_kind(args.output, n_results)

        progress.update("loading inputs")
        names = argument_names(main)
        given = [argument for path in args.params for argument in param_arguments(path, names)]
        for spec in args.input:
            key, path = input_spec(spec, names)
            label = None if key is None else str(key)
            given.append(Argument(load_array(path, f"input '{label}'" if label else "input"), path, key, "input", label))
        try:
            inputs, parameters = bind_arguments(main, given, stderr)
        except ToolError as error:  # a value wrong for its argument: at the argument's place in @main
            raise _at_argument(error, main) from None

        current = module_level(module)
        level = args.level or current
        if args.iree_flags is not None and args.backend != "iree":
            raise ToolError("--iree-flags needs --backend iree")
        if args.backend == "iree":
            from xrelay.runtime.iree.backend import INSTALL_HINT, available

            if not available():
                raise ToolError(INSTALL_HINT)
            if level not in ("nn", "linalg"):
                raise ToolError(f"--backend iree runs nn- or linalg-level modules, not the {level} level")
        if level != current:
            progress.update(f"lowering to {level}")
            module = lower_to(module, current, level)
        execute = functools.partial(_execute, module, inputs, parameters)
        if args.backend == "iree":  # compiled once, not in each timed run
            progress.update("compiling with IREE")
            execute = _compiled_by_iree(module, inputs, parameters, args.iree_flags)

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
            outcome = execute()
            if i >= warmup:
                latencies.append(time.perf_counter() - start)
            if results is None:
                results, first_result = outcome, time.perf_counter() - started
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
        print(f"time to first result: {first_result:.3f} s (parsing, set-up and the first run)", file=stdout)
        if level == "loops" and args.backend == "xrelay":
            print(_loops_program_summary(module), file=stdout)
    return 0


def name_entry_main(module: ModuleOp) -> None:
    """Upstream tools name the function after the model (`@small_cnn`): a module without `@main` whose
    only function has a body gets that function run as `@main` (renamed)."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    if len(functions) == 1 and not any(isinstance(op, func.FuncOp) and op.sym_name.data == "main" for op in module.ops):
        functions[0].sym_name = StringAttr("main")


def entry_function(module: ModuleOp) -> func.FuncOp:
    """The function xrelay-run runs: `@main` (an upstream module's only function is renamed so), with
    a body of one block."""
    name_entry_main(module)
    try:
        main = find_main(module)
    except ValueError:
        main = None
    if main is None or not main.body.blocks:
        raise ToolError("the module has no func.func @main to run")
    if len(main.body.blocks) > 1:  # a CFG: no executor runs branches between blocks
        raise ToolError(f"@main has {len(main.body.blocks)} blocks; xrelay runs single-block functions only",
                        location_of(main), source_line(main))
    # Checked here, before any input file is read, so the message points at @main.
    for name, arg in zip(argument_names(main), main.body.block.args):
        problem = argument_type_problem(arg.type, name, PROG)
        if problem is not None:
            where = location_of(main)  # none for an imported .onnx model
            raise ToolError(f"'{main.name}' op {problem}" if where else problem, where, source_line(main))
    return main


def _at_argument(error: ToolError, main: func.FuncOp) -> ToolError:
    """`error` about one argument's value located at `main` (a parsed file's `@main` line), the caret
    under that argument."""
    names = argument_names(main)
    argument = getattr(error, "argument", None)
    if error.location is not None or location_of(main) is None or argument not in names:
        return error  # a binding error (an unknown name, too many files) is the command line's
    location, context = location_of(main), source_line(main)
    if context and not context[0].startswith("..."):
        hint = main.body.block.args[names.index(argument)].name_hint or ""
        for spelling in (hint, re.sub(r"_\d+$", "", hint)):
            column = context[0].find(f"%{spelling}:") if spelling else -1
            if column != -1:
                context[1] = " " * column + "^" * (len(spelling) + 1)
                location = f"{location.rsplit(':', 1)[0]}:{column + 1}"
                break
    return ToolError(error.message, location, context)


_NAMED_OP = re.compile(r"(?:unsupported|invalid) op ([\w.]+)|^([\w]+\.[\w.]+) on operands")
"""The op an executor's message names (ExecutionError's "unsupported op X" or "invalid op X", KernelError's
"X on ...")."""


def _at_op(message: str, module: ModuleOp) -> tuple[str | None, list[str]]:
    """The location and source line of the first op of `module` the executor's `message` names."""
    match = _NAMED_OP.search(message)
    if match is not None:
        name = match.group(1) or match.group(2)
        for op in module.walk():
            if op.name == name and location_of(op) is not None:
                return location_of(op), source_line(op)
    return None, []


def _full_context(ctx):
    """`make_context()` plus every other dialect the installed `xdsl.universe` entry points define,
    loaded on demand (lowered IR may use them). xrelay's own entry point is not loaded: its one
    dialect, nn, is make_context's. A plugin that fails to load adds no dialect."""
    from importlib.metadata import entry_points

    registered = set(ctx.registered_dialect_names)
    for plugin in sorted(entry_points(group="xdsl.universe"), key=lambda p: p.name):
        if plugin.name == "xrelay":
            continue
        try:
            dialects = plugin.load().all_dialects
        except Exception:  # noqa: BLE001 - a broken plugin must not stop a run that does not use it
            continue
        for name, factory in dialects.items():
            if name not in registered:
                registered.add(name)
                ctx.register_dialect(name, factory)
    return ctx


def _compiled_by_iree(module: ModuleOp, inputs: dict[str, np.ndarray], params: dict[str, np.ndarray],
                      flags: str | None):
    """A function running `module`'s @main, compiled by IREE (with `flags`, one shell-quoted string,
    or iree_backend.DEFAULT_FLAGS), on the bound arguments."""
    import shlex

    from xrelay.runtime.iree import backend as iree_backend
    from xrelay.runtime.reference.interpreter import checked_arguments

    try:
        compile_flags = iree_backend.DEFAULT_FLAGS if flags is None else tuple(shlex.split(flags))
        values = checked_arguments(find_main(module), inputs, params)
        compiled = iree_backend.compile_module(module, flags=compile_flags)
    except ValueError as error:
        raise ToolError(str(error).strip().split("\n")[0]) from error
    return lambda: [np.asarray(output) for output in compiled(*values)]


def _loops_program_summary(module: ModuleOp) -> str:
    """How the loops level ran `module` (the program `run` built and kept): natively, with its first
    call's compilation time, or on numpy."""
    from xrelay.codegen.program import describe, loops_program
    from xrelay.runtime.executor.program_entry import cached_program

    return describe(cached_program(module, loops_program))


def _execute(module: ModuleOp, inputs: dict[str, np.ndarray], params: dict[str, np.ndarray]) -> list[np.ndarray]:
    from xrelay.runtime import run

    try:
        outcome = run(module, inputs, params)
    except (ValueError, DiagnosticException) as error:
        message = str(error).strip().split("\n")[0]
        raise ToolError(message, *_at_op(message, module)) from error
    except ArithmeticError as error:  # the inputs' values (an integer division by zero): not a bug
        raise ToolError(f"execution failed: {type(error).__name__}: {error}") from error
    except Exception as error:
        if type(error).__name__ in ("KernelError", "ExecutionError"):
            raise ToolError(f"execution failed: {error}", *_at_op(str(error), module)) from error
        raise
    outputs = list(outcome) if isinstance(outcome, (list, tuple)) else [outcome]
    return [np.asarray(output) for output in outputs]


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: returns the exit status (0 success, 1 error)."""
    args = make_parser().parse_args(argv)
    return run_tool(PROG, lambda: run(args, sys.stdout, sys.stderr))


if __name__ == "__main__":
    sys.exit(main())
