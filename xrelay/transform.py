"""TVM's `tvm.transform` names for xrelay's pass infrastructure (implemented in `xrelay.instrument`).

`from xrelay import transform` then `transform.PassContext`, `transform.Sequential`,
`transform.module_pass`, `transform.PassInfo`, `transform.Pass`, `transform.get_pass`, ...;
`transform.wrap(xdsl_module_pass)` runs any xDSL ModulePass as an instrumented pass and
`transform.XRelayPass` is the base class of xrelay's own passes.
"""

from xrelay.instrument import (
    ModulePass,
    Pass,
    PassContext,
    PassInfo,
    Sequential,
    get_pass,
    module_pass,
    register_pass,
    registered_pass_names,
    run_pass,
)

_XDSL_NAMES = ("XRelayPass", "register_xrelay_pass", "wrap", "as_pass", "xdsl_context", "WrappedModulePass")

__all__ = [
    "ModulePass",
    "Pass",
    "PassContext",
    "PassInfo",
    "Sequential",
    "get_pass",
    "module_pass",
    "register_pass",
    "registered_pass_names",
    "run_pass",
    *_XDSL_NAMES,
]


def __getattr__(name: str):
    if name in _XDSL_NAMES:
        from xrelay.instrument import xdsl_pass

        return getattr(xdsl_pass, name)
    raise AttributeError(f"module 'xrelay.transform' has no attribute {name!r}")
