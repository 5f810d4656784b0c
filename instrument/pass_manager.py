"""Passes and how they run: PassInfo, Pass, ModulePass/module_pass, Sequential, the registry.

Every pass run goes through `run_pass`, which applies the current PassContext's
instruments exactly as TVM's `Pass::operator()` does (docs/architecture.md §4, items 2–5): `should_run`
on every instrument (ANDed, skipped for required passes), then every `run_before_pass`,
the body, every `run_after_pass`. A vetoed pass returns the module it was given.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from xrelay.instrument.pass_context import InstrumentHooks, PassContext
from xrelay.plugins import load_plugins


@dataclass(frozen=True, slots=True, repr=False)
class PassInfo:
    """A pass's metadata: its `name` (what instruments and required/disabled lists see),
    its `opt_level` (a Sequential runs it iff the context's opt_level is at least this) and
    the names of the passes it `required` (run just before it inside a Sequential).

    `str(info)` and `repr(info)` are TVM's PassInfo text (src/ir/transform.cc ReprPrinter),
    e.g. "The meta data of the pass - pass name: FoldConstant, opt_level: 2, required passes: []\n".
    """

    name: str
    opt_level: int
    required: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"PassInfo: name must be a non-empty str, got {self.name!r}")
        if isinstance(self.opt_level, bool) or not isinstance(self.opt_level, int):
            raise TypeError(f"PassInfo({self.name!r}): opt_level must be an int, got {self.opt_level!r}")
        object.__setattr__(self, "required", _required_names(self.required, f"PassInfo({self.name!r})"))

    def __repr__(self) -> str:
        text = f"The meta data of the pass - pass name: {self.name}, opt_level: {self.opt_level}"
        if not self.required:
            return text + ", required passes: []\n"
        return text + ", required passes: [\n" + "".join(f"{name}, " for name in self.required) + "]\n"


def _required_names(required: Iterable[str] | None, where: str) -> tuple[str, ...]:
    if required is None:
        return ()
    if isinstance(required, str) or not isinstance(required, (list, tuple)):
        raise TypeError(f"{where}: required must be a list/tuple of pass names, got {required!r}")
    for name in required:
        if not isinstance(name, str):
            raise TypeError(f"{where}: required must hold pass names (str), got {name!r}")
    return tuple(required)


class Pass:
    """Base of every pass: `pass_(mod) -> mod` runs the body under `PassContext.current()`.

    Subclasses provide `info` (a PassInfo) and `transform_module(mod, pass_ctx) -> mod`,
    the body. A pass called directly is never filtered by opt level or disabled_pass, and
    its own `info.required` is not resolved (only a Sequential does that).
    """

    __slots__ = ()
    info: PassInfo

    def transform_module(self, mod: Any, pass_ctx: PassContext) -> Any:
        """The pass body: return the module to use next."""
        raise NotImplementedError(f"{type(self).__name__} does not define transform_module")

    def __call__(self, mod: Any) -> Any:
        return run_pass(self, mod, PassContext.current())


def run_pass(pass_: Pass, mod: Any, pass_ctx: PassContext, *, forced_by: str | None = None) -> Any:
    """Run `pass_` on `mod` with `pass_ctx`'s instruments around it (TVM's Pass::operator()).

    `forced_by` says why this run is not optional ("required by X", "InferType after X"); instruments
    read it as `pass_ctx.forced_by` while asked `should_run` (OptBisect does not count such runs)."""
    info = pass_.info
    hooks = pass_ctx._hooks
    if hooks is None:
        return pass_.transform_module(mod, pass_ctx)
    if hooks.should_run and info.name not in pass_ctx._required:
        run = True
        pass_ctx._forced_by = forced_by
        try:
            for should_run in hooks.should_run:
                answer = should_run(mod, info)
                if answer.__class__ is not bool:
                    raise TypeError(_bad_should_run_answer(should_run, answer, info))
                run &= answer  # every instrument is asked, no short-circuit
        finally:
            pass_ctx._forced_by = None
        if not run:
            return mod
    running = pass_ctx._running
    running.append(pass_)
    try:
        if hooks.failed:
            return _run_tracking_failure(pass_, mod, pass_ctx, info, hooks)
        for _, before in hooks.before:
            before(mod, info)
        new_mod = pass_.transform_module(mod, pass_ctx)
        # Re-read: the body may have overridden this context's instruments (TVM reads them again too).
        hooks = pass_ctx._hooks
        if hooks is not None:
            for _, after in hooks.after:
                after(new_mod, info)
        return new_mod
    finally:
        running.pop()


def _run_tracking_failure(
    pass_: Pass, mod: Any, pass_ctx: PassContext, info: PassInfo, hooks: InstrumentHooks
) -> Any:
    """The before/body/after sequence, calling `run_after_pass_failed` if anything raises."""
    phase, position = "before", 0
    try:
        for position, before in hooks.before:
            before(mod, info)
        phase = "body"
        new_mod = pass_.transform_module(mod, pass_ctx)
        phase = "after"
        after_hooks = pass_ctx._hooks
        for position, after in after_hooks.after if after_hooks is not None else ():
            after(new_mod, info)
    except BaseException:
        # Instruments whose run_before_pass completed and whose run_after_pass did not.
        for index, failed in hooks.failed:
            if (
                (phase == "before" and index < position)
                or phase == "body"
                or (phase == "after" and index >= position)
            ):
                failed(mod, info)
        raise
    return new_mod


def _bad_should_run_answer(should_run: Callable[..., Any], answer: object, info: PassInfo) -> str:
    owner = getattr(should_run, "__self__", None)
    who = getattr(owner, "name", None) or type(owner).__name__
    return (
        f"{who}.should_run returned {type(answer).__name__} ({answer!r}) for pass "
        f"'{info.name}'; it must return a bool (True or False)"
    )


class ModulePass(Pass):
    """A pass whose body is a Python function `pass_func(mod, pass_ctx) -> mod`.

    The function must return the module to use next (it may be `mod` itself). It should
    not modify `mod` in place if it can raise afterwards: the caller keeps `mod`.
    """

    def __init__(self, pass_func: Callable[[Any, PassContext], Any], info: PassInfo) -> None:
        if not callable(pass_func):
            raise TypeError(f"ModulePass({info.name!r}): pass_func must be callable, got {pass_func!r}")
        self.pass_func = pass_func
        self.info = info

    def transform_module(self, mod: Any, pass_ctx: PassContext) -> Any:
        new_mod = self.pass_func(mod, pass_ctx)
        if new_mod is None:
            raise TypeError(f"module pass '{self.info.name}' returned None; a pass must return the module")
        return new_mod

    def __repr__(self) -> str:
        return f"Run Module pass: {self.info.name} at the optimization level {self.info.opt_level}"


def _wrap_class_module_pass(pass_cls: type, info: PassInfo) -> type:
    if not callable(getattr(pass_cls, "transform_module", None)):
        raise TypeError(f"module_pass: class {pass_cls.__name__} must define transform_module(self, mod, ctx)")

    class PyModulePass(ModulePass):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            inst = pass_cls(*args, **kwargs)
            super().__init__(inst.transform_module, info)
            self._inst = inst

        def __getattr__(self, name: str) -> Any:
            # Fall back to the wrapped instance's attributes (as TVM does).
            inst = self.__dict__.get("_inst")
            if inst is None:
                raise AttributeError(name)
            return getattr(inst, name)

    functools.update_wrapper(PyModulePass.__init__, pass_cls.__init__)
    PyModulePass.__name__ = pass_cls.__name__
    PyModulePass.__qualname__ = pass_cls.__qualname__
    PyModulePass.__doc__ = pass_cls.__doc__
    PyModulePass.__module__ = pass_cls.__module__
    return PyModulePass


def module_pass(
    pass_func: Callable[..., Any] | type | None = None,
    opt_level: int | None = None,
    name: str | None = None,
    required: Iterable[str] | None = None,
):
    """Decorate `def f(mod, ctx)` into a ModulePass, or a class with
    `transform_module(self, mod, ctx)` into a pass class (instances are passes).

    `opt_level` is mandatory; `name` defaults to the function/class name.
    """
    if opt_level is None:
        raise ValueError("Please provide opt_level for the module pass.")
    required_names = _required_names(required, "module_pass")

    def create_module_pass(pass_arg: Callable[..., Any] | type):
        # Checked before the name is looked up, where TVM would fail on `pass_arg.__name__`.
        if not callable(pass_arg):
            raise TypeError(f"pass_func must be a callable for Module pass, got {pass_arg!r}")
        fname = name if name else getattr(pass_arg, "__name__", None)
        info = PassInfo(fname, opt_level, required_names)
        if isinstance(pass_arg, type):
            return _wrap_class_module_pass(pass_arg, info)
        return ModulePass(pass_arg, info)

    if pass_func is not None:
        return create_module_pass(pass_func)
    return create_module_pass


class Sequential(Pass):
    """Runs `passes` in order; itself a pass (instruments see it, named `name`).

    Each child runs unless disabled_pass names it; a child named in required_pass always
    runs; otherwise it runs iff the context's opt_level >= its opt_level. Before a child
    runs, the passes named in its `info.required` run (via `get_pass`), unfiltered.
    Children may be Pass objects or xDSL ModulePass instances (wrapped with `wrap`).
    """

    def __init__(
        self,
        passes: Iterable[Any] | None = None,
        opt_level: int = 0,
        name: str = "sequential",
        required: Iterable[str] | None = None,
    ) -> None:
        passes = [] if passes is None else passes
        if not isinstance(passes, (list, tuple)):
            raise TypeError(f"Sequential({name!r}): passes must be a list of passes, got {passes!r}")
        self.passes: tuple[Pass, ...] = tuple(
            _as_pass(child, f"Sequential({name!r}) passes[{i}]") for i, child in enumerate(passes)
        )
        self.info = PassInfo(name, opt_level, _required_names(required, f"Sequential({name!r})"))

    def transform_module(self, mod: Any, pass_ctx: PassContext) -> Any:
        for child in self.passes:
            info = child.info
            if not pass_ctx.pass_enabled(info):
                continue
            for required_name in info.required:
                mod = run_pass(get_pass(required_name), mod, pass_ctx, forced_by=f"required by {info.name}")
            mod = run_pass(child, mod, pass_ctx)
        return mod

    def __repr__(self) -> str:
        names = " ".join(child.info.name for child in self.passes)
        return (
            f"Run Sequential pass: {self.info.name} at the optimization level {self.info.opt_level}. "
            f"The passes will be executed are: [{names} ]"
        )


def _as_pass(obj: Any, where: str) -> Pass:
    if isinstance(obj, Pass):
        return obj
    from xrelay.instrument.xdsl_pass import as_pass

    try:
        return as_pass(obj)
    except TypeError:
        raise TypeError(f"{where}: expected a Pass or an xDSL ModulePass, got {obj!r}") from None


# -- registry ------------------------------------------------------------------------------
_REGISTRY: dict[str, Callable[[], Any]] = {}


def register_pass(name: str, factory: Callable[[], Any], *, override: bool = False) -> None:
    """Register `factory() -> Pass` under `name` for `get_pass` (and Sequential's `required`).

    Registering a different factory under a taken name is an error unless `override`.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_pass: name must be a non-empty str, got {name!r}")
    if not callable(factory):
        raise TypeError(f"register_pass({name!r}): factory must be callable, got {factory!r}")
    existing = _REGISTRY.get(name)
    if existing is not None and existing is not factory and not override:
        raise ValueError(f"register_pass: a pass named '{name}' is already registered ({existing!r})")
    _REGISTRY[name] = factory


def registered_pass_names() -> list[str]:
    """The names `get_pass` knows through `register_pass`, sorted."""
    return sorted(registered_passes())


def registered_passes() -> dict[str, Callable[[], Any]]:
    """Every registered name -> its factory (a copy), the built-in passes included."""
    _load_builtin_passes()
    return dict(_REGISTRY)


def _load_builtin_passes() -> None:
    # xrelay's own passes register themselves when their modules are imported; `load_plugins`
    # imports them without this layer naming a module above it (docs/architecture.md §1).
    load_plugins()


def get_pass(name: str) -> Pass:
    """A new instance of the pass registered as `name` (TVM name or pipeline name).

    Falls back to installed plugins' passes (docs/writing-a-pass.md) and to upstream xDSL passes by
    pipeline name (`cse`, `canonicalize`, ...), wrapped as instrumented passes. Unknown names raise
    ValueError.
    """
    factory = _REGISTRY.get(name)
    if factory is None:
        from xrelay.instrument.pass_names import plugin_pass_factory  # it imports this module

        _load_builtin_passes()
        factory = _REGISTRY.get(name) or plugin_pass_factory(name)
    if factory is None:
        from xrelay.instrument.xdsl_pass import upstream_xdsl_pass_factory

        factory = upstream_xdsl_pass_factory(name)
    if factory is None:
        from xrelay.instrument.pass_names import did_you_mean, known_pass_names
        from xrelay.plugins import plugin_pass_errors

        if name in plugin_pass_errors():
            raise ValueError(f"get_pass: cannot load pass '{name}': {plugin_pass_errors()[name]}")
        raise ValueError(f"get_pass: unknown pass '{name}'{did_you_mean(name, known_pass_names())}")
    return _as_pass(factory(), f"get_pass({name!r})")
