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
import math
import os
import re
import sys
import traceback
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, NoReturn

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, FloatAttr, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Attribute, Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

from xrelay.dialects.dominance import verify_dominance
from xrelay.output_file import STDOUT, open_output
from xrelay.weights_file import WeightsError, load_weights

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


ECHO_WIDTH = 160
"""Widest source line echoed under a diagnostic; a longer one is cut around the column."""


def echo_line(line: str, start: int, end: int | None = None) -> list[str]:
    """`line` and a caret line under columns `start`..`end` (0-based, end exclusive), both cut to
    ECHO_WIDTH around `start` when the line is longer (a minified file's line can be megabytes)."""
    end = max(start + 1, end if end is not None else start + 1)
    first = 0
    if len(line) > ECHO_WIDTH:
        first = max(0, min(start - ECHO_WIDTH // 2, len(line) - ECHO_WIDTH))
        end = min(end, first + ECHO_WIDTH)
    shown = line[first:first + ECHO_WIDTH]
    prefix = "..." if first > 0 else ""
    suffix = "..." if first + ECHO_WIDTH < len(line) else ""
    return [prefix + shown + suffix, " " * (len(prefix) + start - first) + "^" * (end - start)]


def error_at_span(span: Span, message: str) -> ToolError:
    """A ToolError located at `span` of a parsed text, with the source line and carets below it."""
    text = span.input.content
    line_start = text.rfind("\n", 0, span.start) + 1
    line_end = text.find("\n", span.start)
    line_end = len(text) if line_end == -1 else line_end
    context = echo_line(text[line_start:line_end], span.start - line_start, min(span.end, line_end) - line_start)
    return ToolError(message or "invalid input", str(span.get_location()), context)


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


_OP_NAME = re.compile(r'(?:[%][^=]*=\s*)?"?([A-Za-z_][\w.$-]*)')
"""The op name at an op's start, after its result list (`%0, %1 = nn.op ...` or `"nn.op"(...)`)."""


_UNREGISTERED = re.compile(r"Operation (\S+) is not registered")

_UNREGISTERED_HINTS = {
    "bufferization.dealloc": " (xrelay runs upstream's bufferized code after its deallocation is lowered: "
    "iree-opt --ownership-based-buffer-deallocation --buffer-deallocation-simplification "
    "--bufferization-lower-deallocations, as README.md shows)",
}
"""What to do about an op upstream pipelines leave that xrelay does not run."""

MAX_CONSTANT_ELEMENTS = 2**27
"""Most elements of a dense constant in parsed text (a splat is expanded element by element)."""


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
        self._op_starts: list[Span] = []  # where each op being parsed begins, innermost last

    def resolve_operand(self, operand, type):
        # Remember where a not-yet-defined value is first used, to point there if it never is.
        if operand.operand_name not in self.ssa_values:
            self._first_use.setdefault(operand.operand_name, operand.span)
        return super().resolve_operand(operand, type)

    def _located(self, parse, what: str):
        """`parse()`, anything it raises besides a ParseError turned into one error spanning the
        `what` (attribute or type) being parsed."""
        start = self._current_token.span.start
        try:
            return parse()
        except ParseError:
            raise
        except RecursionError:
            self.raise_error("nesting too deep", start, self.pos)
        except Exception as error:  # noqa: BLE001 - xDSL building the attribute or type (out-of-range ints, ...)
            self.raise_error(f"invalid {what}: {_message(error)}", start, self.pos)

    def parse_optional_attribute(self):
        start = self._current_token.span.start
        attr = self._located(super().parse_optional_attribute, "attribute")
        if isinstance(attr, FloatAttr) and not _packable(attr.type):
            # xDSL 0.75 reads `1.5 : f80` but cannot print it (no struct format for f80, f128).
            self.raise_error(f"float attributes of type {attr.type} are not supported (xDSL cannot print them)",
                             start, self.pos)
        return attr

    def parse_optional_type(self):
        return self._located(super().parse_optional_type, "type")

    def _parse_dense_literal_type(self):
        # Checked before xDSL expands a splat (`dense<1.5> : tensor<99999999999xf32>`) into a list.
        start = self._current_token.span.start
        type = super()._parse_dense_literal_type()
        count = math.prod(type.get_shape())
        if count > MAX_CONSTANT_ELEMENTS:
            self.raise_error(f"dense constant of type {type} has {count} elements; "
                             f"at most {MAX_CONSTANT_ELEMENTS} (2**27) in a parsed constant", start, self.pos)
        return type

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """Parse the whole input; every failure, whatever xDSL raised, becomes one located ParseError."""
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as error:
            raise self._clearer(error) from None
        except ToolError:
            raise
        except RecursionError:
            raise ParseError(self._current_token.span, "nesting too deep (regions, types or attributes)") from None
        except Exception as error:  # noqa: BLE001 - xDSL failing on malformed input (IndexError, KeyError, ...)
            # Raised while building the innermost op being parsed (its verifier, an xDSL parse hook):
            # located at that op, as MLIR locates an op's errors; the parser may already be past it.
            if not self._op_starts:
                raise ParseError(self._current_token.span, f"invalid input: {_message(error)}") from None
            span = self._op_starts[-1]
            name = _OP_NAME.match(span.input.content, span.start)
            what = f"'{name.group(1)}' op" if name else "op"
            raise ParseError(span, f"{what} {_describe(error)}") from None

    def _clearer(self, error: ParseError) -> ParseError | ToolError:
        """xDSL's ParseError, reworded where its message misleads or says nothing."""
        if error.msg == "Could not parse entire input!" and self._current_token.kind is MLIRTokenKind.EOF:
            # At the end of the input this means no operation was found at all.
            return ToolError("no operation in the input (the file is empty or holds only comments)",
                             self._filename.data)
        # xDSL reports undefined values at the end of the input; MLIR points at the use.
        undefined = [name for name in self.forward_ssa_references if name in self._first_use]
        if error.msg.startswith("values used but not defined") and undefined:
            return ParseError(self._first_use[undefined[0]], f"use of undefined value %{undefined[0]}")
        if (unknown := _UNREGISTERED.match(error.msg)) is not None:
            # xDSL points after the name; MLIR (and the user) at the name itself.
            text = error.span.input.content
            start = text.rfind(unknown.group(1), 0, error.span.start + 1)
            message = error.msg + _UNREGISTERED_HINTS.get(unknown.group(1), "")
            if start != -1 and not text[start + len(unknown.group(1)):error.span.start].strip(' "'):
                return ParseError(Span(start, start + len(unknown.group(1)), error.span.input), message)
            return ParseError(error.span, message)
        if error.msg.strip() == "in block definition":  # xDSL expected a block label: `^bb0`
            if self._current_token.kind is MLIRTokenKind.EOF:
                return ParseError(error.span, "unexpected end of input: expected '}' to close the region")
            return ParseError(error.span, "expected an operation, a block label (^bb0:) or '}' closing the region")
        return error

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        # The location is counted before the op's regions are parsed: their ops move the count on.
        text = start.input.content
        self._line += text.count("\n", self._counted_to, start.start)
        self._counted_to = start.start
        line, column = self._line, start.start - text.rfind("\n", 0, start.start)
        self._op_starts.append(start if start.text else self._current_token.span)
        op = super().parse_operation()
        self._op_starts.pop()
        here = FileLineColLoc(self._filename, IntAttr(line), IntAttr(column))
        if isinstance(op.location, UnknownLoc):
            op.location = here
        elif not isinstance(op.location, FileLineColLoc):  # its own `loc("name")`: kept, and where it is
            _TEXT_POSITIONS[op] = here
        return op


def _packable(float_type: Attribute) -> bool:
    """Whether xDSL can pack (so print) a value of `float_type`."""
    try:
        float_type.pack([0.0])
    except NotImplementedError:
        return False
    return True


def parse_module_file(ctx: Context, path: str, verify: bool = True) -> ModuleOp:
    """Read and parse an `.mlir` file (ops located) with its weights file if it names one (a saved
    build, xrelay/weights_file.py), verifying it; every failure is a ToolError or a WeightsError."""
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
    load_weights(module, path)
    if verify:
        verify_module(module)
    return module


def verify_module(module: ModuleOp, note: str | None = None) -> None:
    """xDSL's verifier plus SSA dominance; any failure (xDSL's verifiers also raise IndexError,
    KeyError, AssertionError on malformed ops) is a ToolError at the offending op."""
    try:
        module.verify()
        verify_dominance(module)
    except RecursionError:
        raise ToolError("nesting too deep to verify" + (f" ({note})" if note else "")) from None
    except Exception as error:
        raise from_verify_error(module, error, note) from error


_TEXT_POSITIONS: weakref.WeakKeyDictionary[Operation, FileLineColLoc] = weakref.WeakKeyDictionary()
"""Where in the parsed file an op written with a location of another kind (`loc("node")`) is."""


def _file_location(op: Operation) -> FileLineColLoc | None:
    loc = op.location
    return loc if isinstance(loc, FileLineColLoc) else _TEXT_POSITIONS.get(op)


def location_of(op: Operation) -> str | None:
    """`file:line:col` of `op` when it carries a source location (the parser attaches one, or records
    where an op with a location of another kind, `loc("name")`, was written)."""
    loc = _file_location(op)
    if loc is not None:
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return None


def source_line(op: Operation) -> list[str]:
    """The source line holding `op` with a caret under its first character, when the file is readable."""
    loc = _file_location(op)
    if loc is None:
        return []
    try:
        with open(loc.filename.data, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, start=1):
                if number == loc.line.data:
                    return echo_line(line.rstrip("\n"), loc.column.data - 1)
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
    except Exception as error:  # noqa: BLE001 - not only VerifyException: see verify_module
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


def _describe(error: BaseException) -> str:
    """An error's message after "'op.name' op ": a verifier's message as it is; anything else xDSL
    raised on a malformed op (IndexError, KeyError, AssertionError, ...) with its type."""
    if isinstance(error, DiagnosticException):
        return _message(error)
    message = _message(error)
    kind = type(error).__name__
    return f"is malformed ({kind})" if message == kind else f"is malformed ({kind}: {message})"


def from_verify_error(module: ModuleOp, error: Exception, note: str | None = None) -> ToolError:
    """A diagnostic for a module that failed verification, located at the offending op if known."""
    found = find_invalid_op(module)
    op, cause = found if found is not None else (getattr(error, "op", None), error)
    message = _message(cause)
    if op is None:
        return ToolError(message + (f" ({note})" if note else ""))
    message = f"'{op.name}' op {_describe(cause).removeprefix(op.name + ': ')}"
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
        # A successful run prints only its results: numpy's warnings about values (a division by zero
        # giving inf, the log of a negative giving nan) are the computation's answer, as in MLIR and TVM.
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return body() or 0
    except ToolError as error:
        report(error, prog)
    except ParseError as error:
        report(from_parse_error(error), prog)
    except WeightsError as error:
        report(ToolError(error.message, location_of(error.op), source_line(error.op)), prog)
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
