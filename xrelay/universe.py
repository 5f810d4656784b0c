"""The `xdsl.universe` entry point: lets the stock `xdsl-opt` load the nn dialect and xrelay's passes.

Only xrelay's own passes (`ALL_PASSES`): a plugin's pass belongs to the plugin's universe, even when the
plugin registered it with `@register_xrelay_pass` before this module was imported."""

from xdsl.universe import Universe

from xrelay.codegen import program as _native_loops  # noqa: F401 - registers the native loops executor
from xrelay.passes import ALL_PASSES


def _nn_dialect():
    from xrelay.dialects.nn import NN

    return NN


XRELAY_UNIVERSE = Universe(all_dialects={"nn": _nn_dialect}, all_passes=dict(ALL_PASSES))
