"""xrelay.instrument: the pass infrastructure (TVM's `tvm.transform` + `tvm.ir.instrument`).

PassContext, PassInfo, Pass, ModulePass/module_pass, Sequential, the pass registry,
PassInstrument/pass_instrument, NestingInstrument (the stack of running passes every built-in
instrument keeps) and PassTimingInstrument. The xDSL-facing pieces
(`wrap`, `as_pass`, `xdsl_context`) load xDSL on first use; the base of xrelay's own passes is
`xrelay/pass_base.py`.
"""

from xrelay.instrument.nesting import NestingInstrument, PassFrame
from xrelay.instrument.pass_context import PassContext  # noqa: F401 - in __all__ through TRANSFORM_NAMES
from xrelay.instrument.pass_instrument import PassInstrument, pass_instrument
from xrelay.instrument.pass_manager import (  # noqa: F401 - in __all__ through TRANSFORM_NAMES
    ModulePass,
    Pass,
    PassInfo,
    Sequential,
    get_pass,
    module_pass,
    register_pass,
    registered_pass_names,
    run_pass,
)
from xrelay.instrument.timing import PassTimingInstrument

_XDSL_NAMES = ("wrap", "as_pass", "xdsl_context", "WrappedModulePass")

TRANSFORM_NAMES = (
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
)
"""The pass-infrastructure names `xrelay.transform` gives under TVM's `tvm.transform` spelling."""

__all__ = [
    *TRANSFORM_NAMES,
    "NestingInstrument",
    "PassFrame",
    "PassInstrument",
    "PassTimingInstrument",
    "pass_instrument",
]


def __getattr__(name: str):
    if name in _XDSL_NAMES:
        from xrelay.instrument import xdsl_pass

        return getattr(xdsl_pass, name)
    raise AttributeError(f"module 'xrelay.instrument' has no attribute {name!r}")


# The power tools of docs/architecture.md §7 (they load xDSL), imported on first use.
_TOOLS = {
    "PrintIR": "print_ir",
    "IRDiff": "ir_diff",
    "ChromeTraceInstrument": "trace",
    "OpCountDiff": "op_count",
    "CrashReproducer": "reproducer",
    "run_reproducer": "reproducer",
    "OptBisect": "bisect",
    "NumericalBisect": "numerical_bisect",
    "PassMemoryInstrument": "memory",
    "PassStatisticsInstrument": "statistics",
    "Statistic": "statistics",
    "PatternTrace": "pattern_trace",
    "PipelineReport": "pipeline_report",
}
__all__ += list(_TOOLS)
_infrastructure_getattr = __getattr__


def __getattr__(name: str):
    if name in _TOOLS:
        import importlib

        return getattr(importlib.import_module(f"xrelay.instrument.{_TOOLS[name]}"), name)
    return _infrastructure_getattr(name)
