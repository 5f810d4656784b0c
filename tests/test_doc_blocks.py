"""tests/doc_blocks.py finds a document's blocks and runs its commands as written."""

from doc_blocks import code_blocks, commands, run_command, run_python

DOC = """\
# Title

    xrelay-opt --version                    # a comment
    python -c "print('a # not a comment')"

Text with an indented continuation
    that is not a block.

```python
x = 1 + 1
assert x == 2
```

```
plain fence
```
"""


def test_blocks_kinds_lines_and_text():
    blocks = code_blocks(DOC)
    assert [(b.kind, b.line) for b in blocks] == [("commands", 3), ("python", 10), ("", 15)]
    assert blocks[1].text == "x = 1 + 1\nassert x == 2\n"
    assert blocks[2].text == "plain fence\n"


def test_commands_split_like_a_shell_and_expand_variables():
    block = code_blocks("\n    tool -p $P 'x # y'  # note\n\n    other\n")[0]
    found = commands(block, {"P": "a,b"})
    assert [c.argv for c in found] == [["tool", "-p", "a,b", "x # y"], ["other"]]
    assert [c.line for c in found] == [2, 4]


def test_commands_run_in_process_and_as_subprocesses():
    first, second = commands(code_blocks(DOC)[0])
    version = run_command(first.argv)
    assert version.returncode == 0 and version.stdout.startswith("xrelay-opt")
    printed = run_command(second.argv)
    assert (printed.returncode, printed.stdout) == (0, "a # not a comment\n")
    shell = run_command(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (shell.returncode, shell.stdout, shell.stderr) == (3, "out\n", "err\n")


def test_python_blocks_run_as_main():
    run_python("assert __name__ == '__main__'\n")
