"""The names passes are asked for by: both names of a registered pass, installed plugins' passes, and a
"did you mean" for a name no pass has (`get_pass`, PassContext's pass lists, xrelay-opt's flags).

A registered pass has a pipeline name (`simplify-inference`) and a TVM name (`SimplifyInference`), and
maybe former names; `pass_aliases` gives them all, so a pass list naming it either way matches its
PassInfo name. A plugin's pass (docs/writing-a-pass.md) registers when its module is imported, which
for a plugin with lazy loaders is the first time one of its passes is asked for.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from typing import Any

from xrelay.instrument.pass_manager import registered_passes


def plugin_pass_factory(name: str) -> Callable[[], Any] | None:
    """The factory of an installed plugin's pass named `name`, loading the plugins' pass classes:
    a pass registered with `@register_xrelay_pass` is then in the registry under both its names; a
    plain xDSL ModulePass a plugin lists is found by its pipeline name and wrapped."""
    from xrelay.plugins import plugin_pass_classes

    classes = plugin_pass_classes()
    factory = registered_passes().get(name)
    if factory is None and name in classes:
        from xrelay.instrument.xdsl_pass import wrap

        cls = classes[name]
        factory = lambda: wrap(cls())  # noqa: E731 - a factory like the others in the registry
    return factory


def known_pass_names() -> list[str]:
    """Every name a pass can be asked for by: registered names (both names of xrelay's and plugins'
    passes), plugins' pipeline names, xDSL's pipeline names, and `sequential`."""
    from xdsl.transforms import get_all_passes

    from xrelay.plugins import plugin_pass_classes

    plugins = plugin_pass_classes()
    return [*registered_passes(), *plugins, *get_all_passes(), "sequential"]


def pass_aliases(name: str) -> tuple[str, ...]:
    """Every name of the registered pass `name` names (`simplify-inference` -> its TVM name
    `SimplifyInference`, former names), `name` first; `(name,)` for a name no registered pass has."""
    registry = registered_passes()
    factory = registry.get(name)
    if factory is None:
        return (name,)
    return (name, *(other for other, f in registry.items() if f is factory and other != name))


def resolve_pass_names(names: Iterable[str], where: str, *, strict: bool = False) -> frozenset[str]:
    """`names` with every alias of each (`pass_aliases`), as PassContext compares PassInfo names.

    A name no pass has is refused with ValueError and a "did you mean" when it is close to a known
    name (a typo would be silent); with `strict` (the command line, where every pass is known) any
    unknown name is refused. Other names are kept: a Python `module_pass` is registered nowhere, and
    TVM takes any name."""
    names = tuple(names)
    if not names:
        return frozenset()
    resolved: set[str] = set()
    known: list[str] | None = None
    for name in names:
        if name not in registered_passes():
            plugin_pass_factory(name)  # a lazily listed plugin pass registers on load
        if name not in registered_passes():
            known = known_pass_names() if known is None else known
            if name not in known:
                hint = did_you_mean(name, known, cutoff=0.6 if strict else 0.8)
                if strict or hint:
                    raise ValueError(f"unknown pass '{name}' in {where}{hint}")
        resolved.update(pass_aliases(name))
    return frozenset(resolved)


def did_you_mean(name: str, known: Iterable[str], cutoff: float = 0.6) -> str:
    known = list(dict.fromkeys(known))
    squashed = {other.replace("-", "").replace("_", "").lower(): other for other in known}
    close = squashed.get(name.replace("-", "").replace("_", "").lower())
    if close is None:
        matches = difflib.get_close_matches(name, known, n=1, cutoff=cutoff)
        close = matches[0] if matches else None
    return f" (did you mean '{close}'?)" if close else ""
