"""Throw-away plugin packages installed into a temporary `site` directory: each package and its
`.dist-info` (METADATA and an `xdsl.universe` entry point) are written by hand, which is all
`importlib.metadata` needs, so a test puts them on PYTHONPATH without pip, a venv or the network."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

FOLD_DOUBLE_RELU = '''
"""FoldDoubleRelu: relu(relu(x)) is relu(x)."""
from dataclasses import dataclass

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from xrelay.pass_base import PatternPass, register_xrelay_pass


class DoubleRelu(RewritePattern):
    def match_and_rewrite(self, op, rewriter: PatternRewriter) -> None:
        inner = op.operands[0].owner if op.name == "nn.relu" else None
        if getattr(inner, "name", None) == "nn.relu":
            rewriter.replace(op, [], [op.operands[0]])


@register_xrelay_pass("fold-double-relu", opt_level=2)
@dataclass(frozen=True)
class FoldDoubleRelu(PatternPass):
    """Folds relu(relu(x)) into relu(x)."""

    pattern = DoubleRelu
'''

BOOM = '''
"""Boom: raises in `apply` when its option `fail_in` is "apply" (a failure only its options cause)."""
from dataclasses import dataclass

from xrelay.pass_base import XRelayPass, register_xrelay_pass


@register_xrelay_pass("boom")
@dataclass(frozen=True)
class Boom(XRelayPass):
    fail_in: str = "nowhere"

    def apply(self, ctx, op) -> None:
        if self.fail_in == "apply":
            raise RuntimeError("boom in apply")
'''

NOOP = '''
from dataclasses import dataclass

from xrelay.pass_base import XRelayPass, register_xrelay_pass


@register_xrelay_pass("{name}")
@dataclass(frozen=True)
class {cls}(XRelayPass):
    def apply(self, ctx, op) -> None:
        pass
'''

PLAIN_PASS = '''
from dataclasses import dataclass

from xdsl.passes import ModulePass
from xdsl.universe import Universe


@dataclass(frozen=True)
class DupPass(ModulePass):
    name = "dup-pass"

    def apply(self, ctx, op) -> None:
        pass


UNIVERSE = Universe(all_passes={"dup-pass": lambda: DupPass})
'''

PLUGINS: dict[str, dict[str, str]] = {
    # The recommended style: lazy loaders, the pass module imported only when a pass is used.
    "reluplugin": {
        "universe.py": '''
            from xdsl.universe import Universe


            def _fold_double_relu():
                from reluplugin.fold_double_relu import FoldDoubleRelu

                return FoldDoubleRelu


            def _boom():
                from reluplugin.boom import Boom

                return Boom


            UNIVERSE = Universe(all_passes={"fold-double-relu": _fold_double_relu, "boom": _boom})
        ''',
        "fold_double_relu.py": FOLD_DOUBLE_RELU,
        "boom.py": BOOM,
    },
    # Eager: the pass module imported by the entry point, and the pass also listed in the plugin's universe.
    "eagerpass": {
        "universe.py": '''
            from xdsl.universe import Universe

            from eagerpass.noop import NoopEager

            UNIVERSE = Universe(all_passes={"noop-eager": lambda: NoopEager})
        ''',
        "noop.py": NOOP.format(name="noop-eager", cls="NoopEager"),
    },
    # Decorator only: the entry point imports the pass module; its universe lists nothing.
    "decoratedpass": {
        "universe.py": '''
            from xdsl.universe import Universe

            import decoratedpass.noop  # noqa: F401 - registers NoopDecorated

            UNIVERSE = Universe()
        ''',
        "noop.py": NOOP.format(name="noop-decorated", cls="NoopDecorated"),
    },
    # Two plugins defining one pass name differently.
    "dupa": {"universe.py": PLAIN_PASS},
    "dupb": {"universe.py": PLAIN_PASS},
    # A plugin whose entry point cannot be imported.
    "brokenplugin": {"universe.py": "raise ImportError('brokenplugin needs a module nobody has')\n"},
}


def install_plugin(site: Path, name: str) -> Path:
    """Write plugin `name` (a key of PLUGINS) and its .dist-info into `site`; returns `site`."""
    package = site / name
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    for file_name, text in PLUGINS[name].items():
        (package / file_name).write_text(textwrap.dedent(text).lstrip())
    dist_info = site / f"{name}-0.1.dist-info"
    dist_info.mkdir(exist_ok=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (dist_info / "entry_points.txt").write_text(f"[xdsl.universe]\n{name} = {name}.universe:UNIVERSE\n")
    return site


def plugin_env(*sites: Path) -> dict[str, str]:
    """The environment of a process that sees the plugins installed in `sites`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(site) for site in sites)
    env.pop("PYTHONSTARTUP", None)
    return env


def tool(name: str) -> str:
    """The path of a console script of this virtual environment (`xrelay-opt`, `xdsl-opt`)."""
    return str(Path(sys.executable).with_name(name))
