"""OpCountDiff: the TVM tutorial's RelayCallNodeDiffer as a library instrument.

For every pass that changes how many times some `nn` op occurs, it records
`(depth, pass name, {op name: count after - count before})`, in the order the passes finish (so a
Sequential comes after its children). `nn.constant`, `func.*` and `builtin.*` ops are not counted —
Relay's CallNode count sees neither constants nor functions.
"""

from __future__ import annotations

from typing import Any

from xrelay.instrument.pass_instrument import PassInstrument


def count_ops(mod: Any) -> dict[str, int]:
    """How many times each `nn` op except `nn.constant` occurs in `mod` (nested regions included)."""
    counts: dict[str, int] = {}
    for op in mod.walk():
        name = op.name
        if name.startswith("nn.") and name != "nn.constant":
            counts[name] = counts.get(name, 0) + 1
    return counts


def op_count_delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    """`after - before` per op name, zero entries left out, keys sorted (the seed's `_diff`)."""
    delta = {name: after.get(name, 0) - before.get(name, 0) for name in sorted(after.keys() | before.keys())}
    return {name: value for name, value in delta.items() if value}


class OpCountDiff(PassInstrument):
    """Records the per-op count change of every pass that changes one; see `get_pass_to_op_diff`.

    Entering the context starts a new record. A pass that raises records nothing (its counts are
    dropped, so the nesting stays balanced).
    """

    def __init__(self) -> None:
        self._op_diff: list[tuple[int, str, dict[str, int]]] = []
        self._before_stack: list[tuple[str, dict[str, int]]] = []

    def enter_pass_ctx(self) -> None:
        self._op_diff = []
        self._before_stack = []

    def exit_pass_ctx(self) -> None:
        self._before_stack = []

    def run_before_pass(self, mod: Any, info: Any) -> None:
        self._before_stack.append((info.name, count_ops(mod)))

    def run_after_pass(self, mod: Any, info: Any) -> None:
        name, before = self._before_stack.pop()
        if name != info.name:
            raise RuntimeError(f"OpCountDiff: pass '{info.name}' finished while '{name}' was running")
        delta = op_count_delta(count_ops(mod), before)
        if delta:
            self._op_diff.append((len(self._before_stack), info.name, delta))

    def run_after_pass_failed(self, mod: Any, info: Any) -> None:
        self._before_stack.pop()

    def get_pass_to_op_diff(self) -> list[tuple[int, str, dict[str, int]]]:
        """`[(depth, pass name, {op name: delta, ...}), ...]` for the passes that changed op counts."""
        return self._op_diff
