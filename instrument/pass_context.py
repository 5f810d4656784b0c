"""PassContext: opt level, required/disabled passes, config and the pass instruments.

Semantics are TVM's (docs/architecture.md §4): `with ctx:` enters every instrument then makes `ctx`
current; leaving pops it then exits every instrument; a failure while entering exits the
already-entered instruments in reverse order and clears the list; a failure while exiting
stops there and clears the list. Without any `with`, `PassContext.current()` is a
per-thread default context (opt_level 2, an empty instrument list) that `override_instruments`
can instrument.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from xrelay.instrument.pass_instrument import HOOK_NAMES, PassInstrument, bound_hook

_IndexedHook = tuple[int, Callable[..., Any]]


class InstrumentHooks(NamedTuple):
    """Per-context dispatch table: only the hooks the instruments actually define.

    `before`, `after` and `failed` keep each hook's instrument index, so a failed pass
    can tell which instruments saw `run_before_pass` but not `run_after_pass`.
    """

    should_run: tuple[Callable[..., Any], ...]
    before: tuple[_IndexedHook, ...]
    after: tuple[_IndexedHook, ...]
    failed: tuple[_IndexedHook, ...]


def _build_hooks(instruments: tuple[object, ...]) -> InstrumentHooks | None:
    if not instruments:
        return None
    should_run, before, after, failed = [], [], [], []
    for index, inst in enumerate(instruments):
        if (hook := bound_hook(inst, "should_run")) is not None:
            should_run.append(hook)
        if (hook := bound_hook(inst, "run_before_pass")) is not None:
            before.append((index, hook))
        if (hook := bound_hook(inst, "run_after_pass")) is not None:
            after.append((index, hook))
        if (hook := bound_hook(inst, "run_after_pass_failed")) is not None:
            failed.append((index, hook))
    return InstrumentHooks(tuple(should_run), tuple(before), tuple(after), tuple(failed))


def _as_tuple(value: Iterable[Any] | None, what: str, expected: str) -> tuple[Any, ...]:
    # TVM takes `list(value) if value else []`: any iterable. A str is refused (TVM would split it
    # into characters) and so is a mapping (TVM would keep only its keys).
    if not value:
        return ()
    if isinstance(value, (str, bytes, Mapping)):
        raise TypeError(f"PassContext: {what} must be a list/tuple/set of {expected}, got {value!r}")
    try:
        return tuple(value)
    except TypeError:
        raise TypeError(f"PassContext: {what} must be a list/tuple/set of {expected}, got {value!r}") from None


def _name_list(value: Iterable[str] | None, what: str) -> tuple[str, ...]:
    names = _as_tuple(value, what, "pass names")
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"PassContext: {what} must hold pass names (str), got {name!r}")
    return names


def _resolved(names: tuple[str, ...], what: str) -> frozenset[str]:
    if not names:
        return frozenset()
    from xrelay.instrument.pass_names import resolve_pass_names  # it imports this module

    try:
        return resolve_pass_names(names, what)
    except ValueError as error:
        raise ValueError(f"PassContext: {error}") from None


def _instrument_list(value: Iterable[object] | None) -> tuple[object, ...]:
    instruments = _as_tuple(value, "instruments", "PassInstrument")
    for index, inst in enumerate(instruments):
        # A PassInstrument, or (TVM duck typing) any object with at least one hook method.
        if isinstance(inst, type):
            raise TypeError(f"PassContext: instruments[{index}] is not a PassInstrument: got the class "
                            f"{inst.__name__}; pass an instance: {inst.__name__}()")
        if not isinstance(inst, PassInstrument) and not any(callable(getattr(inst, h, None)) for h in HOOK_NAMES):
            raise TypeError(f"PassContext: instruments[{index}] is not a PassInstrument (it has none of the "
                            f"hooks {', '.join(HOOK_NAMES)}): got {inst!r}")
    return instruments


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.stack: list[PassContext] = []
        self.default: PassContext | None = None


_state = _ThreadState()


class PassContext:
    """The context passes run in: `with PassContext(opt_level=3, instruments=[...]):`.

    `opt_level` (default 2) decides which children of a Sequential run; names in
    `required_pass` always run (and skip `should_run`); names in `disabled_pass` never run
    inside a Sequential; `config` is a free-form dict for passes; `instruments` observe and
    steer every pass run while the context is current.

    A registered pass may be named by either of its names (`simplify-inference` or
    `SimplifyInference`); a name close to a known pass's but no pass's (a typo) is a ValueError with
    a "did you mean"; any other name is kept as the name of an unregistered pass, as TVM does
    (`pass_names.resolve_pass_names`).
    """

    __slots__ = ("_opt_level", "_required_pass", "_disabled_pass", "config", "_required", "_disabled",
                 "_instruments", "_hooks", "_running", "_forced_by")

    def __init__(
        self,
        opt_level: int = 2,
        required_pass: Iterable[str] | None = (),
        disabled_pass: Iterable[str] | None = (),
        instruments: Iterable[object] | None = (),
        config: Mapping[str, Any] | None = None,
    ) -> None:
        if isinstance(opt_level, bool) or not isinstance(opt_level, int):
            raise TypeError(f"PassContext: opt_level must be an int, got {opt_level!r}")
        self._opt_level = opt_level
        self._required_pass = _name_list(required_pass, "required_pass")
        self._disabled_pass = _name_list(disabled_pass, "disabled_pass")
        self._required = _resolved(self._required_pass, "required_pass")
        self._disabled = _resolved(self._disabled_pass, "disabled_pass")
        if config is not None and not isinstance(config, Mapping):
            raise TypeError(f"PassContext: config must be a dict, got {config!r}")
        self.config: dict[str, Any] = dict(config or {})
        self._running: list[Any] = []
        self._forced_by: str | None = None
        self._set_instruments(_instrument_list(instruments))

    @property
    def opt_level(self) -> int:
        """The optimisation level (read-only)."""
        return self._opt_level

    @property
    def required_pass(self) -> tuple[str, ...]:
        """Names of the passes that always run and are not asked `should_run` (read-only)."""
        return self._required_pass

    @property
    def disabled_pass(self) -> tuple[str, ...]:
        """Names of the passes a Sequential never runs (read-only)."""
        return self._disabled_pass

    # -- instruments ---------------------------------------------------------------------
    @property
    def instruments(self) -> list[object] | None:
        """The installed instruments in call order (a new list of the same objects); None only
        after `override_instruments(None)`. The global default context starts with [] as in TVM
        (its `PassContextNode::instruments` is a default-constructed, empty Array)."""
        return None if self._instruments is None else list(self._instruments)

    def _set_instruments(self, instruments: tuple[object, ...] | None) -> None:
        self._instruments = instruments
        self._hooks: InstrumentHooks | None = _build_hooks(instruments or ())

    def _enter_instruments(self) -> None:
        entered: list[object] = []
        try:
            for inst in self._instruments or ():
                if (hook := bound_hook(inst, "enter_pass_ctx")) is not None:
                    hook()
                entered.append(inst)
        except BaseException:
            # TVM: exit the instruments that entered, newest first, then disable instrumentation.
            try:
                for inst in reversed(entered):
                    if (hook := bound_hook(inst, "exit_pass_ctx")) is not None:
                        hook()
            finally:
                self._set_instruments(())
            raise

    def _exit_instruments(self) -> None:
        try:
            for inst in self._instruments or ():
                if (hook := bound_hook(inst, "exit_pass_ctx")) is not None:
                    hook()
        except BaseException:
            self._set_instruments(())
            raise

    def override_instruments(self, instruments: Iterable[object] | None) -> None:
        """Exit the current instruments, install `instruments` and enter them.

        Works on any context, the global default one too. If an old instrument fails to
        exit, the list is cleared and the new one is not installed; if a new one fails to
        enter, the ones already entered exit and the list is cleared.
        """
        new = None if instruments is None else _instrument_list(instruments)
        self._exit_instruments()
        self._set_instruments(new)
        self._enter_instruments()

    # -- scoping -------------------------------------------------------------------------
    def __enter__(self) -> PassContext:
        self._enter_instruments()
        _state.stack.append(self)
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        stack = _state.stack
        if not stack or stack[-1] is not self:
            raise RuntimeError("PassContext: leaving a context that is not the current one")
        stack.pop()
        self._exit_instruments()

    @staticmethod
    def current() -> PassContext:
        """The innermost context entered with `with` on this thread, else the global default."""
        stack = _state.stack
        if stack:
            return stack[-1]
        default = _state.default
        if default is None:
            default = _state.default = PassContext()
        return default

    # -- pass filtering --------------------------------------------------------------------
    def pass_enabled(self, info: Any) -> bool:
        """Whether a Sequential runs a child with this PassInfo (disabled > required > opt level)."""
        name = info.name
        if name in self._disabled:
            return False
        if name in self._required:
            return True
        return self._opt_level >= info.opt_level

    @property
    def running_passes(self) -> tuple[Any, ...]:
        """The instrumented passes running in this context, outermost first: while an instrument's
        `run_before_pass`, `run_after_pass` or `run_after_pass_failed` runs, the last is that pass
        (the instance, with its options: the crash reproducer records them)."""
        return tuple(self._running)

    @property
    def forced_by(self) -> str | None:
        """While instruments are asked `should_run`: why this run cannot be left out, e.g.
        "required by ConvertLayout" (a Sequential runs a child's `required` passes first) or
        "InferType after SimplifyInference" (a pass's nested InferType); None for an optional run.
        OptBisect neither counts nor skips such runs, as LLVM's does not count required passes."""
        return self._forced_by

    def is_required(self, name: str) -> bool:
        """Whether `name` is in required_pass (such passes are not asked `should_run`)."""
        return name in self._required

    def __repr__(self) -> str:
        return (
            f"PassContext(opt_level={self.opt_level}, required_pass={list(self.required_pass)}, "
            f"disabled_pass={list(self.disabled_pass)}, instruments={self.instruments}, "
            f"config={self.config})"
        )
