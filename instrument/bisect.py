"""OptBisect: run only the first N optional passes, like LLVM's `-opt-bisect-limit=N`.

Every optional pass the PassContext asks `should_run` about is numbered from 1 in the order it is
asked (nested passes too, so the numbers are those of the full pipeline), and runs iff its number is
<= `limit` (a negative limit runs everything). Each decision is printed on stderr:

    BISECT: running pass (1) FoldConstant on module
    BISECT: NOT running pass (5) ConvertLayout on module

Forced runs are neither counted nor skipped, like LLVM's required passes, and their lines say why:
a pass in the context's `required_pass` (TVM never asks `should_run` about it), a pass a Sequential
runs because a child `required` it, and the InferType a pass runs after itself (`infer_type_after`):

    BISECT: running pass (required) InferType on module
    BISECT: running pass (forced: required by SimplifyInference) InferType on module
    BISECT: running pass (forced: InferType after SimplifyInference) InferType on module

The pass managers named in `always_run` (default: `sequential`, the unnamed Sequential a pipeline
runs as) are not counted or printed, so pass (1) is the first real pass. Bisecting a failure: find
the smallest N that still fails; pass (N) is the culprit.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import IO, Any

from xrelay.instrument.pass_context import PassContext
from xrelay.instrument.pass_instrument import PassInstrument


class OptBisect(PassInstrument):
    """Skips every optional pass after the first `limit` through `should_run`; `decisions` records
    `(number, pass name, ran)` for each optional pass asked, `forced` `(pass name, why)` for each forced
    run. Entering the context restarts the count."""

    def __init__(
        self,
        limit: int,
        stream: IO[str] | None = None,
        *,
        always_run: Iterable[str] = ("sequential",),
        print_decisions: bool = True,
    ) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError(f"OptBisect: limit must be an int, got {limit!r}")
        self.limit = limit
        self.stream = stream
        self.always_run = frozenset(always_run)
        self.print_decisions = print_decisions
        self.decisions: list[tuple[int, str, bool]] = []
        self.forced: list[tuple[str, str]] = []

    def enter_pass_ctx(self) -> None:
        self.decisions = []
        self.forced = []

    def should_run(self, mod: Any, info: Any) -> bool:
        if info.name in self.always_run:
            return True
        forced_by = PassContext.current().forced_by
        if forced_by is not None:
            self._forced(info.name, f"forced: {forced_by}")
            return True
        number = len(self.decisions) + 1
        run = self.limit < 0 or number <= self.limit
        self.decisions.append((number, info.name, run))
        self._print(f"BISECT: {'running' if run else 'NOT running'} pass ({number}) {info.name} on module")
        return run

    def run_before_pass(self, mod: Any, info: Any) -> None:
        # Passes in required_pass are never asked should_run: this is the first this instrument hears.
        if info.name not in self.always_run and PassContext.current().is_required(info.name):
            self._forced(info.name, "required")

    def _forced(self, name: str, why: str) -> None:
        self.forced.append((name, why))
        self._print(f"BISECT: running pass ({why}) {name} on module")

    def _print(self, line: str) -> None:
        if self.print_decisions:
            stream = sys.stderr if self.stream is None else self.stream
            stream.write(line + "\n")
            stream.flush()
