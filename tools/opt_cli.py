"""xrelay-opt's own command-line flags besides the PassContext and instrument ones: `--list-passes`,
`-v/--version` (the version line shared by the three tools), and the note on stderr naming the
pipeline passes the opt level skipped.

Decisions (issue 28): a pass named in `-p` and skipped by the opt level is TVM's rule, kept, but said
on stderr with how to run it; `--time-passes` (xDSL's) means what `--pass-timing` means, one timing
tree on stderr, so the two flags never disagree.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import textwrap
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import IO

from xdsl.passes import ModulePass, get_pass_option_infos


def version_line(prog: str) -> str:
    """`PROG X.Y.Z built from xdsl version A.B.C`: what `--version` prints for every xrelay tool."""
    try:
        xrelay_version = version("xrelay")
    except PackageNotFoundError:  # run from a checkout that was never installed
        xrelay_version = "(not installed)"
    return f"{prog} {xrelay_version} built from xdsl version {version('xdsl')}"


VERSION_HELP = "print the tool's version and the xDSL version it runs on, then exit"


def add_version_flag(parser: argparse.ArgumentParser, prog: str) -> None:
    """`-v/--version` for a tool's parser."""
    parser.add_argument("-v", "--version", action="version", version=version_line(prog), help=VERSION_HELP)


# --- --list-passes -----------------------------------------------------------------------------


def summary(cls: type) -> str:
    """The first sentence of a class's docstring, on one line."""
    paragraph = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
    end = paragraph.find(". ")
    return paragraph if end == -1 else paragraph[:end + 1]


def _options(cls: type[ModulePass]) -> str:
    """`{name=default ...}` as `-p NAME{...}` takes them, or "" for a pass without options."""
    infos = get_pass_option_infos(cls) if dataclasses.is_dataclass(cls) else ()
    shown = [f"{info.name.replace('_', '-')}={info.default_value if info.default_value is not None else '<' + info.expected_type + '>'}"
             for info in infos]
    return "{" + " ".join(shown) + "}" if shown else ""


def pass_listing(available: dict[str, Callable[[], type[ModulePass]]]) -> str:
    """xrelay's passes (pipeline name, TVM name, opt level, the passes each requires, options, a
    one-line summary), then every other pass `-p` takes by name."""
    from xrelay.pass_base import XRELAY_PASSES
    from xrelay.passes import load_all_passes

    load_all_passes()
    lines = ["xrelay's passes (-p NAME; a pass runs when --opt-level is at least its level, or when named in "
             "--required-pass):", ""]
    for name in sorted(XRELAY_PASSES):
        cls = XRELAY_PASSES[name]
        lines.append(f"  {name}  ({cls.tvm_name}, opt level {cls.opt_level}"
                     + (f", requires {', '.join(cls.required)}" if cls.required else "") + ")")
        if options := _options(cls):
            lines.append(f"      options: {options}")
        lines.extend(textwrap.wrap(summary(cls), 96, initial_indent="      ", subsequent_indent="      "))
    others = sorted(name for name in available if name not in XRELAY_PASSES)
    lines += ["", "other passes (xDSL's, opt level 0; options: see xDSL's documentation):", ""]
    lines.extend(textwrap.wrap(", ".join(others), 100, initial_indent="  ", subsequent_indent="  "))
    return "\n".join(lines) + "\n"


def add_list_passes_flag(parser: argparse.ArgumentParser,
                         available: dict[str, Callable[[], type[ModulePass]]]) -> None:
    """`--list-passes`; `-p`'s help points there instead of naming every pass."""

    class ListPasses(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            sys.stdout.write(pass_listing(available))
            parser.exit()

    parser.add_argument("--list-passes", nargs=0, action=ListPasses,
                        help="list xrelay's passes (opt level, required passes, options, summary), then "
                        "the other passes -p takes, and exit")
    for action in parser._actions:  # argparse keeps no other handle on added arguments
        if "--passes" in action.option_strings:
            action.help = "comma-separated pipeline of passes, NAME or NAME{option=value ...} (--list-passes lists them)"
        elif "--version" in action.option_strings:
            action.help = VERSION_HELP
        elif "--time-passes" in action.option_strings:
            action.help = "the same as --pass-timing"


# --- what the opt level skipped ----------------------------------------------------------------


def report_opt_level_skips(pipeline: Sequence[ModulePass], context, stream: IO[str] | None = None) -> list[str]:
    """Name on `stream` (stderr) each pipeline pass the context's opt level will skip (TVM's rule: a
    Sequential runs a pass iff it is required, or not disabled and its opt level is at most the
    context's), with how to run it; returns the notes. Disabled passes were asked for: no note."""
    from xrelay import transform

    notes = []
    for module_pass in pipeline:
        info = transform.as_pass(module_pass).info
        if info.name in context.disabled_pass or context.pass_enabled(info):
            continue
        name = module_pass.name
        notes.append(f"xrelay-opt: note: skipped pass '{name}' ({info.name}): its opt level {info.opt_level} is "
                     f"above --opt-level {context.opt_level}; run it with --opt-level {info.opt_level} "
                     f"or --required-pass {name}")
    for note in notes:
        print(note, file=stream if stream is not None else sys.stderr)
    return notes


# --- a failed pipeline, reported at its place ------------------------------------------------------


def pipeline_failure(error: Exception, module, failed_pass: str | None, reproducers: Sequence[str] = ()):
    """The ToolError for `error` raised by the pipeline run on `module`: located at the op the pass
    failed on (a rewrite pattern's `failing_op`, set by `rewrite_module` and by the lowering passes)
    or the op xDSL's verifier blames; `reproducers` are crash reproducers written for it, named so the
    user knows to replay them."""
    from xdsl.utils.exceptions import DiagnosticException

    from xrelay.tools.diagnostics import ToolError, _message, from_verify_error, location_of, source_line

    written = "".join(f" (crash reproducer written to {path}; replay: xrelay-opt --run-reproducer {path})"
                      for path in reproducers)
    failed = failed_pass or "pipeline"
    op = getattr(error, "failing_op", None)
    if op is not None:
        return ToolError(f"pass '{failed}' failed on '{op.name}': {type(error).__name__}: {_message(error)}{written}",
                         location_of(op), source_line(op))
    if isinstance(error, DiagnosticException):
        located = from_verify_error(module, error, f"in pass '{failed_pass}'" if failed_pass else None)
        located.message += written
        return located
    return ToolError(f"pass '{failed}' failed: {type(error).__name__}: {_message(error)}{written}",
                     context=_failing_op_lines(error))


def _failing_op_lines(error: BaseException) -> list[str]:
    """The failing op's line and its underline from the note xrelay leaves of xDSL's module print."""
    from xrelay.instrument.xdsl_pass import FAILING_OP_NOTE

    for note in getattr(error, "__notes__", ()):
        lines = note.split("\n")
        if lines[0].startswith(FAILING_OP_NOTE) and len(lines) >= 3:
            return [lines[1], lines[2].rstrip().rstrip("-")]
    return []
