"""ONNX files as command-line input: `xrelay-import-onnx`, and `.onnx` models given to `xrelay-opt`
and `xrelay-run`. A model that cannot be imported is one ToolError naming the file."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from xrelay.tools.diagnostics import ToolError


def parse_shapes(specs: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """`--shape NAME=1,3,224,224` (repeatable) -> {NAME: (1, 3, 224, 224)}."""
    shapes: dict[str, tuple[int, ...]] = {}
    for spec in specs:
        name, sep, dims = spec.rpartition("=")
        try:
            shape = tuple(int(d) for d in dims.split(",")) if sep and name else None
        except ValueError:
            shape = None
        if shape is None or any(d <= 0 for d in shape):
            raise ToolError(f"--shape '{spec}': expected NAME=D0,D1,... with positive integer dimensions")
        if name in shapes:
            raise ToolError(f"--shape gives input '{name}' twice")
        shapes[name] = shape
    return shapes


def import_onnx(source: str | bytes, name: str, shapes: dict[str, tuple[int, ...]] | None = None,
                bind: bool = True, progress: Callable[[str], None] | None = None
                ) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """Import an ONNX model (a path, or the bytes of one named `name`); with `bind` the weights
    become `nn.constant`s and the returned params are empty."""
    from xrelay.frontend import bind_params_by_name
    from xrelay.frontend.onnx import OnnxImportError, from_onnx, load_model

    try:
        module, params = from_onnx(load_model(source, name), shape=shapes, progress=progress)
    except OnnxImportError as error:
        raise ToolError(str(error), name) from None
    if bind and params:
        if progress is not None:
            progress("binding weights")
        module, params = bind_params_by_name(module, params), {}
    return module, params
