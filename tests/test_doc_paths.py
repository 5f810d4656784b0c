"""The documents name only files and folders that exist: every path under a top-level folder of the
repository (`runtime/executor/plan.py`, `codegen/`, `tests/test_runtime_iree*.py`) and every bare
module name (`linalg_exec.py`) in each Markdown file of the repository (README.md, CONTRIBUTING.md,
docs/architecture.md, ...)."""

from __future__ import annotations

import fnmatch
import re
import subprocess

import pytest

from doc_blocks import REPO

# A path: folders, then a file name (or a pattern: `tests/test_runtime_iree*.py`) or nothing
# (`codegen/`); `<name>` placeholders are not paths.
PATH = re.compile(r"(?<![\w./<>-])((?:[\w.-]+/)+(?:[\w.*-]+)?)(?![\w/<>-])")
MODULE = re.compile(r"(?<![\w./<>-])([\w-]+\.(?:py|c))\b(?![/<>-])")


def tracked() -> tuple[set[str], set[str]]:
    """The repository's tracked files and their folders (with a trailing /)."""
    files = set(subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                               check=True).stdout.split())
    folders = {"/".join(f.split("/")[:i]) + "/" for f in files for i in range(1, f.count("/") + 1)}
    return files, folders


def missing(document: str, text: str, files: set[str], folders: set[str]) -> list[str]:
    """`document:line: path` for each path or module `text` names that is not in `files`/`folders`."""
    top = {f.split("/")[0] for f in files if "/" in f} | {"xrelay"}
    names = {f.rsplit("/", 1)[-1] for f in files}
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for path in PATH.findall(line):
            path = path.rstrip(".")
            if path.split("/")[0] not in top:
                continue  # a reader's folder (my_passes/), a URL's tail
            candidates = {path, path + "/", path.removeprefix("xrelay/"), path.removeprefix("xrelay/") + "/"}
            if not any(fnmatch.filter(files | folders, candidate) for candidate in candidates):
                found.append(f"{document}:{number}: {path}")
        found += [f"{document}:{number}: {name}" for name in MODULE.findall(line) if name not in names]
    return found


def documents() -> list[str]:
    """The tracked Markdown files but docs/writing-a-pass.md, whose paths are in the reader's package."""
    listed = subprocess.run(["git", "ls-files", "*.md"], cwd=REPO, capture_output=True, text=True, check=True)
    return [d for d in listed.stdout.split() if d != "docs/writing-a-pass.md"]


@pytest.mark.parametrize("document", documents())
def test_every_path_a_document_names_exists(document):
    assert missing(document, (REPO / document).read_text(), *tracked()) == []


def test_the_check_finds_what_is_missing():
    files = {"runtime/plan.py", "codegen/c_source.py"}
    folders = {"runtime/", "codegen/"}
    text = ("`runtime/plan.py` and runtime/gone.py,\n`codegen/`, `xrelay/codegen/c_source.py`, xrelay/lost/, "
            "my_passes/x.py,\n`plan.py` and gone.py, `passes/<name>.py`, `runtime/pl*.py`, runtime/x*.py")
    assert missing("d.md", text, files, folders) == ["d.md:1: runtime/gone.py", "d.md:2: xrelay/lost/",
                                                     "d.md:3: runtime/x*.py", "d.md:3: gone.py"]
