"""The table of ONNX op converters, filled by the `ops_*` modules (one per op family).

A converter turns one ONNX node into nn ops through a `Node` (see `graph.py`) and returns the node's
outputs: SSA values, or numpy arrays for outputs known at import time (shapes, constants), or None
for outputs inference never computes (BatchNormalization's running statistics, Dropout's mask).
`needs` names the nn ops a converter always emits: an op type whose nn ops the dialect does not have
counts as unsupported, so a model needing it fails before any work.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Converter:
    convert: Callable
    needs: tuple[str, ...] = ()


CONVERTERS: dict[str, Converter] = {}
"""ONNX op type -> converter for a node with at least one tensor computed at run time."""



def converter(*op_types: str, needs: tuple[str, ...] = ()) -> Callable:
    """Register `fn(node)` as the converter of these ONNX op types."""

    def register(fn: Callable) -> Callable:
        for op_type in op_types:
            CONVERTERS[op_type] = Converter(fn, needs)
        return fn

    return register


def supported(op_type: str) -> bool:
    """Whether a node of `op_type` computing at run time can be imported with the nn ops the
    dialect has now (nodes evaluated at import need none: `fold.py`)."""
    from xrelay.dialects import nn

    conv = CONVERTERS.get(op_type)
    return conv is not None and all(name in nn.OPS for name in conv.needs)


def has_op(name: str) -> bool:
    """Whether the nn dialect has the op `name` (ops that other work adds are used once they land)."""
    from xrelay.dialects import nn

    return name in nn.OPS


def as_int_list(value: object) -> list[int]:
    return [int(v) for v in np.asarray(value).reshape(-1)]
