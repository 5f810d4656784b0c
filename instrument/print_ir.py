"""PrintIR: print the module before and/or after selected passes, MLIR/LLVM style, on stderr.

    // -----// IR Dump After FoldConstant (depth 1) //----- //
    builtin.module { ... }

A pass is selected by its PassInfo name (`FoldConstant`, `sequential`) or a regular expression that
must match the whole name (`Fold.*`). `depth` is the number of passes running around the pass (0 for a
top-level pass, 1 for a child of a Sequential, 2 for the InferType a function pass runs at its end).

Also the helpers the other power tools share: `module_text` (the printed IR, large constants optionally
elided to a digest) and `module_changed` (whether a pass changed the IR). Passes are functional — they
return a new module and never mutate the one they received — so an instrument may compare the module a
pass received (`frame.received`, instrument/nesting.py) with the one it returned.
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
from collections.abc import Iterable
from io import StringIO
from typing import IO, Any

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import Operation
from xdsl.printer import Printer

from xrelay.instrument.nesting import NestingInstrument, PassFrame


class ElidingPrinter(Printer):
    """xDSL's Printer, except that a dense elements attribute with more than `max_constant_elements`
    elements (and not a splat) prints as `dense_resource<__elided_<digest>__>` — MLIR's elided form
    (`--mlir-elide-elementsattrs-if-larger`) plus the first 12 hex digits of the SHA-1 of its bytes, so
    two dumps still differ exactly where a constant's value differs: an `nn.constant`'s value, and after
    lowering an `arith.constant`'s or a `memref.global`'s. The hex text of the weights is never built,
    which is what makes printing a model with bound weights slow."""

    def __init__(self, *args: Any, max_constant_elements: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_constant_elements = max_constant_elements

    def _elided(self, value: Any) -> str | None:
        if not isinstance(value, DenseIntOrFPElementsAttr):
            return None
        if math.prod(value.type.get_shape()) <= self.max_constant_elements:
            return None
        data = value.data.data
        size = len(data) // max(1, len(value))
        first = data[:size]
        if len(first) == len(data) or (first == data[size : 2 * size] and data == first * (len(data) // size)):
            return None  # a splat prints as one number anyway
        return f"dense_resource<__elided_{hashlib.sha1(data).hexdigest()[:12]}__>"

    def _elided_value(self, op: Operation) -> str | None:
        value = op.attributes.get("value")
        if value is None:
            value = op.properties.get("value")
        return self._elided(value)

    def print_elements_without_type(self, value: DenseIntOrFPElementsAttr) -> None:
        """`value` without its type, elided if large (what a `memref.global` prints)."""
        elided = self._elided(value)
        if elided is None:
            value.print_without_type(self)
        else:
            self.print_string(elided)

    def print_attribute(self, attribute: Any) -> None:
        elided = self._elided(attribute)
        if elided is None:
            super().print_attribute(attribute)
            return
        self.print_string(f"{elided} : ")
        super().print_attribute(attribute.get_type())

    def print_op(self, op: Operation) -> None:
        elided = None
        if op.name == "nn.constant" and not self.print_generic_format:
            elided = self._elided_value(op)
        if elided is None:
            super().print_op(op)
            return
        self._print_results(op)
        self.print_string(f"nn.constant {elided} : ")
        self.print_attribute(op.results[0].type)
        extra = {k: v for k, v in op.attributes.items() if k != "value"}
        if extra:
            self.print_op_attributes(extra)


def module_text(mod: Any, max_constant_elements: int | None = None) -> str:
    """The module printed as `.mlir` text ending in one newline; with `max_constant_elements`, larger
    constants are elided to a digest (see `ElidingPrinter`)."""
    if max_constant_elements is None:
        text = str(mod)
    else:
        out = StringIO()
        ElidingPrinter(stream=out, max_constant_elements=max_constant_elements).print_op(mod)
        text = out.getvalue()
    return text.rstrip("\n") + "\n"


def module_changed(before: Any, after: Any) -> bool:
    """Whether a pass that received `before` and returned `after` changed the IR: not the same object
    and not structurally equivalent (ops, operands, attributes and types; SSA names and locations do
    not count). Cheap: constants share their attribute objects across clones."""
    if after is before:
        return False
    try:
        return not before.is_structurally_equivalent(after)
    except AttributeError:  # not xDSL IR (a test double): fall back to the printed text
        return str(before) != str(after)


def compile_selectors(selectors: Iterable[str] | str | None, what: str) -> tuple[re.Pattern[str], ...]:
    """Pass-name selectors (names or regexes, matched against the whole name) as compiled patterns;
    a comma-separated string is split. A bad regex is a ValueError naming it."""
    if selectors is None:
        return ()
    if isinstance(selectors, str):
        selectors = selectors.split(",")
    patterns = []
    for selector in selectors:
        selector = selector.strip()
        if not selector:
            continue
        try:
            patterns.append(re.compile(selector))
        except re.error as error:
            raise ValueError(f"{what}: '{selector}' is not a valid pass name or regex: {error}") from None
    return tuple(patterns)


def selected(patterns: tuple[re.Pattern[str], ...], name: str) -> bool:
    """Whether any pattern matches the whole pass name."""
    return any(pattern.fullmatch(name) for pattern in patterns)


def dump_header(when: str, name: str, depth: int) -> str:
    """MLIR's dump separator, naming the pass and its depth: `// -----// IR Dump After X (depth 1) //----- //`."""
    return f"// -----// IR Dump {when} {name} (depth {depth}) //----- //"


class PrintIR(NestingInstrument):
    """Prints the IR around selected passes on `stream` (default: stderr at the time of printing).

    `before` / `after`: pass names or regexes; `before_all` / `after_all`: every pass;
    `after_change`: only print an after-dump when the pass changed the IR — alone it means "after every
    pass that changed the IR", with `after`/`after_all` it restricts those; `changed_after`: names or
    regexes of passes to print after only when they changed the IR. `max_constant_elements`
    elides larger constants (None prints them in full, as `str(mod)` does).
    """

    def __init__(
        self,
        before: Iterable[str] | str | None = (),
        after: Iterable[str] | str | None = (),
        *,
        before_all: bool = False,
        after_all: bool = False,
        after_change: bool = False,
        changed_after: Iterable[str] | str | None = (),
        stream: IO[str] | None = None,
        max_constant_elements: int | None = None,
    ) -> None:
        super().__init__()
        self.before = compile_selectors(before, "PrintIR before")
        self.after = compile_selectors(after, "PrintIR after")
        self.before_all = before_all
        self.after_all = after_all
        self.after_change = after_change
        self.changed_after = compile_selectors(changed_after, "PrintIR changed_after")
        self.stream = stream
        self.max_constant_elements = max_constant_elements

    def _print(self, when: str, mod: Any, name: str, depth: int) -> None:
        stream = sys.stderr if self.stream is None else self.stream
        stream.write(dump_header(when, name, depth) + "\n")
        stream.write(module_text(mod, self.max_constant_elements) + "\n")
        stream.flush()

    def _prints_after(self, name: str) -> bool:
        if self.after_all or selected(self.after, name):
            return True
        # --print-ir-after-change alone: every pass (that changed the IR).
        return self.after_change and not self.after

    def entered(self, frame: PassFrame) -> None:
        name = frame.info.name
        if self.before_all or selected(self.before, name):
            self._print("Before", frame.received, name, frame.depth)

    def left(self, frame: PassFrame, mod: Any) -> None:
        name = frame.info.name
        if selected(self.changed_after, name):
            if module_changed(frame.received, mod):
                self._print("After", mod, name, frame.depth)
            return
        if not self._prints_after(name):
            return
        if self.after_change and not module_changed(frame.received, mod):
            return
        self._print("After", mod, name, frame.depth)
