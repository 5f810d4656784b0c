"""Loading xrelay's upper layers and installed plugins through the `xdsl.universe` entry points.

The passes, lowering and frontend register what lower layers look up (passes in the pass registry,
the IREE backend's lowering). When a lookup misses because nothing has imported them yet, the lower
layer calls `load_plugins`: it loads the installed `xdsl.universe` entry points, as the stock
`xdsl-opt` does (pyproject.toml declares `xrelay.universe`), and imports every pass and lowering
(`xrelay.universe.load_everything`, given to `on_load_plugins`; docs/architecture.md §1). `multiverse` only loads the entry
points: a universe's passes load when used. Other packages' entry points are plugins
(docs/writing-a-pass.md).

One installed plugin must never break the tools for everything else, so `multiverse` merges the
universes as xDSL's `Universe.get_multiverse` does, except that a plugin that fails to load is left
out (listed in `problems`), and a name two universes define fails only when it is used, and only if
their loaders give different classes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from xdsl.universe import Universe

_loaded: dict[str, Any] | None = None
_everything_loaded = False
_full_loaders: list[Callable[[], None]] = []
_problems: list[str] = []
_plugin_passes: dict[str, type] | None = None
_warned = 0
_pass_errors: dict[str, str] = {}

OWN_UNIVERSES = ("xdsl", "xrelay")
"""The entry points of xDSL and xrelay themselves; every other one is a plugin."""

_KINDS = ("all_dialects", "all_passes", "all_targets", "all_frontends")


def load_plugins() -> dict[str, Any]:
    """`universes()`, then, once, every loader given to `on_load_plugins` (xrelay's universe gives
    the one importing every pass and lowering, which register themselves)."""
    global _everything_loaded
    loaded = universes()
    if not _everything_loaded:
        _everything_loaded = True
        for loader in _full_loaders:
            try:
                loader()
            except Exception as error:  # noqa: BLE001 - a broken plugin must not break the tools
                _problems.append(f"loading everything with {loader.__module__}.{loader.__qualname__} failed: "
                                 f"{type(error).__name__}: {error}")
    return loaded


def on_load_plugins(loader: Callable[[], None]) -> None:
    """Have `load_plugins` call `loader`: what a universe imports only when a registry lookup misses
    (its module, loaded as an entry point, stays cheap to import)."""
    _full_loaders.append(loader)


def universes() -> dict[str, Any]:
    """Load the `xdsl.universe` entry points once per process: name -> its Universe. Loading a
    plugin's module runs its `@register_xrelay_pass` decorators; one that fails to load (or is no
    Universe) is left out and described in `problems()`."""
    global _loaded
    if _loaded is None:
        _loaded = {}
        for plugin in sorted(entry_points(group="xdsl.universe"), key=lambda p: p.name):
            try:
                universe = plugin.load()
            except Exception as error:  # noqa: BLE001 - a broken plugin must not break the tools
                _problems.append(f"plugin '{plugin.name}' ({plugin.value}) failed to load: "
                                 f"{type(error).__name__}: {error}")
                continue
            if not isinstance(universe, Universe):
                _problems.append(f"plugin '{plugin.name}' ({plugin.value}) is not an xdsl.universe.Universe")
                continue
            _loaded[plugin.name] = universe
    return _loaded


def problems() -> list[str]:
    """What went wrong loading plugins (one line each), for the tools to warn about."""
    return list(_problems)


def multiverse(*, plugins_only: bool = False) -> Universe:
    """Every installed universe merged (xDSL's and xrelay's too unless `plugins_only`).

    A name defined by several universes maps to a loader that returns the class when all of theirs
    return the same one and otherwise raises ValueError naming the universes, so only a pipeline
    that uses the name fails."""
    loaded = universes()
    merged: dict[str, dict[str, Callable[[], Any]]] = {kind: {} for kind in _KINDS}
    owners: dict[tuple[str, str], list[tuple[str, Callable[[], Any]]]] = {}
    for universe_name, universe in loaded.items():
        if plugins_only and universe_name in OWN_UNIVERSES:
            continue
        for kind in _KINDS:
            for name, loader in getattr(universe, kind).items():
                owners.setdefault((kind, name), []).append((universe_name, loader))
    for (kind, name), defined in owners.items():
        merged[kind][name] = defined[0][1] if len(defined) == 1 else _ambiguous(kind, name, defined)
    return Universe(**merged)


def _ambiguous(kind: str, name: str, defined: list[tuple[str, Callable[[], Any]]]) -> Callable[[], Any]:
    def load() -> Any:
        loaded = [loader() for _, loader in defined]
        if all(item is loaded[0] for item in loaded):
            return loaded[0]
        what = {"all_dialects": "dialect", "all_passes": "pass", "all_targets": "target"}.get(kind, "frontend")
        raise ValueError(f"{what} '{name}' is defined differently by the plugins "
                         f"{', '.join(repr(owner) for owner, _ in defined)}")

    return load


def plugin_pass_classes() -> dict[str, type]:
    """Pipeline name -> class of every pass the installed plugins list, loaded once (importing a
    pass's module runs its `@register_xrelay_pass`). A pass that fails to load is left out; its
    error is in `plugin_pass_errors()`, for whoever asks for it by name."""
    global _plugin_passes
    if _plugin_passes is None:
        _plugin_passes = {}
        for name, load in multiverse(plugins_only=True).all_passes.items():
            try:
                _plugin_passes[name] = load()
            except Exception as error:  # noqa: BLE001 - reported when the name is used
                _pass_errors[name] = f"{type(error).__name__}: {error}"
    return _plugin_passes


def plugin_pass_errors() -> dict[str, str]:
    """Pipeline name -> why the plugin's pass failed to load (after `plugin_pass_classes`)."""
    return dict(_pass_errors)


def warn_problems(prog: str) -> None:
    """Print each plugin problem not printed yet as `prog: warning: ...` on stderr."""
    global _warned
    for line in _problems[_warned:]:
        print(f"{prog}: warning: {line}", file=sys.stderr)
    _warned = len(_problems)
