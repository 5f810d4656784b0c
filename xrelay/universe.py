"""The `xdsl.universe` entry point: lets the stock `xdsl-opt` load the nn dialect and xrelay's passes."""

from xdsl.universe import Universe

from xrelay.passes import ALL_PASSES


def _nn_dialect():
    from xrelay.dialects.nn import NN

    return NN


XRELAY_UNIVERSE = Universe(all_dialects={"nn": _nn_dialect}, all_passes=dict(ALL_PASSES))
