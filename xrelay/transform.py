"""TVM's `tvm.transform` names for xrelay's pass infrastructure (implemented in `xrelay.instrument`).

`from xrelay import transform` then `transform.PassContext`, `transform.Sequential`,
`transform.module_pass`, `transform.PassInfo`, `transform.Pass`, `transform.get_pass`, ...;
`transform.wrap(xdsl_module_pass)` runs any xDSL ModulePass as an instrumented pass and
`transform.XRelayPass` (from `xrelay/pass_base.py`) is the base class of xrelay's own passes.
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

_XDSL_NAMES = ("wrap", "as_pass", "xdsl_context", "WrappedModulePass")
_PASS_BASE_NAMES = ("XRelayPass", "register_xrelay_pass")

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
    *_PASS_BASE_NAMES,
]


def __getattr__(name: str):
    if name in _XDSL_NAMES:
        from xrelay.instrument import xdsl_pass

        return getattr(xdsl_pass, name)
    if name in _PASS_BASE_NAMES:
        from xrelay import pass_base

        return getattr(pass_base, name)
    raise AttributeError(f"module 'xrelay.transform' has no attribute {name!r}")
