"""OpCountDiff: the TVM tutorial's RelayCallNodeDiffer as a library instrument.

For every pass that changes how many times some `nn` op or `kernel.dispatch` occurs, it records
`(depth, pass name, {op name: count after - count before})`, in the order the passes finish (so a
Sequential comes after its children). `nn.constant`, `func.*` and `builtin.*` ops are not counted —
Relay's CallNode count sees neither constants nor functions; a `kernel.dispatch` is counted so that
kernel formation (passes/kernels) shows in the diff, as Relay's FuseOps shows as new function calls.
"""

from __future__ import annotations

from typing import Any

from xrelay.instrument.nesting import NestingInstrument, PassFrame


def count_ops(mod: Any) -> dict[str, int]:
    """How many times each `nn` op except `nn.constant`, and `kernel.dispatch`, occurs in `mod` (nested
    regions included)."""
    counts: dict[str, int] = {}
    for op in mod.walk():
        name = op.name
        if name.startswith("nn.") and name != "nn.constant" or name == "kernel.dispatch":
            counts[name] = counts.get(name, 0) + 1
    return counts


def op_count_delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    """`after - before` per op name, zero entries left out, keys sorted (the seed's `_diff`)."""
    delta = {name: after.get(name, 0) - before.get(name, 0) for name in sorted(after.keys() | before.keys())}
    return {name: value for name, value in delta.items() if value}


class OpCountDiff(NestingInstrument):
    """Records the per-op count change of every pass that changes one; see `get_pass_to_op_diff`.

    Entering the context starts a new record. A pass that raises records nothing.
    """

    def __init__(self) -> None:
        super().__init__()
        self._op_diff: list[tuple[int, str, dict[str, int]]] = []

    def enter_pass_ctx(self) -> None:
        super().enter_pass_ctx()
        self._op_diff = []

    def entered(self, frame: PassFrame) -> None:
        frame.state = count_ops(frame.received)

    def left(self, frame: PassFrame, mod: Any) -> None:
        delta = op_count_delta(count_ops(mod), frame.state)
        if delta:
            self._op_diff.append((frame.depth, frame.info.name, delta))

    def get_pass_to_op_diff(self) -> list[tuple[int, str, dict[str, int]]]:
        """`[(depth, pass name, {op name: delta, ...}), ...]` for the passes that changed op counts."""
        return self._op_diff
