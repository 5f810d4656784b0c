"""Loading xrelay's upper layers from a lower one, by registration and never by import.

The passes, lowering and frontend register what lower layers look up (passes in the pass registry,
the IREE backend's lowering). When a lookup misses because nothing has imported them yet, the lower
layer calls `load_plugins`: it loads the installed `xdsl.universe` entry points, as the stock
`xdsl-opt` does, and pyproject.toml declares `xrelay.universe`, which imports every pass and
lowering (docs/architecture.md §1).
"""

from importlib.metadata import entry_points

_loaded = False


def load_plugins() -> None:
    """Load the `xdsl.universe` entry points once per process."""
    global _loaded
    if not _loaded:
        _loaded = True
        for plugin in entry_points(group="xdsl.universe"):
            plugin.load()
