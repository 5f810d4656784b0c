"""Imports run one way (docs/architecture.md §1): no module imports a layer above its own, not even
inside a function, except the exceptions that section names with their reason (listed here too)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Bottom to top, as docs/architecture.md §1 draws them.
LAYERS = ["dialects", "runtime", "codegen", "instrument", "pass_base", "lowering", "passes", "frontend", "tools"]

# Modules of the `xrelay/` folder and the layer each belongs to.
ROOT_MODULES = {
    "output_file": "dialects",  # writes files; imports nothing of the project
    "weights_file": "dialects",  # a saved module's weights file; imports dialects/ only
    "plugins": "dialects",  # loads the upper layers through entry points; imports nothing of the project
    "pass_base": "pass_base",
    "transform": "pass_base",  # TVM's names for instrument/ and the pass base
    "universe": "tools",  # the xdsl-opt entry point: every dialect and pass
    "executable": "frontend",  # relay.build: graph passes, lowering, kernel passes and the executable
}

# (file, imported module) -> the reason docs/architecture.md §1 gives. None today: lower layers learn
# about higher ones by registration (xrelay/plugins.py).
EXCEPTIONS: dict[tuple[str, str], str] = {}


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "xrelay" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in LAYERS else ROOT_MODULES.get(parts[1])


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] != "xrelay":
        parts.insert(0, "xrelay")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(tree: ast.AST):
    """(line, module) for every absolute import, at any depth; `from xrelay import passes` gives
    `xrelay.passes`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if layer_of(node.module) is None:
                for alias in node.names:
                    yield node.lineno, f"{node.module}.{alias.name}"
            else:
                yield node.lineno, node.module


def upward_imports():
    found = []
    for folder in [*(name for name in LAYERS if name != "pass_base"), "xrelay"]:
        for path in sorted((ROOT / folder).rglob("*.py")):
            own = layer_of(module_name(path))
            if own is None:  # xrelay/__init__.py: the namespace itself
                continue
            for line, module in imported_modules(ast.parse(path.read_text(), str(path))):
                other = layer_of(module)
                if other is not None and LAYERS.index(other) > LAYERS.index(own):
                    found.append((str(path.relative_to(ROOT)), line, ".".join(module.split(".")[:2]), own, other))
    return found


def test_no_module_imports_a_layer_above_its_own():
    unexpected = [f"{path}:{line}: {own}/ imports {module} ({other}/, a layer above)"
                  for path, line, module, own, other in upward_imports() if (path, module) not in EXCEPTIONS]
    assert unexpected == [], "imports must run downwards (docs/architecture.md §1):\n" + "\n".join(unexpected)


def test_every_listed_exception_is_still_needed():
    seen = {(path, module) for path, _, module, _, _ in upward_imports()}
    assert sorted(set(EXCEPTIONS) - seen) == [], "remove these from EXCEPTIONS and docs/architecture.md §1"


@pytest.mark.parametrize("module, layer", [
    ("xrelay.dialects.ops.window", "dialects"),
    ("xrelay.instrument.reproducer", "instrument"),
    ("xrelay.transform", "pass_base"),
    ("xrelay", None),
    ("numpy", None),
])
def test_layer_of(module, layer):
    assert layer_of(module) == layer


def test_the_check_sees_imports_inside_functions():
    # A planted upward import inside a function, as the numerical bisect once had.
    source = "def seed():\n    from xrelay.frontend.init import xavier_uniform\n"
    assert list(imported_modules(ast.parse(source))) == [(2, "xrelay.frontend.init")]
    assert layer_of("xrelay.frontend.init") == "frontend"
