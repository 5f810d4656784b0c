"""The instrument flags of `xrelay-opt`: each flag installs a pass instrument in its PassContext.

`INSTRUMENT_FLAGS` lists them (flag, help, argparse options, instrument factory and an optional
`finish` hook run after the pipeline, even when it failed); `register_instrument_flag` adds one.
Their instruments are installed in list order. The instruments themselves live in
`xrelay.instrument` (docs/architecture.md §7); this module only maps flags to them.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xrelay import transform
from xrelay.instrument import PassInstrument, PassTimingInstrument
from xrelay.tools.diagnostics import ToolError, check_output_path, did_you_mean, file_error

if TYPE_CHECKING:
    from xrelay.tools.xrelay_opt import XRelayOptMain


def split_names(values: Sequence[str] | None) -> list[str]:
    """`--required-pass a,b --required-pass c` -> ["a", "b", "c"]."""
    return [name.strip() for value in values or () for name in value.split(",") if name.strip()]


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
        make=lambda args, tool: PassTimingInstrument() if args.pass_timing or args.time_passes else None,
        finish=_print_timing,
    ),
]


def register_instrument_flag(flag: InstrumentFlag) -> None:
    """Add a flag to xrelay-opt; its instrument comes after those already registered."""
    INSTRUMENT_FLAGS.append(flag)


# --- the power-tool instrument flags (docs/architecture.md §7; the instruments live in xrelay.instrument) ---


_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-]+")


def _pass_selectors(values: Sequence[str] | None, tool: XRelayOptMain, flag: str) -> list[str]:
    """`--print-ir-after=fold-constant,Infer.*`: names or regexes; a pipeline name also selects its TVM name.
    Selectors match whole names, so a plain name no pass has (a typo) is an error."""
    from xrelay.instrument.pass_names import known_pass_names, pass_aliases
    from xrelay.tools.pipeline_spec import load_pass_class

    selectors = []
    known = None
    for name in split_names(values):
        if _PLAIN_NAME.fullmatch(name):
            if known is None:
                known = [*tool.available_passes, *known_pass_names()]
            if name not in known:
                raise ToolError(f"unknown pass '{name}' in {flag}{did_you_mean(name, known)}")
            selectors.extend(pass_aliases(name))
        else:
            selectors.append(name)
        if name in tool.available_passes:
            info_name = getattr(load_pass_class(tool.available_passes, name, flag), "tvm_name", name)
            if info_name not in selectors:
                selectors.append(info_name)
    return selectors


def _make_print_ir(args: argparse.Namespace, tool: XRelayOptMain) -> PassInstrument | None:
    from xrelay.instrument.print_ir import PrintIR

    after_change = args.print_ir_after_change or []
    if not (args.print_ir_before or args.print_ir_after or args.print_ir_before_all or args.print_ir_after_all
            or after_change):
        if args.elide_constants_if_larger is not None and not args.print_ir_diff:
            raise ToolError("--elide-constants-if-larger needs a --print-ir-* flag or --print-ir-diff")
        return None
    try:
        return PrintIR(_pass_selectors(args.print_ir_before, tool, "--print-ir-before"),
                       _pass_selectors(args.print_ir_after, tool, "--print-ir-after"),
                       before_all=args.print_ir_before_all, after_all=args.print_ir_after_all,
                       after_change="" in after_change,
                       changed_after=_pass_selectors(after_change, tool, "--print-ir-after-change"),
                       max_constant_elements=args.elide_constants_if_larger)
    except ValueError as error:
        raise ToolError(str(error)) from None


def _make_trace(args: argparse.Namespace, tool: XRelayOptMain) -> PassInstrument | None:
    from xrelay.instrument.trace import ChromeTraceInstrument

    if args.trace_json is None:
        return None
    check_output_path(args.trace_json)
    return ChromeTraceInstrument(process_name="xrelay-opt")


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
    from xrelay.tools.run_inputs import load_array

    inputs = {}
    for entry in args.numerical_bisect_input or ():
        name, sep, path = entry.partition("=")
        if not sep or not name or not path:
            raise ToolError(f"--numerical-bisect-input: expected NAME=FILE.npy, got '{entry}'")
        inputs[name] = load_array(path, f"input '{name}'")
    return _shared(tool, "numerical-bisect", NumericalBisect(
        inputs, seed=args.numerical_bisect_seed, rtol=args.numerical_bisect_rtol, atol=args.numerical_bisect_atol))


def _print_memory(instrument: PassInstrument, tool: XRelayOptMain) -> None:
    sys.stderr.write(instrument.render())


def _number(parse: type, minimum: float, what: str):
    """An argparse type: `parse(text)` (int or float), finite and at least `minimum`; else the error
    "must be <what>"."""

    def convert(text: str):
        try:
            value = parse(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value >= minimum):
            raise argparse.ArgumentTypeError(f"must be {what}, got '{text}'")
        return value

    return convert


_count = _number(int, 0, "an int >= 0")
_limit = _number(int, -1, "-1 (no limit) or an int >= 0")
_tolerance = _number(float, 0, "a finite number >= 0")


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
    InstrumentFlag("--print-ir-after-change", "print the IR after a pass only if it changed the IR: "
                   "=PASS,... after these passes (names or regexes); alone, after every pass that changed "
                   "it, or only those --print-ir-after/-after-all select", make=_option,
                   options={"action": "append", "nargs": "?", "const": "", "metavar": "PASS"}),
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


def _make_statistics(args: argparse.Namespace, tool: XRelayOptMain) -> PassInstrument | None:
    if not args.pass_statistics:
        if args.pass_statistics_display is not None:
            raise ToolError("--pass-statistics-display needs --pass-statistics")
        return None
    return _instrument("statistics", "PassStatisticsInstrument")(args.pass_statistics_display or "pipeline",
                                                                 print_on_exit=False)


def _print_statistics(instrument: PassInstrument, tool: XRelayOptMain) -> None:
    sys.stderr.write(instrument.render())
    sys.stderr.flush()


INSTRUMENT_FLAGS.extend([
    InstrumentFlag("--pass-statistics", "print the counters of every pass after the run on stderr (MLIR's "
                   "--mlir-pass-statistics)", make=_make_statistics, finish=_print_statistics),
    InstrumentFlag("--pass-statistics-display", "list: per pass name, summed; pipeline: per pass run, as a tree "
                   "(default)", make=_option, options={"choices": ("list", "pipeline"), "metavar": "list|pipeline"}),
])


def _make_pattern_trace(args: argparse.Namespace, tool: XRelayOptMain) -> PassInstrument | None:
    if not (args.trace_patterns or args.trace_patterns_log):
        return None
    return _shared(tool, "trace-patterns", _instrument("pattern_trace", "PatternTrace")(log=args.trace_patterns_log))


def _print_patterns(instrument: PassInstrument, tool: XRelayOptMain) -> None:
    sys.stderr.write(instrument.render())
    sys.stderr.flush()


INSTRUMENT_FLAGS.extend([
    InstrumentFlag("--trace-patterns", "print, per pass, how often each rewrite pattern was tried and applied, the "
                   "ops it created and erased, and its time (stderr)", make=_make_pattern_trace,
                   finish=_print_patterns),
    InstrumentFlag("--trace-patterns-log", "--trace-patterns plus a line per rewrite with the op's location",
                   make=_option),
])


def _shared(tool: XRelayOptMain, flag: str, instrument: PassInstrument) -> PassInstrument:
    """Remember a flag's instrument on the tool, for --pipeline-report to read instead of running its own."""
    tool.__dict__.setdefault("flag_instruments", {})[flag] = instrument
    return instrument


def _make_pipeline_report(args: argparse.Namespace, tool: XRelayOptMain) -> PassInstrument | None:
    if args.pipeline_report is None:
        return None
    check_output_path(args.pipeline_report)
    shared = tool.__dict__.get("flag_instruments", {})
    limit = args.elide_constants_if_larger
    return _instrument("pipeline_report", "PipelineReport")(
        transform.Sequential(tool.pipeline_passes), numerical=shared.get("numerical-bisect"),
        patterns=shared.get("trace-patterns"), max_constant_elements=16 if limit is None else limit,
        title=f"xrelay-opt {tool.get_input_name()}")


def _write_pipeline_report(instrument: PassInstrument, tool: XRelayOptMain) -> None:
    try:  # also after a failed pass: the page shows where it failed
        instrument.write(tool.args.pipeline_report)
    except OSError as error:
        raise ToolError(f"cannot write output file '{tool.args.pipeline_report}': {error.strerror or error}") from None


INSTRUMENT_FLAGS.append(
    InstrumentFlag("--pipeline-report", "write FILE, an HTML page to explore the run: the pass tree, each pass's IR "
                   "diff side by side, op-count delta, statistics, patterns and (with --numerical-bisect) drift",
                   make=_make_pipeline_report, finish=_write_pipeline_report, options={"metavar": "FILE"}))


def _instrument(module: str, name: str) -> Any:
    """An instrument class from `xrelay.instrument.<module>`, imported when its flag is used."""
    import importlib

    return getattr(importlib.import_module(f"xrelay.instrument.{module}"), name)


def _ir_diff(args: argparse.Namespace) -> PassInstrument | None:
    if not args.print_ir_diff:
        return None
    limit = args.elide_constants_if_larger
    return _instrument("ir_diff", "IRDiff")(max_constant_elements=16 if limit is None else limit)
