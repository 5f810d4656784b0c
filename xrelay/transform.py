"""TVM's `tvm.transform` names for xrelay's pass infrastructure (implemented in `xrelay.instrument`).

`from xrelay import transform` then `transform.PassContext`, `transform.Sequential`,
`transform.module_pass`, `transform.PassInfo`, `transform.Pass`, `transform.get_pass`, ...;
`transform.wrap(xdsl_module_pass)` runs any xDSL ModulePass as an instrumented pass and
`transform.XRelayPass` (from `xrelay/pass_base.py`) is the base class of xrelay's own passes.
"""

from xrelay import instrument

_PASS_BASE_NAMES = ("XRelayPass", "register_xrelay_pass")

__all__ = [*instrument.TRANSFORM_NAMES, *_PASS_BASE_NAMES]


def __getattr__(name: str):
    # Looked up on first use (the xDSL-facing names load xDSL), then kept as a module attribute.
    if name in instrument.TRANSFORM_NAMES:
        value = getattr(instrument, name)
    elif name in _PASS_BASE_NAMES:
        from xrelay import pass_base

        value = getattr(pass_base, name)
    else:
        raise AttributeError(f"module 'xrelay.transform' has no attribute {name!r}")
    globals()[name] = value
    return value
