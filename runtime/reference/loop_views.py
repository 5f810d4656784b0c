"""How the loops executor (`loops_exec`) sees memrefs: every memref is a flat numpy array of its
element type, viewed with its type's shape and strides where whole arrays are needed (a raised
nest's operands, `_shaped`) and indexed through element positions where a subview is copied
(`flat_positions`).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import MemRefType, StridedLayoutAttr


def _view_spec(mtype: MemRefType) -> tuple:
    """(shape, element strides, offset) of a memref type: row-major for the identity layout, the
    layout's own for a subview (a strided window of its buffer's flat array)."""
    shape = tuple(mtype.get_shape())
    if isinstance(mtype.layout, StridedLayoutAttr):
        return shape, tuple(mtype.get_strides()), mtype.get_offset()
    return shape, None, 0


def _view(flat: np.ndarray, spec: tuple) -> np.ndarray:
    shape, strides, offset = spec
    if strides is None:
        return flat.reshape(shape)
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(flat[offset:], shape, tuple(st * item for st in strides))


def _shaped(raised, specs):
    """`raised.run` called on flat arrays, each viewed as its memref type says (`_view_spec`); the
    view of an array seen last time is reused, so constant weights stay the same object (their
    Winograd transform is cached on it)."""
    seen: list = [None] * len(specs)

    def run(*flats):
        arrays = []
        for i, (flat, spec) in enumerate(zip(flats, specs)):
            if seen[i] is None or seen[i][0] is not flat:
                seen[i] = (flat, _view(flat, spec))
            arrays.append(seen[i][1])
        raised.run(arrays)

    return run



def flat_positions(mtype: MemRefType) -> np.ndarray:
    """The positions in its buffer's flat array of every element of a memref, in row-major order
    (a subview's come from its strided layout)."""
    shape = tuple(mtype.get_shape())
    if isinstance(mtype.layout, StridedLayoutAttr):
        strides, offset = mtype.get_strides(), mtype.get_offset()
    else:
        strides, offset = tuple(int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape))), 0
    positions = np.full(shape, offset, dtype=np.int64)
    for axis, (size, stride) in enumerate(zip(shape, strides, strict=True)):
        positions += (np.arange(size, dtype=np.int64) * stride).reshape([size if i == axis else 1 for i in range(len(shape))])
    return positions.reshape(-1)

