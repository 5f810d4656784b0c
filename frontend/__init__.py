"""xrelay.frontend: model builders (`resnet`, `mobilenet`, `tiny`), the `GraphBuilder` they share,
`bind_params_by_name`, and the ONNX importer `from_onnx` (imported on first use: it loads `onnx`)."""

from typing import Any

from xrelay.frontend import mobilenet, resnet, tiny
from xrelay.frontend.bind_params import bind_params_by_name
from xrelay.frontend.builder import GraphBuilder

__all__ = ["GraphBuilder", "bind_params_by_name", "from_onnx", "mobilenet", "resnet", "tiny"]


def __getattr__(name: str) -> Any:
    if name == "from_onnx":
        from xrelay.frontend.onnx import from_onnx

        return from_onnx
    raise AttributeError(f"module 'xrelay.frontend' has no attribute {name!r}")
