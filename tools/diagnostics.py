"""Error reporting shared by xrelay's command-line drivers.

Every failure a user can cause (malformed input, a verifier error, an unknown pass, a missing or
mis-shaped file) becomes one MLIR-style diagnostic on stderr,

    model.mlir:3:5: error: 'nn.max_pool2d' op result types (tensor<1x4x8x8xf32>) differ from the inferred ...
        %1 = nn.max_pool2d(%0) {pool_size = array<i64: 2, 2>, ...} : ...
        ^

followed by exit status 1 and never a Python traceback. `XRELAY_TRACEBACK=1` in the environment
adds the traceback of unexpected (internal) errors for debugging the tools themselves.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, NoReturn

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

from xrelay.output_file import STDOUT, open_output

TRACEBACK_ENV = "XRELAY_TRACEBACK"


class ToolError(Exception):
    """A failure to report to the user: `message`, where it happened (`location`, "file:line:col" or a
    file name) and optional `context` lines (the source line with a caret under the place)."""

    def __init__(self, message: str, location: str | None = None, context: Iterable[str] = ()):
        super().__init__(message)
        self.message = message
        self.location = location
        self.context = list(context)

    def render(self, prog: str) -> str:
        """The diagnostic text: `location: error: message` (or `prog: error: message`) and context."""
        head = f"{self.location or prog}: error: {self.message}"
        return "\n".join([head, *self.context])


def error_at_span(span: Span, message: str) -> ToolError:
    """A ToolError located at `span` of a parsed text, with the source line and carets below it."""
    # print_with_context gives "loc\nline\n   ^^^\n   message"; keep only the source line and carets.
    lines = span.print_with_context().rstrip("\n").split("\n")
    return ToolError(message, str(span.get_location()), lines[1:3])


def from_parse_error(error: ParseError) -> ToolError:
    """Turn xDSL's ParseError (message under a caret) into a one-line-headed diagnostic."""
    return error_at_span(error.span, error.msg)


def from_pipeline_error(error: ArgSpecParseError) -> ToolError:
    """Turn xDSL's pipeline-syntax error (it keeps only a preformatted string) into a diagnostic."""
    # The text is "Error parsing pass pipeline specification:\n<loc>\n<line>\n<carets>\n<message>".
    lines = str(error).rstrip("\n").split("\n")
    if len(lines) >= 5:
        return ToolError(
            f"invalid pass pipeline: {lines[4].strip()}", lines[1], lines[2:4]
        )
    return ToolError(f"invalid pass pipeline: {' '.join(lines)}")


class LocatingParser(Parser):
    """xDSL's MLIR parser that attaches each op's source position as a `FileLineColLoc`, as MLIR does,
    so later diagnostics (verifier errors) can name `file:line:col`.

    Ops are parsed in text order, so lines are counted incrementally (linear in the input size).
    An explicit `loc(...)` in the text wins.
    """

    def __init__(self, ctx: Context, input: str | bytes, name: str, line_offset: int = 0):
        super().__init__(ctx, input, name)
        self._filename = StringAttr(name)
        self._counted_to = 0
        self._line = 1 + line_offset
        self._first_use: dict[str, Span] = {}

    def resolve_operand(self, operand, type):
        # Remember where a not-yet-defined value is first used, to point there if it never is.
        if operand.operand_name not in self.ssa_values:
            self._first_use.setdefault(operand.operand_name, operand.span)
        return super().resolve_operand(operand, type)

    def parse_optional_attribute(self):
        start = self._current_token.span.start
        try:
            return super().parse_optional_attribute()
        except ParseError:
            raise
        except Exception as error:  # noqa: BLE001 - xDSL building the attribute (out-of-range ints, ...)
            self.raise_error(f"invalid attribute: {_message(error)}", start, self.pos)

    def parse_optional_type(self):
        start = self._current_token.span.start
        try:
            return super().parse_optional_type()
        except ParseError:
            raise
        except Exception as error:  # noqa: BLE001 - xDSL building the type
            self.raise_error(f"invalid type: {_message(error)}", start, self.pos)

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as error:
            if error.msg == "Could not parse entire input!" and self._current_token.kind is MLIRTokenKind.EOF:
                # At the end of the input this means no operation was found at all.
                raise ToolError("no operation in the input (the file is empty or holds only comments)",
                                self._filename.data) from None
            # xDSL reports undefined values at the end of the input; MLIR points at the use.
            undefined = [name for name in self.forward_ssa_references if name in self._first_use]
            if error.msg.startswith("values used but not defined") and undefined:
                raise ParseError(self._first_use[undefined[0]], f"use of undefined value %{undefined[0]}") from None
            raise

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        op = super().parse_operation()
        if isinstance(op.location, UnknownLoc):
            text = start.input.content
            self._line += text.count("\n", self._counted_to, start.start)
            self._counted_to = start.start
            column = start.start - text.rfind("\n", 0, start.start)
            op.location = FileLineColLoc(self._filename, IntAttr(self._line), IntAttr(column))
        return op


def parse_module_file(ctx: Context, path: str, verify: bool = True) -> ModuleOp:
    """Read and parse an `.mlir` file (ops located), verifying it; every failure is a ToolError."""
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as error:
        raise file_error(error, "input file") from None
    try:
        module = LocatingParser(ctx, text, path).parse_module()
    except ParseError as error:
        raise from_parse_error(error) from None
    except UnicodeDecodeError as error:
        raise ToolError(f"not a UTF-8 text file ({error.reason} at byte {error.start})", path) from None
    if verify:
        try:
            module.verify()
        except DiagnosticException as error:
            raise from_verify_error(module, error) from error
    return module


def location_of(op: Operation) -> str | None:
    """`file:line:col` of `op` when it carries a source location (the parser attaches one)."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return None


def source_line(op: Operation) -> list[str]:
    """The source line holding `op` with a caret under its first character, when the file is readable."""
    loc = op.location
    if not isinstance(loc, FileLineColLoc):
        return []
    try:
        with open(loc.filename.data, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, start=1):
                if number == loc.line.data:
                    line = line.rstrip("\n")
                    return [line, " " * (loc.column.data - 1) + "^"]
    except OSError:
        pass
    return []


def find_invalid_op(module: Operation) -> tuple[Operation, Exception] | None:
    """The op xDSL's verifier reports first (innermost first, in program order) and its error."""
    for region in module.regions:
        for block in region.blocks:
            for op in block.ops:
                if (found := find_invalid_op(op)) is not None:
                    return found
    try:
        module.verify(verify_nested_ops=False)
        for region in module.regions:
            for block in region.blocks:
                # Block-level checks (e.g. missing terminator) belong to the enclosing op.
                if not block.ops and len(region.blocks) == 1:
                    block.verify()
    except DiagnosticException as error:
        return module, error
    return None


MESSAGE_LIMIT = 2000
"""Longest error message shown (an exception's text could embed a large print)."""


def _message(error: BaseException) -> str:
    """`str(error)` on one line: xDSL splits some messages over lines ("operand 'data' at position 0
    does not verify:" + the reason). Its print of the whole module is a note, not part of str()."""
    text = " ".join(line.strip() for line in str(error).strip().split("\n") if line.strip())
    if not text:  # MemoryError() and the like say nothing but their type
        return type(error).__name__
    return text if len(text) <= MESSAGE_LIMIT else text[:MESSAGE_LIMIT] + " ..."


def from_verify_error(module: ModuleOp, error: Exception, note: str | None = None) -> ToolError:
    """A diagnostic for a module that failed verification, located at the offending op if known."""
    found = find_invalid_op(module)
    op, cause = found if found is not None else (getattr(error, "op", None), error)
    message = _message(cause)
    if op is None:
        return ToolError(message + (f" ({note})" if note else ""))
    message = f"'{op.name}' op {message.removeprefix(op.name + ': ')}"
    if note:
        message += f" ({note})"
    return ToolError(message, location_of(op), source_line(op))


def file_error(error: OSError, what: str) -> ToolError:
    """A diagnostic for a file that cannot be opened, read or written."""
    name = error.filename if error.filename is not None else what
    reason = error.strerror or str(error)
    return ToolError(f"cannot access {what} '{name}': {reason}")


def check_output_path(path: str) -> None:
    """Fail before any work is done if `path` cannot be created (missing directory, a directory)."""
    if path == STDOUT:
        return
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ToolError(f"cannot write output file '{path}': directory '{directory}' does not exist")
    if os.path.isdir(path):
        raise ToolError(f"cannot write output file '{path}': it is a directory")


@contextmanager
def atomic_output(path: str) -> Iterator[IO[bytes]]:
    """A binary file that becomes `path` only when the `with` block succeeds (`open_output`: never a
    partial file; a symlink's target, a device or a FIFO written in place; the mode kept)."""
    try:
        with open_output(path, "wb") as f:
            yield f
    except OSError as error:
        raise ToolError(f"cannot write output file '{path}': {error.strerror or error}") from None


def did_you_mean(name: str, candidates: Sequence[str]) -> str:
    """` (did you mean 'x'?)` for the candidate closest to a misspelt `name`, else ""."""
    close = difflib.get_close_matches(name, list(dict.fromkeys(candidates)), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def report(error: ToolError, prog: str, stream: IO[str] | None = None) -> None:
    """Print `error` as a diagnostic on `stream` (stderr by default)."""
    print(error.render(prog), file=stream if stream is not None else sys.stderr, flush=True)


def one_line_usage_errors(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Make `parser` report a bad command line like any other bad input: one line, exit status 1.

    (argparse would print the whole usage text, long for xDSL's many flags, and exit with 2.)
    """

    def error(message: str) -> NoReturn:
        parser.exit(1, f"{parser.prog}: error: {message}\n")

    parser.error = error  # type: ignore[method-assign]
    return parser


def run_tool(prog: str, body: Callable[[], int | None]) -> int:
    """Run a driver's `body`, turning every failure into one diagnostic and exit status 1."""
    try:
        return body() or 0
    except ToolError as error:
        report(error, prog)
    except ParseError as error:
        report(from_parse_error(error), prog)
    except ArgSpecParseError as error:  # derives from BaseException, not Exception
        report(from_pipeline_error(error), prog)
    except BrokenPipeError:
        # The reader of stdout went away (`xrelay-opt big.mlir | head`): stop quietly, and keep
        # Python from reporting the failed flush of stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        report(ToolError("interrupted"), prog)
        return 130
    except Exception as error:  # noqa: BLE001 - anything else is a bug in xrelay, reported briefly
        report(ToolError(f"internal error: {type(error).__name__}: {_message(error)}"), prog)
        if os.environ.get(TRACEBACK_ENV):
            traceback.print_exc()
        else:
            print(f"(set {TRACEBACK_ENV}=1 to see the Python traceback)", file=sys.stderr)
    return 1
