"""The code of a Markdown document, to run in tests: README.md's recipes (tests/test_readme.py) and any
other document whose blocks must run as written.

- ```` ```python ```` fences are Python blocks, run with `run_python` (fresh globals, `__main__`).
- Indented blocks (four spaces) are command lines, one per line; a trailing `# comment` is dropped.
  `run_command` runs one: xrelay's console scripts and `python -c CODE` in this process (no interpreter
  start-up per command: the suite stays fast), anything else as a subprocess with the virtual
  environment's `bin/` first on `PATH`.

Blocks run in the current directory (tests `monkeypatch.chdir` into a temporary one). A document's
`$NAME` variables are expanded from the `variables` given.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class CodeBlock:
    """A block of a Markdown document: `kind` "python" (a ```python fence), "commands" (an indented
    block) or a fence's other info string ("" when none); `line` is the 1-based line of its first line."""

    kind: str
    text: str
    line: int


@dataclass(frozen=True)
class Command:
    """One command line of a block: its words (shell-split, comment dropped) and where it is."""

    argv: list[str]
    text: str
    line: int


@dataclass(frozen=True)
class Outcome:
    returncode: int
    stdout: str
    stderr: str


def code_blocks(markdown: str) -> list[CodeBlock]:
    """Every fenced and indented code block of `markdown`, in document order. Indented lines inside a
    list item or a table are not blocks: an indented block must follow a blank line."""
    blocks: list[CodeBlock] = []
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            kind = line[3:].strip()
            end = i + 1
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            blocks.append(CodeBlock(kind, "\n".join(lines[i + 1:end]) + "\n", i + 2))
            i = end + 1
            continue
        if line.startswith("    ") and line.strip() and (i == 0 or not lines[i - 1].strip()):
            end = i
            while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
                end += 1
            while not lines[end - 1].strip():
                end -= 1
            blocks.append(CodeBlock("commands", "\n".join(x[4:] for x in lines[i:end]) + "\n", i + 1))
            i = end
            continue
        i += 1
    return blocks


def commands(block: CodeBlock, variables: Mapping[str, str] | None = None) -> list[Command]:
    """The command lines of an indented block, split as a shell would, `$NAME` expanded from `variables`."""
    found = []
    for offset, text in enumerate(block.text.split("\n")):
        argv = shlex.split(text, comments=True)
        if not argv:
            continue
        if variables:
            argv = [re.sub(r"\$(\w+)", lambda m: variables.get(m.group(1), m.group(0)), word) for word in argv]
        found.append(Command(argv, text, block.line + offset))
    return found


def _console_scripts() -> dict[str, Callable[[list[str]], int]]:
    from xrelay.tools import xrelay_import_onnx, xrelay_opt, xrelay_run

    return {"xrelay-opt": xrelay_opt.main, "xrelay-run": xrelay_run.main,
            "xrelay-import-onnx": xrelay_import_onnx.main}


def run_python(code: str, name: str = "<doc block>") -> None:
    """Run `code` as a script (`__name__ == "__main__"`) in fresh globals; its exceptions propagate."""
    exec(compile(code, name, "exec"), {"__name__": "__main__"})  # noqa: S102 - the document's own code


def run_command(argv: list[str], timeout: float = 120) -> Outcome:
    """Run one command line: xrelay's tools and `python -c` in-process, stdout and stderr captured;
    anything else as a subprocess with the virtual environment's `bin/` first on `PATH`."""
    program, args = argv[0], argv[1:]
    in_process = _console_scripts().get(program)
    if in_process is None and program in ("python", "python3") and args[:1] == ["-c"] and len(args) == 2:
        def in_process(words: list[str]) -> int:
            run_python(words[1], "<python -c>")
            return 0
    if in_process is not None:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = in_process(args)
            except SystemExit as exit_:  # argparse's --help/--version, usage errors
                status = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        return Outcome(status, out.getvalue(), err.getvalue())
    env = dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, check=False)
    return Outcome(done.returncode, done.stdout, done.stderr)
