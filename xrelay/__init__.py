"""xrelay: a neural-network compiler prototype on xDSL with TVM-style pass instruments.

Importing `xrelay` is cheap: the subpackages load on first attribute access
(`xrelay.transform`, `xrelay.passes`, ...) or with `from xrelay import transform`.
"""

import importlib

_SUBMODULES = (
    "transform",
    "instrument",
    "dialects",
    "passes",
    "lowering",
    "runtime",
    "frontend",
    "tools",
)

__all__ = [*_SUBMODULES, "build", "Executable"]


def __getattr__(name: str):
    if name in ("build", "Executable"):  # TVM's relay.build (xrelay/executable.py)
        return getattr(importlib.import_module("xrelay.executable"), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"xrelay.{name}")
    raise AttributeError(f"module 'xrelay' has no attribute {name!r}")
