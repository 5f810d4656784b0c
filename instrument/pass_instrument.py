"""PassInstrument: the observer/steering interface a PassContext calls around every pass.

Same contract as TVM's `tvm.ir.instrument`: subclass `PassInstrument` or decorate any class
with `@pass_instrument` (equivalent); hooks a class does not define are no-ops and
`should_run` answers True; an instrument's `name` is its class name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

HOOK_NAMES = (
    "enter_pass_ctx",
    "exit_pass_ctx",
    "should_run",
    "run_before_pass",
    "run_after_pass",
    "run_after_pass_failed",
)


class _ClassName:
    """Non-data descriptor: `inst.name` is the class name unless the instance sets its own."""

    def __get__(self, inst: object, owner: type) -> str:
        return owner.__name__


class PassInstrument:
    """Base class of pass instruments; override only the hooks you need.

    The PassContext calls, for every pass it runs (docs/architecture.md §4):
    `should_run(mod, info)` (must return a bool), then `run_before_pass(mod, info)`,
    the pass body, `run_after_pass(new_mod, info)`; `enter_pass_ctx()` / `exit_pass_ctx()`
    when the context is entered / left (or its instruments are overridden).

    Beyond TVM: `run_after_pass_failed(mod, info)` is called instead of `run_after_pass` on the
    instruments whose `run_before_pass` ran for a pass that then raised (in a later
    `run_before_pass`, the body, or an earlier `run_after_pass`), with the module the pass
    received; it runs while the exception is being handled, so `sys.exception()` is the error.
    It lets stateful instruments (timing stacks, crash reproducers) stay balanced; TVM-style
    instruments simply do not define it.
    """

    name = _ClassName()

    def enter_pass_ctx(self) -> None:
        """Called when the instrumented PassContext is entered."""

    def exit_pass_ctx(self) -> None:
        """Called when the instrumented PassContext is left."""

    def should_run(self, mod: Any, info: Any) -> bool:
        """Return False to skip the pass (no before/after hooks, module returned unchanged)."""
        return True

    def run_before_pass(self, mod: Any, info: Any) -> None:
        """Called before the pass body with the module it will receive."""

    def run_after_pass(self, mod: Any, info: Any) -> None:
        """Called after the pass body with the module it returned."""

    def run_after_pass_failed(self, mod: Any, info: Any) -> None:
        """Called when a pass whose `run_before_pass` ran raised before `run_after_pass`."""

    def __repr__(self) -> str:
        return self.name


_NO_OP_HOOKS = {name: getattr(PassInstrument, name) for name in HOOK_NAMES}


def bound_hook(instrument: object, hook: str) -> Callable[..., Any] | None:
    """The instrument's `hook` as a bound callable, or None when it is absent or the no-op default."""
    method = getattr(instrument, hook, None)
    if method is None:
        return None
    if getattr(method, "__func__", None) is _NO_OP_HOOKS[hook]:
        return None
    return method


def _wrap_class_pass_instrument(pi_cls: type) -> type:
    if issubclass(pi_cls, PassInstrument):
        return pi_cls
    # The user's class comes first in the MRO so its hooks win; PassInstrument fills the rest.
    wrapped = type(
        pi_cls.__name__,
        (pi_cls, PassInstrument),
        {"__doc__": pi_cls.__doc__, "__module__": pi_cls.__module__, "__qualname__": pi_cls.__qualname__},
    )
    return wrapped


def pass_instrument(pi_cls: type | None = None):
    """Class decorator making any class a PassInstrument (same as subclassing PassInstrument).

    Usable bare (`@pass_instrument`) or called (`@pass_instrument()`).
    """

    def create_pass_instrument(cls: type) -> type:
        if not isinstance(cls, type):
            raise TypeError(f"pi_cls must be a class (pass_instrument expected a class, got {type(cls).__name__})")
        return _wrap_class_pass_instrument(cls)

    if pi_cls is not None:
        return create_pass_instrument(pi_cls)
    return create_pass_instrument
