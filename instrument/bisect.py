"""OptBisect: run only the first N optional passes, like LLVM's `-opt-bisect-limit=N`.

Every pass the PassContext asks `should_run` about is numbered from 1 in the order it is asked (nested
passes too, so the numbers are those of the full pipeline), and runs iff its number is <= `limit`
(a negative limit runs everything). Each decision is printed on stderr:

    BISECT: running pass (1) FoldConstant on module
    BISECT: NOT running pass (5) ConvertLayout on module

Passes in the context's `required_pass` are never asked (TVM) and so never counted or skipped, like
LLVM's required passes. Neither are the pass managers named in `always_run` (default: `sequential`, the
unnamed Sequential a pipeline runs as), so pass (1) is the first real pass. Bisecting a failure: find
the smallest N that still fails; pass (N) is the culprit.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import IO, Any

from xrelay.instrument.pass_instrument import PassInstrument


class OptBisect(PassInstrument):
    """Skips every optional pass after the first `limit` through `should_run`; `decisions` records
    `(number, pass name, ran)` for each pass asked. Entering the context restarts the count."""

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

    def enter_pass_ctx(self) -> None:
        self.decisions = []

    def should_run(self, mod: Any, info: Any) -> bool:
        if info.name in self.always_run:
            return True
        number = len(self.decisions) + 1
        run = self.limit < 0 or number <= self.limit
        self.decisions.append((number, info.name, run))
        if self.print_decisions:
            stream = sys.stderr if self.stream is None else self.stream
            stream.write(f"BISECT: {'running' if run else 'NOT running'} pass ({number}) {info.name} on module\n")
            stream.flush()
        return run
