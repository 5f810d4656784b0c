"""The `xdsl.universe` entry point: lets the stock `xdsl-opt` load the nn dialect and xrelay's passes.

Only xrelay's own passes (`ALL_PASSES`, each loaded when used): a plugin's pass belongs to the plugin's
universe, even when the plugin registered it with `@register_xrelay_pass` before this module was imported.
`load_everything` imports what the lower layers' registries hold (`xrelay.plugins.load_plugins` calls it)."""

from xdsl.universe import Universe

from xrelay import plugins
from xrelay.passes import ALL_PASSES


def _nn_dialect():
    from xrelay.dialects.nn import NN

    return NN


def load_everything() -> None:
    """Import every pass and lowering (they register themselves) and the native loops executor."""
    from xrelay.codegen import program  # noqa: F401 - registers the native loops executor
    from xrelay.passes import load_all_passes

    load_all_passes()


plugins.on_load_plugins(load_everything)
XRELAY_UNIVERSE = Universe(all_dialects={"nn": _nn_dialect}, all_passes=dict(ALL_PASSES))
