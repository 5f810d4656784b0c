"""How the loops executor (`loops_exec`) sees memrefs: every memref is a flat numpy array of its
element type, viewed through its type's layout (`static_layouts.layout_of`) where whole arrays are
needed (a raised nest's operands, `_shaped`), and indexed through element positions where a subview
is copied (`flat_positions`).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import MemRefType

from xrelay.runtime.executor.static_layouts import layout_of


def _view(flat: np.ndarray, mtype: MemRefType) -> np.ndarray:
    """The flat array of a memref's buffer seen with the memref's shape, strides and offset."""
    strides, offset = layout_of(mtype)
    return np.lib.stride_tricks.as_strided(flat[offset:], tuple(mtype.get_shape()),
                                           tuple(s * flat.itemsize for s in strides))


def _shaped(raised, types: list[MemRefType]):
    """`raised.run` called on flat arrays, each viewed as its memref type says; the view of an array
    seen last time is reused, so constant weights stay the same object (their Winograd transform is
    cached on it)."""
    seen: list = [None] * len(types)

    def run(*flats):
        for i, (flat, mtype) in enumerate(zip(flats, types)):
            if seen[i] is None or seen[i][0] is not flat:
                seen[i] = (flat, _view(flat, mtype))
        raised.run([view for _, view in seen])

    return run


def flat_positions(mtype: MemRefType) -> np.ndarray:
    """The positions in its buffer's flat array of every element of a memref, in row-major order."""
    strides, offset = layout_of(mtype)
    extent = offset + sum(max(n - 1, 0) * s for n, s in zip(mtype.get_shape(), strides)) + 1
    return _view(np.arange(extent, dtype=np.int64), mtype).reshape(-1)
