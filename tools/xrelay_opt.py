"""`xrelay-opt`: xDSL's `xdsl-opt` driver that knows the nn dialect and runs passes through a PassContext.

    xrelay-opt model.mlir -p 'infer-type,fold-constant' --opt-level 3 --disabled-pass FoldConstant \\
        --pass-timing -o out.mlir

Everything `xdsl-opt` accepts keeps working (`-p`, `-o`, `--print-op-generic`, `--split-input-file`,
`--verify-diagnostics`, `--time-passes`, ...); the pipeline, though, runs as a `transform.Sequential`
of the parsed xDSL ModulePass instances inside one `transform.PassContext`, so

- `--opt-level N`, `--required-pass NAME`, `--disabled-pass NAME` filter the pipeline's passes with
  TVM's rules (a pass runs iff it is required, or not disabled and its opt level is <= N);
- every pass (nested ones too) goes through the context's instruments, which flags add
  (`--pass-timing` prints `PassTimingInstrument.render()` on stderr).

Decision: like TVM's `relay.build`, the Sequential itself is an instrumented pass, so the timing tree
has one top-level `sequential` line per input module with the pipeline's passes under it. Filtering
by opt level only exists for the children of a Sequential, and the extra line shows the pipeline's
total time. Its own ("self") time includes the IR verification xdsl-opt does after each pass.

Instrument flags are declared in `INSTRUMENT_FLAGS` (flag, argparse options, instrument factory and an
optional `finish` hook run after the pipeline, even when it failed); `register_instrument_flag` adds
one. Their instruments are installed in list order.

Input positions: ops parsed from a file carry their `file:line:col` as a `FileLineColLoc` (as in MLIR),
so verifier errors name the place; `--print-debuginfo` shows them.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import math
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from io import StringIO
from typing import IO, Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.printer import Printer
from xdsl.utils.arg_spec import PipelineLexer, SpecTokenKind, _parse_spec, parse_spec
from xdsl.utils.exceptions import DiagnosticException, ParseError, ShrinkException
from xdsl.utils.lexer import Span
from xdsl.xdsl_opt_main import xDSLOptMain

from xrelay import transform
from xrelay.instrument import PassInstrument, PassTimingInstrument
from xrelay.tools.diagnostics import (
    LocatingParser,
    atomic_output,
    check_output_path,
    ToolError,
    error_at_span,
    file_error,
    from_verify_error,
    location_of,
    one_line_usage_errors,
    run_tool,
    source_line,
)

PROG = "xrelay-opt"


# --- instrument flags (the extension point) ----------------------------------------------------


@dataclass(frozen=True)
class InstrumentFlag:
    """A command-line flag that installs a pass instrument in xrelay-opt's PassContext.

    `make(args, tool)` returns the instrument, or None when the flag is not given; `finish(instrument,
    tool)` runs after the pipeline (also after a failure, before the error is reported), e.g. to print
    a report. `options` are extra `argparse.add_argument` keywords (default: a boolean switch).
    """

    flag: str
    help: str
    make: Callable[[argparse.Namespace, XRelayOptMain], PassInstrument | None]
    finish: Callable[[PassInstrument, XRelayOptMain], None] | None = None
    options: dict[str, Any] = field(default_factory=lambda: {"action": "store_true"})


def _print_timing(instrument: PassInstrument, tool: XRelayOptMain) -> None:
    text = instrument.render()  # warns on stderr itself when nothing was profiled
    if text:
        sys.stderr.write(text if text.endswith("\n") else text + "\n")
        sys.stderr.flush()


INSTRUMENT_FLAGS: list[InstrumentFlag] = [
    InstrumentFlag(
        "--pass-timing",
        "print the time spent in every pass as TVM's PassTimingInstrument tree on stderr",
        make=lambda args, tool: PassTimingInstrument() if args.pass_timing else None,
        finish=_print_timing,
    ),
]


def register_instrument_flag(flag: InstrumentFlag) -> None:
    """Add a flag to xrelay-opt; its instrument comes after those already registered."""
    INSTRUMENT_FLAGS.append(flag)


# --- the power-tool instrument flags (DESIGN.md section 8; the instruments live in xrelay.instrument) ---


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-]+")


def _pass_selectors(values: Sequence[str] | None, tool: XRelayOptMain, flag: str) -> list[str]:
    """`--print-ir-after=fold-constant,Infer.*`: names or regexes; a pipeline name also selects its TVM name.
    Selectors match whole names, so a plain name no pass has (a typo) is an error."""
    selectors = []
    known = None
    for name in _split_names(values):
        if _PLAIN_NAME.fullmatch(name):
            if known is None:
                known = ["sequential", *tool.available_passes, *transform.registered_pass_names()]
            if name not in known:
                raise ToolError(f"unknown pass '{name}' in {flag}{_did_you_mean(name, known)}")
        selectors.append(name)
        if name in tool.available_passes:
            info_name = getattr(tool.available_passes[name](), "tvm_name", name)
            if info_name != name:
                selectors.append(info_name)
    return selectors


def _make_print_ir(args: argparse.Namespace, tool: XRelayOptMain) -> PassInstrument | None:
    from xrelay.instrument.print_ir import PrintIR

    if not (args.print_ir_before or args.print_ir_after or args.print_ir_before_all or args.print_ir_after_all
            or args.print_ir_after_change):
        if args.elide_constants_if_larger is not None and not args.print_ir_diff:
            raise ToolError("--elide-constants-if-larger needs a --print-ir-* flag or --print-ir-diff")
        return None
    try:
        return PrintIR(_pass_selectors(args.print_ir_before, tool, "--print-ir-before"),
                       _pass_selectors(args.print_ir_after, tool, "--print-ir-after"),
                       before_all=args.print_ir_before_all, after_all=args.print_ir_after_all,
                       after_change=args.print_ir_after_change, max_constant_elements=args.elide_constants_if_larger)
    except ValueError as error:
        raise ToolError(str(error)) from None


def _make_trace(args: argparse.Namespace, tool: XRelayOptMain) -> PassInstrument | None:
    from xrelay.instrument.trace import ChromeTraceInstrument

    if args.trace_json is None:
        return None
    check_output_path(args.trace_json)
    return ChromeTraceInstrument(process_name=PROG)


def _write_trace(instrument: PassInstrument, tool: XRelayOptMain) -> None:
    try:  # also after a failed pass: its event ends at the failure
        instrument.write(tool.args.trace_json)
    except OSError as error:
        raise ToolError(f"cannot write output file '{tool.args.trace_json}': {error.strerror or error}") from None


def _print_op_count_diff(instrument: PassInstrument, tool: XRelayOptMain) -> None:
    from pprint import pformat

    sys.stderr.write(pformat(instrument.get_pass_to_op_diff()) + "\n")


def _make_reproducer(args: argparse.Namespace, tool: XRelayOptMain) -> PassInstrument | None:
    from xrelay.instrument.reproducer import CrashReproducer

    if args.crash_reproducer is None:
        return None
    check_output_path(args.crash_reproducer)
    # Each pipeline pass replays with its options; `sequential` (a failure only the pipeline sees) is all of it.
    specs = {transform.as_pass(p).info.name: str(p.pipeline_pass_spec()) for p in tool.pipeline_passes}
    specs["sequential"] = ",".join(str(p.pipeline_pass_spec()) for p in tool.pipeline_passes)
    return CrashReproducer(args.crash_reproducer, pass_specs=specs, full_pipeline=specs["sequential"])


class _RunReproducer(argparse.Action):
    """`--run-reproducer FILE`: FILE is the input, its header sets `-p`, `--opt-level` and the pass lists
    (flags given after it override them)."""

    def __call__(self, parser, namespace, value, option_string=None):
        from xrelay.instrument.reproducer import read_reproducer

        try:
            reproducer = read_reproducer(value)
        except OSError as error:
            raise file_error(error, "reproducer") from None
        except ValueError as error:
            raise ToolError(str(error)) from None
        # The input positional may be filled in after this action runs: make FILE its default too.
        parser.set_defaults(input_file=value)
        namespace.run_reproducer = namespace.input_file = value
        namespace.passes = reproducer.pipeline
        namespace.opt_level = reproducer.opt_level
        namespace.required_pass = list(reproducer.required_pass) or None
        namespace.disabled_pass = list(reproducer.disabled_pass) or None


def _make_numerical_bisect(args: argparse.Namespace, tool: XRelayOptMain) -> PassInstrument | None:
    from xrelay.instrument.numerical_bisect import NumericalBisect

    if not args.numerical_bisect:
        if args.numerical_bisect_input:
            raise ToolError("--numerical-bisect-input needs --numerical-bisect")
        return None
    from xrelay.tools.xrelay_run import load_array

    inputs = {}
    for entry in args.numerical_bisect_input or ():
        name, sep, path = entry.partition("=")
        if not sep or not name or not path:
            raise ToolError(f"--numerical-bisect-input: expected NAME=FILE.npy, got '{entry}'")
        inputs[name] = load_array(path, f"input '{name}'")
    return NumericalBisect(inputs, seed=args.numerical_bisect_seed, rtol=args.numerical_bisect_rtol,
                           atol=args.numerical_bisect_atol)


def _print_memory(instrument: PassInstrument, tool: XRelayOptMain) -> None:
    sys.stderr.write(instrument.render())


def _count(text: str) -> int:
    """argparse type: an int >= 0."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an int >= 0, got '{text}'")
    return value


def _limit(text: str) -> int:
    """argparse type: -1 (no limit) or an int >= 0."""
    try:
        value = int(text)
    except ValueError:
        value = -2
    if value < -1:
        raise argparse.ArgumentTypeError(f"must be -1 (no limit) or an int >= 0, got '{text}'")
    return value


def _tolerance(text: str) -> float:
    """argparse type: a finite float >= 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got '{text}'")
    return value


def _option(args: argparse.Namespace, tool: XRelayOptMain) -> None:
    """`make` of a flag that only sets an option of another flag's instrument."""
    return None


INSTRUMENT_FLAGS.extend([
    InstrumentFlag("--print-ir-before", "print the IR before these passes (names or regexes, comma-separated)",
                   make=_make_print_ir, options={"action": "append", "metavar": "PASS"}),
    InstrumentFlag("--print-ir-after", "print the IR after these passes (names or regexes, comma-separated)",
                   make=_option, options={"action": "append", "metavar": "PASS"}),
    InstrumentFlag("--print-ir-before-all", "print the IR before every pass", make=_option),
    InstrumentFlag("--print-ir-after-all", "print the IR after every pass", make=_option),
    InstrumentFlag("--print-ir-after-change", "print the IR after a pass only if it changed the IR "
                   "(alone: after every pass that changed it)", make=_option),
    InstrumentFlag("--elide-constants-if-larger", "print constants of more than N elements as a digest in "
                   "--print-ir-* dumps (--print-ir-diff: 16 unless given)", make=_option,
                   options={"type": _count, "metavar": "N"}),
    InstrumentFlag("--print-ir-diff", "print a unified diff of the IR for every pass that changed it",
                   make=lambda args, tool: _ir_diff(args)),
    InstrumentFlag("--trace-json", "write every pass run as Chrome trace-event JSON (Perfetto, chrome://tracing)",
                   make=_make_trace, finish=_write_trace, options={"metavar": "FILE"}),
    InstrumentFlag("--op-count-diff", "print (depth, pass, {op: count change}) for every pass that changed op counts",
                   make=lambda args, tool: _instrument("op_count", "OpCountDiff")() if args.op_count_diff else None,
                   finish=_print_op_count_diff),
    InstrumentFlag("--crash-reproducer", "when a pass raises, write FILE: the IR it received, its pipeline and "
                   "the PassContext settings", make=_make_reproducer, options={"metavar": "FILE"}),
    InstrumentFlag("--run-reproducer", "replay a reproducer written by --crash-reproducer", make=_option,
                   options={"action": _RunReproducer, "metavar": "FILE"}),
    InstrumentFlag("--opt-bisect-limit", "run only the first N optional passes (-1: all) and print each decision",
                   make=lambda args, tool: None if args.opt_bisect_limit is None
                   else _instrument("bisect", "OptBisect")(args.opt_bisect_limit),
                   options={"type": _limit, "metavar": "N"}),
    InstrumentFlag("--numerical-bisect", "run the model after every pass that changed the IR and report the "
                   "first pass whose outputs drift", make=_make_numerical_bisect),
    InstrumentFlag("--numerical-bisect-input", "NAME=FILE.npy: a @main argument for --numerical-bisect "
                   "(repeatable; the others are seeded)", make=_option,
                   options={"action": "append", "metavar": "NAME=FILE"}),
    InstrumentFlag("--numerical-bisect-seed", "seed of the generated inputs (default 0)", make=_option,
                   options={"type": int, "default": 0, "metavar": "S"}),
    InstrumentFlag("--numerical-bisect-rtol", "relative tolerance (default 1e-4)", make=_option,
                   options={"type": _tolerance, "default": 1e-4, "metavar": "R"}),
    InstrumentFlag("--numerical-bisect-atol", "absolute tolerance (default 1e-5)", make=_option,
                   options={"type": _tolerance, "default": 1e-5, "metavar": "A"}),
    InstrumentFlag("--pass-memory", "print each pass's peak traced Python memory (tracemalloc) on stderr",
                   make=lambda args, tool: _instrument("memory", "PassMemoryInstrument")() if args.pass_memory
                   else None, finish=_print_memory),
])


def _instrument(module: str, name: str) -> Any:
    """An instrument class from `xrelay.instrument.<module>`, imported when its flag is used."""
    import importlib

    return getattr(importlib.import_module(f"xrelay.instrument.{module}"), name)


def _ir_diff(args: argparse.Namespace) -> PassInstrument | None:
    if not args.print_ir_diff:
        return None
    limit = args.elide_constants_if_larger
    return _instrument("ir_diff", "IRDiff")(max_constant_elements=16 if limit is None else limit)


# --- the pipeline checks xdsl-opt does between passes -----------------------------------------


class PipelineChecks(PassInstrument):
    """What `xdsl-opt` does between the pipeline's passes, as an instrument (installed last).

    After each direct child of the pipeline's Sequential: verify the module (unless --disable-verify),
    print `Pass NAME took S seconds` (--time-passes); before the next one print the IR
    (--print-between-passes). It also remembers which pass failed, for the error message.
    """

    def __init__(self, verify: bool, time_passes: bool, print_between: bool):
        self.verify = verify
        self.time_passes = time_passes
        self.print_between = print_between
        self.running: list[tuple[str, float]] = []
        self.last_done: str | None = None
        self.failed_pass: str | None = None

    def run_before_pass(self, mod: ModuleOp, info: Any) -> None:
        if len(self.running) == 1 and self.print_between and self.last_done is not None:
            print(f"IR after {self.last_done}:")
            Printer(stream=sys.stdout).print_op(mod)
            print("\n\n\n")
        self.running.append((info.name, time.perf_counter()))

    def run_after_pass(self, mod: ModuleOp, info: Any) -> None:
        name, start = self.running.pop()
        if len(self.running) != 1:
            return
        if self.time_passes:
            print(f"Pass {name} took {time.perf_counter() - start} seconds")
        if self.verify:
            try:
                mod.verify()
            except DiagnosticException as error:
                raise from_verify_error(mod, error, f"in the IR produced by pass '{name}'") from error
        self.last_done = name

    def run_after_pass_failed(self, mod: ModuleOp, info: Any) -> None:
        # Called for every pass the failure unwinds through, including one whose after-hook
        # (the verification above) already popped it.
        if self.running and self.running[-1][0] == info.name:
            self.running.pop()
        if self.failed_pass is None:  # the innermost failing pass is reported first
            self.failed_pass = info.name


# --- the driver ----------------------------------------------------------------------------------


def _split_names(values: Sequence[str] | None) -> list[str]:
    """`--required-pass a,b --required-pass c` -> ["a", "b", "c"]."""
    return [name.strip() for value in values or () for name in value.split(",") if name.strip()]


class XRelayOptMain(xDSLOptMain):
    """xDSLOptMain with the nn dialect, xrelay's passes, a PassContext around the pipeline, instrument
    flags, MLIR-style diagnostics and an `-o` file written only on success."""

    version_format = "xrelay-opt built from xdsl version {xdsl_version}"
    pipeline_passes: list[ModulePass]

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="xrelay modular optimizer driver (xdsl-opt with the nn dialect)", args=args)

    # registration

    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        if "nn" not in self.ctx.registered_dialect_names:
            from xrelay.dialects.nn import NN

            self.ctx.register_dialect("nn", lambda: NN)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        from xrelay.passes import ALL_PASSES

        for name, factory in ALL_PASSES.items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        one_line_usage_errors(arg_parser)
        group = arg_parser.add_argument_group("xrelay pass context")
        group.add_argument(
            "--opt-level", type=int, default=2, metavar="N",
            help="PassContext opt_level: a pipeline pass runs only if its opt level is <= N (default 2)",
        )
        group.add_argument(
            "--required-pass", action="append", metavar="NAME",
            help="always run this pass (TVM name or pipeline name; repeatable or comma-separated)",
        )
        group.add_argument(
            "--disabled-pass", action="append", metavar="NAME",
            help="never run this pass in the pipeline (repeatable or comma-separated)",
        )
        instruments = arg_parser.add_argument_group("pass instruments")
        for spec in INSTRUMENT_FLAGS:
            instruments.add_argument(spec.flag, help=spec.help, **spec.options)

    # pipeline

    def setup_pipeline(self) -> None:
        """Parse `-p` into pass instances; errors point into the pipeline text."""
        self.pipeline_passes = parse_pipeline(self.args.passes, self.available_passes)
        # Kept for code written against xDSLOptMain; passes run through `run_pipeline`.
        self.pipeline = PassPipeline(tuple(self.pipeline_passes))

    def load_xrelay_passes(self) -> None:
        """Import every xrelay pass class: importing registers its names with the pass registry, which
        `--required-pass`/`--disabled-pass` check names against and passes use for nested passes."""
        from xrelay.passes import ALL_PASSES

        # Build the shared xDSL context now, or the first pass's timing would include its imports.
        transform.xdsl_context()
        for load in ALL_PASSES.values():
            try:
                load()
            except Exception:  # noqa: BLE001 - a broken pass only matters if the pipeline uses it,
                continue  # and then parse_pipeline reports it

    def make_pass_context(self) -> tuple[transform.PassContext, list[tuple[InstrumentFlag, PassInstrument]]]:
        """The PassContext of the run: opt level, required/disabled passes, flag instruments, checks."""
        self.load_xrelay_passes()
        flagged = [(spec, inst) for spec in INSTRUMENT_FLAGS if (inst := spec.make(self.args, self)) is not None]
        instruments: list[PassInstrument] = [inst for _, inst in flagged]
        self.checks = PipelineChecks(
            verify=not self.args.disable_verify,
            time_passes=self.args.time_passes,
            print_between=self.args.print_between_passes,
        )
        instruments.append(self.checks)
        context = transform.PassContext(
            opt_level=self.args.opt_level,
            required_pass=self.pass_names(self.args.required_pass, "--required-pass"),
            disabled_pass=self.pass_names(self.args.disabled_pass, "--disabled-pass"),
            instruments=instruments,
        )
        return context, flagged

    def pass_names(self, values: Sequence[str] | None, flag: str) -> list[str]:
        """Names as PassContext compares them (PassInfo names): a pipeline name such as `fold-constant`
        also adds its TVM name `FoldConstant`. Names no pass has are an error (a typo would be silent)."""
        names: list[str] = []
        known = None
        for name in _split_names(values):
            names.append(name)
            if name in self.available_passes:
                pass_class = self.available_passes[name]()
                info_name = getattr(pass_class, "tvm_name", name)
                if info_name != name:
                    names.append(info_name)
                continue
            if known is None:
                known = [*self.available_passes, *transform.registered_pass_names()]
            if name not in known:
                raise ToolError(f"unknown pass '{name}' in {flag}{_did_you_mean(name, known)}")
        return names

    def run_pipeline(self, module: ModuleOp) -> ModuleOp:
        """Run the pipeline on `module` as a Sequential in the current PassContext."""
        if not self.pipeline_passes:
            return module
        pipeline = transform.Sequential(self.pipeline_passes)
        try:
            return pipeline(module)
        except ToolError:
            raise
        except DiagnosticException as error:
            failed = self.checks.failed_pass
            raise from_verify_error(module, error, f"in pass '{failed}'" if failed else None) from error
        except Exception as error:
            from xrelay.instrument.numerical_bisect import NumericalBisectError

            if isinstance(error, NumericalBisectError):  # the instrument refused the input: no pass failed
                raise ToolError(str(error)) from error
            failed = self.checks.failed_pass or "pipeline"
            op = getattr(error, "failing_op", None)  # set by xrelay's rewrite_module
            if op is not None:
                raise ToolError(f"pass '{failed}' failed on '{op.name}': {type(error).__name__}: {error}",
                                location_of(op), source_line(op)) from error
            raise ToolError(f"pass '{failed}' failed: {type(error).__name__}: {error}",
                            context=_failing_op_lines(error)) from error

    # input and output

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        frontend = self.args.frontend or file_extension
        if frontend != "mlir":
            return super().parse_chunk(chunk, file_extension, start_offset)
        parser = LocatingParser(self.ctx, chunk.read(), self.get_input_name(), start_offset)
        return parser.parse_module(not self.args.no_implicit_module)

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        # With -f, the file's extension does not matter (xDSL would still reject `.txt`).
        stream, extension = super().get_input_stream()
        return stream, parse_spec(self.args.frontend).name if self.args.frontend else extension

    def prepare_input(self):
        try:
            return super().prepare_input()
        except OSError as error:
            raise file_error(error, "input file") from None
        except ValueError as error:  # unrecognised extension
            raise ToolError(f"{error} (use -f mlir to read it as MLIR)", self.get_input_name()) from None

    def run(self) -> None:
        """Parse each input chunk, run the pipeline, print; `-o` is written only if everything succeeded."""
        if self.args.output_file is not None:
            check_output_path(self.args.output_file)
        chunks, file_extension = self.prepare_input()
        to_file = self.args.output_file is not None
        output = StringIO() if to_file else sys.stdout
        context, flagged = self.make_pass_context()
        try:
            with context:
                try:
                    for index, (chunk, offset) in enumerate(chunks):
                        try:
                            if index > 0:
                                output.write("// -----\n")
                            self.process_chunk(chunk, file_extension, offset, output)
                        finally:
                            chunk.close()
                finally:
                    for spec, instrument in flagged:
                        if spec.finish is not None:
                            spec.finish(instrument, self)
        except ShrinkException:
            print("Success, can shrink")
            sys.exit(0)
        if self.args.shrink:
            print("Failure, can't shrink")
            sys.exit(1)
        if to_file:
            with atomic_output(self.args.output_file) as f:
                f.write(output.getvalue().encode())

    def process_chunk(self, chunk: IO[bytes], file_extension: str, offset: int, output: IO[str]) -> None:
        """One input module: parse, verify, run the pipeline, print (xdsl-opt's diagnostics flags kept)."""
        try:
            try:
                module = self.parse_chunk(chunk, file_extension, offset)
            except ParseError as error:
                error.span = _with_line_offset(error.span, offset)
                raise
            except UnicodeDecodeError as error:
                raise ToolError(f"not a UTF-8 text file ({error.reason} at byte {error.start})",
                                self.get_input_name()) from None
            if module is None:
                return
            if not self.args.disable_verify:
                try:
                    module.verify()
                except DiagnosticException as error:
                    raise from_verify_error(module, error) from error
            module = self.run_pipeline(module)
            output.write(self.output_resulting_program(module))
            output.flush()
        except ParseError as error:
            if not self.args.parsing_diagnostics:
                raise
            print(error)
        except ToolError as error:
            if not (self.args.verify_diagnostics and isinstance(error.__cause__, DiagnosticException)):
                raise
            _print_like_xdsl(error.__cause__)
        except DiagnosticException as error:
            if not self.args.verify_diagnostics:
                raise
            _print_like_xdsl(error)


def _failing_op_lines(error: BaseException) -> list[str]:
    """The failing op's line and its underline from the note xrelay leaves of xDSL's module print."""
    from xrelay.instrument.xdsl_pass import FAILING_OP_NOTE

    for note in getattr(error, "__notes__", ()):
        lines = note.split("\n")
        if lines[0].startswith(FAILING_OP_NOTE) and len(lines) >= 3:
            return [lines[1], lines[2].rstrip().rstrip("-")]
    return []


def _print_like_xdsl(error: DiagnosticException) -> None:
    """`--verify-diagnostics` output, exactly as xdsl-opt prints it (message, then notes), on stdout."""
    print(error)
    for note in getattr(error, "__notes__", ()):
        print(note)


def _with_line_offset(span: Span, offset: int) -> Span:
    return dataclasses.replace(span, line_offset=offset)


def _did_you_mean(name: str, candidates: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(dict.fromkeys(candidates)), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def parse_pipeline(spec: str, available: dict[str, Callable[[], type[ModulePass]]]) -> list[ModulePass]:
    """Instantiate the passes of an `-p` pipeline; unknown passes and bad options are reported at their
    place in the pipeline text (`pass-pipeline:1:COL: error: ...`)."""
    passes: list[ModulePass] = []
    lexer = PipelineLexer(spec)
    while lexer.peek().kind is not SpecTokenKind.EOF:
        name_span = lexer.peek().span
        pass_spec = _parse_spec(lexer)
        if pass_spec.name not in available:
            raise error_at_span(
                name_span, f"unknown pass '{pass_spec.name}'{_did_you_mean(pass_spec.name, list(available))}"
            )
        try:
            pass_class = available[pass_spec.name]()
        except Exception as error:  # noqa: BLE001 - a plugin that fails to import
            raise error_at_span(name_span, f"cannot load pass '{pass_spec.name}': {type(error).__name__}: {error}")
        try:
            passes.append(pass_class.from_pass_spec(pass_spec))
        except (ValueError, TypeError) as error:
            raise error_at_span(name_span, f"invalid options for pass '{pass_spec.name}': {error}") from None
        separator = lexer.lex()
        if separator.kind is SpecTokenKind.EOF:
            break
        if separator.kind is not SpecTokenKind.COMMA:
            raise error_at_span(separator.span, "invalid pass pipeline: expected ',' between passes")
    return passes


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: returns the exit status (0 success, 1 error)."""
    return run_tool(PROG, lambda: XRelayOptMain(argv).run())


if __name__ == "__main__":
    sys.exit(main())
