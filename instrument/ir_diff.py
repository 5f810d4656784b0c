"""IRDiff: a unified diff (difflib) of the printed IR for every pass that changed it.

    // -----// IR Diff FoldConstant (depth 1) //----- //
    --- before FoldConstant
    +++ after FoldConstant
    @@ -3,5 +3,4 @@
    ...

Constants with more than `max_constant_elements` elements (default 16) print as a digest
(`dense_resource<__elided_3f2a9c0b1d4e__>`), so a changed weight shows as one changed line instead of
megabytes of hex; pass None to diff the full text.
"""

from __future__ import annotations

import difflib
import sys
from typing import IO, Any

from xrelay.instrument.nesting import NestingInstrument, PassFrame
from xrelay.instrument.print_ir import module_changed, module_text

_CACHED_TEXTS = 4


def unified_ir_diff(before_text: str, after_text: str, name: str, context_lines: int = 3) -> str:
    """The unified diff of two IR texts, labelled `before NAME` / `after NAME`, each line ending in a newline."""
    lines = difflib.unified_diff(
        before_text.splitlines(),
        after_text.splitlines(),
        fromfile=f"before {name}",
        tofile=f"after {name}",
        n=context_lines,
        lineterm="",
    )
    return "".join(line + "\n" for line in lines)


class IRDiff(NestingInstrument):
    """Prints (on `stream`, default stderr) and records in `diffs` the IR diff of every pass that
    changed the IR: `diffs` is `[(depth, pass name, unified diff text), ...]` in the order passes
    finish. `print_diffs=False` only records."""

    def __init__(
        self,
        stream: IO[str] | None = None,
        *,
        context_lines: int = 3,
        max_constant_elements: int | None = 16,
        print_diffs: bool = True,
    ) -> None:
        super().__init__()
        self.stream = stream
        self.context_lines = context_lines
        self.max_constant_elements = max_constant_elements
        self.print_diffs = print_diffs
        self.diffs: list[tuple[int, str, str]] = []
        # Texts of the last few modules printed, by identity: the module one pass returns is the next
        # one's input, and a nested pass's result is often its parent's result too.
        self._texts: dict[int, tuple[Any, str]] = {}

    def _text(self, mod: Any) -> str:
        cached = self._texts.get(id(mod))
        if cached is not None and cached[0] is mod:
            return cached[1]
        text = module_text(mod, self.max_constant_elements)
        self._texts[id(mod)] = (mod, text)
        if len(self._texts) > _CACHED_TEXTS:
            del self._texts[next(iter(self._texts))]
        return text

    def enter_pass_ctx(self) -> None:
        super().enter_pass_ctx()
        self.diffs = []
        self._texts.clear()

    def exit_pass_ctx(self) -> None:
        self._texts.clear()

    def left(self, frame: PassFrame, mod: Any) -> None:
        name = frame.info.name
        if not module_changed(frame.received, mod):
            return
        diff = unified_ir_diff(self._text(frame.received), self._text(mod), name, self.context_lines)
        if not diff:  # a change the printed form does not show
            return
        self.diffs.append((frame.depth, name, diff))
        if self.print_diffs:
            stream = sys.stderr if self.stream is None else self.stream
            stream.write(f"// -----// IR Diff {name} (depth {frame.depth}) //----- //\n{diff}\n")
            stream.flush()
