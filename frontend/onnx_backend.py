"""xrelay as an ONNX backend (`onnx.backend.base.Backend`), so ONNX's own conformance runner
`onnx.backend.test.BackendTest` runs against it, as it does against ONNX Runtime:

    import onnx.backend.test
    from xrelay.frontend.onnx_backend import XrelayBackend
    globals().update(onnx.backend.test.BackendTest(XrelayBackend, __name__).test_cases)

`prepare` imports the model with `from_onnx`, binds its weights (`bind_params_by_name`) and lowers
it to `level` ("nn", the default, or "linalg", "memref", "loops"); `run` executes with `runtime.run`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from xrelay.frontend.bind_params import bind_params_by_name
from xrelay.frontend.onnx import from_onnx


class XrelayBackendRep(BackendRep):
    """A model imported and prepared by xrelay; `run(inputs)` returns its outputs in graph order."""

    def __init__(self, module, input_names: Sequence[str], output_names: Sequence[str]):
        self.module = module
        self.input_names = list(input_names)
        self.output_names = list(output_names)

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        from xrelay.runtime import run

        if isinstance(inputs, Mapping):
            feeds = dict(inputs)
        else:
            if isinstance(inputs, np.ndarray):
                inputs = [inputs]
            if len(inputs) != len(self.input_names):
                raise ValueError(f"the model takes {len(self.input_names)} input(s) {self.input_names}, "
                                 f"got {len(inputs)}")
            feeds = dict(zip(self.input_names, inputs))
        outputs = run(self.module, feeds)
        outputs = outputs if isinstance(outputs, list) else [outputs]
        return namedtupledict("Outputs", self.output_names)(*outputs)


class XrelayBackend(Backend):
    """ONNX's backend interface over xrelay (CPU only)."""

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", level: str = "nn",
                **kwargs: Any) -> XrelayBackendRep:
        super().prepare(model, device, **kwargs)  # onnx.checker
        module, params = from_onnx(model, shape=kwargs.get("shape"))
        module = bind_params_by_name(module, params)
        if level != "nn":
            from xrelay.lowering import lower

            module = lower(module, to=level)
        initializers = {init.name for init in model.graph.initializer}
        inputs = [i.name for i in model.graph.input if i.name not in initializers]
        return XrelayBackendRep(module, inputs, [o.name for o in model.graph.output])

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return Device(device).type == DeviceType.CPU


prepare = XrelayBackend.prepare
run_model = XrelayBackend.run_model
supports_device = XrelayBackend.supports_device
