"""One step per `kernel.dispatch`: its members' steps made one, as the kernel's ops say (never by
looking around it). A convolution root runs the epilogue on each block of output rows it finishes
(`conv_epilogue.give_tail`) and writes them into the destination pad (`give_pad`); an epilogue and a
pad without a convolution become one `TailIntoPad`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xrelay.runtime.kernels.conv_epilogue import ConvStep, give_pad, give_tail, tail_into_pad
from xrelay.runtime.executor.pad_step import PadStep, fold_transpose
from xrelay.runtime.executor.plan import FusedTail

if TYPE_CHECKING:
    from xrelay.runtime.executor.linalg_exec import LinalgProgram


def assemble(program: LinalgProgram, start: int, root: str) -> int:
    """Make the steps from `start` on (one kernel's, of `root` kind) one step; returns the index of the
    step that runs it."""
    steps, accesses = program.steps, program.accesses

    def first(kind: type) -> int | None:
        return next((i for i in range(start, len(steps)) if isinstance(steps[i], kind) and i in accesses), None)

    conv, tail, pad = first(ConvStep), first(FusedTail), first(PadStep)
    if root == "transpose" and tail is not None and pad is not None and len(steps[tail].members) == 1:
        fold_transpose(program, tail, steps[pad], pad)
        return pad
    host = conv
    if conv is not None:
        if tail is not None and tail > conv and give_tail(steps, accesses, program.memory, conv, tail):
            host = tail
        if pad is not None and pad > host:
            give_pad(steps, accesses, program.memory, program._slot, host, pad)
    elif tail is not None and pad is not None and pad > tail:
        tail_into_pad(steps, accesses, program.memory, program._slot, tail, pad)
        host = tail
    if host is None:
        host = max((i for i in range(start, len(steps)) if i in accesses), default=len(steps) - 1)
    return host
