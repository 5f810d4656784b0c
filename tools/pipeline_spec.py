"""`xrelay-opt -p`'s pipeline text to pass instances: `parse_pipeline` reports unknown passes, passes that
fail to load and bad options at their place in the pipeline text (`pass-pipeline:1:COL: error: ...`);
a renamed pass's former name still works (`FORMER_PASS_NAMES`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import PipelineLexer, SpecTokenKind, _parse_spec

from xrelay.pass_base import FORMER_PASS_NAMES, XRELAY_PASSES
from xrelay.passes import load_all_passes
from xrelay.tools.diagnostics import ToolError, did_you_mean, error_at_span


def load_pass_class(available: dict[str, Callable[[], type[ModulePass]]], name: str, where: str) -> type[ModulePass]:
    """`available[name]()`; a plugin's pass that fails to load (or two plugins defining the name
    differently) is a ToolError naming `where`."""
    try:
        return available[name]()
    except Exception as error:  # noqa: BLE001 - a plugin's import or class lookup can raise anything
        raise ToolError(f"cannot load pass '{name}' ({where}): {type(error).__name__}: {error}") from None


def parse_pipeline(spec: str, available: dict[str, Callable[[], type[ModulePass]]]) -> list[ModulePass]:
    """Instantiate the passes of an `-p` pipeline; unknown passes and bad options are reported at their
    place in the pipeline text (`pass-pipeline:1:COL: error: ...`)."""
    passes: list[ModulePass] = []
    lexer = PipelineLexer(spec)
    while lexer.peek().kind is not SpecTokenKind.EOF:
        name_span = lexer.peek().span
        pass_spec = _parse_spec(lexer)
        if pass_spec.name not in available:
            load_all_passes()  # registering a pass records its former names
            if pass_spec.name in FORMER_PASS_NAMES:
                pass_spec = dataclasses.replace(pass_spec, name=FORMER_PASS_NAMES[pass_spec.name])
            elif pass_spec.name in XRELAY_PASSES:  # a pass PASS_MODULES misses (test_pass_registry names it)
                available[pass_spec.name] = lambda cls=XRELAY_PASSES[pass_spec.name]: cls
        if pass_spec.name not in available:
            raise error_at_span(
                name_span, f"unknown pass '{pass_spec.name}'{did_you_mean(pass_spec.name, list(available))}"
            )
        try:
            pass_class = available[pass_spec.name]()
        except Exception as error:  # noqa: BLE001 - a plugin that fails to import
            raise error_at_span(name_span, f"cannot load pass '{pass_spec.name}': {type(error).__name__}: {error}")
        try:
            passes.append(pass_class.from_pass_spec(pass_spec))
        except (ValueError, TypeError) as error:
            raise error_at_span(name_span, f"invalid options for pass '{pass_spec.name}': {error}") from None
        separator = lexer.lex()
        if separator.kind is SpecTokenKind.EOF:
            break
        if separator.kind is not SpecTokenKind.COMMA:
            raise error_at_span(separator.span, "invalid pass pipeline: expected ',' between passes")
    return passes
