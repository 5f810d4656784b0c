"""docs/writing-a-pass.md runs as written: its files (headed by their path) make a throw-away package,
installed by writing the `.dist-info` its pyproject.toml describes into a temporary `site` directory
(no pip, no network); then its Python blocks and command lines run in order, in a fresh process that
sees the package (tests/doc_blocks.py), the lit test included."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

from doc_blocks import REPO, code_blocks

GUIDE = REPO / "docs" / "writing-a-pass.md"

RUN_BLOCKS = textwrap.dedent('''
    import sys
    sys.path.insert(0, sys.argv[1])
    from doc_blocks import code_blocks, commands, run_command, run_python

    for block in code_blocks(open(sys.argv[2]).read()):
        if block.kind == "python":
            run_python(block.text, f"writing-a-pass.md:{block.line}")
        elif block.kind == "commands":
            for command in commands(block):
                outcome = run_command(command.argv)
                print(f"$ {command.text}\\n{outcome.stdout}{outcome.stderr}", flush=True)
                if outcome.returncode != 0:
                    sys.exit(f"writing-a-pass.md:{command.line}: exit status {outcome.returncode}")
''')


def write_files(project: Path) -> list[str]:
    """Write every block headed by a path into `project`; returns the paths."""
    written = []
    for block in code_blocks(GUIDE.read_text()):
        language, _, path = block.kind.partition(" ")
        if path:
            (project / path).parent.mkdir(parents=True, exist_ok=True)
            (project / path).write_text(block.text)
            written.append(path)
    (project / "my_passes" / "__init__.py").write_text("")
    return written


def install(project: Path, site: Path) -> None:
    """What `pip install -e .` leaves for importlib.metadata: METADATA and the entry points."""
    metadata = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    dist_info = site / f"{metadata['name'].replace('-', '_')}-{metadata['version']}.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {metadata['name']}\n"
                                        f"Version: {metadata['version']}\n")
    lines = []
    for group, points in metadata["entry-points"].items():
        lines += [f"[{group}]", *(f"{name} = {value}" for name, value in points.items())]
    (dist_info / "entry_points.txt").write_text("\n".join(lines) + "\n")


def test_the_guide_runs_as_written(tmp_path):
    project, site = tmp_path / "my-passes", tmp_path / "site"
    project.mkdir()
    assert set(write_files(project)) == {
        "my_passes/simplify_activations.py", "my_passes/fold_repeated_relu.py", "my_passes/universe.py",
        "pyproject.toml", "model.mlir", "tests/lit.cfg.py", "tests/simplify.mlir",
    }
    install(project, site)
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "PYTHONPATH": f"{project}:{site}",
           "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", RUN_BLOCKS, str(REPO / "tests"), str(GUIDE)], cwd=project,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "failed: nn.relu is not supported" in out and "replayed: nn.relu is not supported" in out
    assert "// -----// IR Dump After SimplifyActivations (depth 1) //----- //" in out
    assert (project / "lowered.mlir").read_text().count("linalg.generic") == 3
