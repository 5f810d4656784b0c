"""Small ONNX models built with `onnx.helper` for the frontend tests, and ONNX Runtime as the reference."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ONNX_DATA = __import__("pathlib").Path(onnx.__file__).parent / "backend" / "test" / "data"
LIGHT_MODELS = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet",
                "squeezenet", "vgg19", "zfnet512")


def model(nodes: Sequence[onnx.NodeProto], inputs: Mapping[str, Sequence[int]], outputs: Sequence[str],
          initializers: Mapping[str, np.ndarray] | None = None, opset: int = 13,
          input_types: Mapping[str, int] | None = None) -> onnx.ModelProto:
    """A one-graph model; inputs are float32 unless `input_types` says otherwise."""
    input_types = dict(input_types or {})
    graph = helper.make_graph(
        list(nodes), "test",
        [helper.make_tensor_value_info(name, input_types.get(name, TensorProto.FLOAT), list(shape))
         for name, shape in inputs.items()],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
        [numpy_helper.from_array(np.asarray(value), name) for name, value in (initializers or {}).items()],
    )
    ir_version = 7 if opset < 15 else 8
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=ir_version)


def run_onnxruntime(proto: onnx.ModelProto, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, dict(inputs))


def imported_at_every_level(proto: onnx.ModelProto, inputs: Mapping[str, np.ndarray]):
    """(level, `runtime.run`'s result) for `proto` imported by xrelay, run on `inputs` at the nn level
    and lowered to each level (`op_levels.run_at_every_level`)."""
    from op_levels import run_at_every_level

    from xrelay.frontend import from_onnx

    module, params = from_onnx(proto)
    yield from run_at_every_level(module, inputs, params)


def close(actual: np.ndarray, expected: np.ndarray, rtol: float = 1e-4) -> bool:
    """Equal to `rtol` relative to the expected output's largest magnitude."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    scale = max(float(np.max(np.abs(expected))), 1e-30) if expected.size else 1.0
    return actual.shape == expected.shape and bool(np.all(np.abs(actual - expected) <= rtol * scale))


def light_model(name: str) -> onnx.ModelProto:
    return onnx.load(str(ONNX_DATA / "light" / f"light_{name}.onnx"))


def randomised(proto: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """The light model with every weight that a ConstantOfShape fills with 0.02 replaced by a
    deterministic random initializer scaled by its use: He-normal for >= 2-D weights (fan-in = all
    but the first dimension), U(0.5, 1.5) for batch-norm scales and variances and for per-channel
    multipliers, N(0, 0.1) for biases and means. Outputs then stay O(1) through 100+ layers."""
    rng = np.random.default_rng(seed)
    proto = onnx.ModelProto.FromString(proto.SerializeToString())
    graph = proto.graph
    shapes = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    consumers: dict[str, list[tuple[onnx.NodeProto, int]]] = {}
    for node in graph.node:
        for index, name in enumerate(node.input):
            consumers.setdefault(name, []).append((node, index))

    def positive(name: str) -> bool:
        for node, index in consumers.get(name, []):
            if node.op_type == "BatchNormalization" and index in (1, 4):
                return True
            if node.op_type == "Unsqueeze" and any(n.op_type == "Mul" for n, _ in consumers.get(node.output[0], [])):
                return True
        return False

    kept = []
    for node in graph.node:
        if node.op_type == "ConstantOfShape" and node.input[0] in shapes:
            shape = [int(d) for d in shapes[node.input[0]]]
            name = node.output[0]
            if len(shape) >= 2:
                value = rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[1:]))
            elif positive(name):
                value = rng.uniform(0.5, 1.5, shape)
            else:
                value = rng.standard_normal(shape) * 0.1
            graph.initializer.append(numpy_helper.from_array(value.astype(np.float32), name))
        else:
            kept.append(node)
    del graph.node[:]
    graph.node.extend(kept)
    used = {name for node in kept for name in node.input}
    shape_inits = [i for i in graph.initializer if i.name.endswith("__SHAPE") and i.name not in used]
    for init in shape_inits:
        graph.initializer.remove(init)
    # These IR-3 models list initializers as inputs too; from IR 4 on they need not be.
    names = {init.name for init in graph.initializer}
    inputs = [i for i in graph.input if i.name in names or not i.name.endswith("__SHAPE")]
    del graph.input[:]
    graph.input.extend(inputs)
    proto.ir_version = max(proto.ir_version, 4)
    return _calibrated(proto)


def _calibrated(proto: onnx.ModelProto, largest_logit: float = 8.0) -> onnx.ModelProto:
    """Random batch-norm statistics do not normalise, so logits can reach 1e5 and the softmax
    saturate; scale the last Gemm/Conv before the Softmax (through positively homogeneous ops) so
    that the largest logit is `largest_logit` on the test input."""
    graph = proto.graph
    producers = {out: node for node in graph.node for out in node.output}
    softmaxes = [n for n in graph.node if n.op_type == "Softmax"]
    if not softmaxes:  # DenseNet-121 ends in its pooled logits: compared linearly, any magnitude
        return proto
    (softmax,) = softmaxes
    node = producers[softmax.input[0]]
    while node.op_type in ("Reshape", "Flatten", "GlobalAveragePool", "AveragePool", "Relu", "Dropout"):
        node = producers[node.input[0]]
    assert node.op_type in ("Gemm", "Conv"), node.op_type
    probe = onnx.ModelProto.FromString(proto.SerializeToString())
    probe.graph.output.append(helper.make_tensor_value_info(softmax.input[0], TensorProto.FLOAT, None))
    logits = run_onnxruntime(probe, zoo_inputs(proto))[-1]
    scale = largest_logit / float(np.max(np.abs(logits)))
    inits = {init.name: init for init in graph.initializer}
    for name in node.input[1:]:
        while name not in inits:  # Inception v1 reshapes its classifier's weight first
            name = producers[name].input[0]
        init = inits[name]
        init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init) * np.float32(scale), name))
    return proto


def zoo_inputs(proto: onnx.ModelProto) -> dict[str, np.ndarray]:
    """The light models' one image input, uniform in [0, 1) (seeded)."""
    inits = {init.name for init in proto.graph.initializer}
    (name,) = [i.name for i in proto.graph.input if i.name not in inits]
    return {name: np.random.default_rng(1).random((1, 3, 224, 224), dtype=np.float32)}


def iree_against_onnxruntime(cases: Mapping[str, tuple[onnx.ModelProto, Mapping[str, np.ndarray]]]):
    """(name, IREE's output, ONNX Runtime's) for every output of every case (`run_through_iree`)."""
    for name, got in run_through_iree(cases).items():
        proto, inputs = cases[name]
        for g, e in zip(got, run_onnxruntime(proto, inputs), strict=True):
            yield name, g, e


def run_through_iree(cases: Mapping[str, tuple[onnx.ModelProto, Mapping[str, np.ndarray]]]) -> dict[str, list]:
    """Each model imported by `from_onnx`, lowered to linalg and compiled by IREE as one function of
    a single module (one compilation for all), run on its inputs: name -> its outputs."""
    import iree.runtime as ireert
    from xdsl.dialects.builtin import ModuleOp, StringAttr

    from xrelay.dialects.arguments import argument_names
    from xrelay.frontend import from_onnx
    from xrelay.lowering import lower
    from xrelay.runtime.iree import backend as iree_backend

    functions, calls = [], {}
    for name, (proto, inputs) in cases.items():
        module, params = from_onnx(proto)
        (function,) = lower(module, to="linalg").body.block.ops
        calls[name] = [{**inputs, **params}[n] for n in argument_names(function)]
        function.detach()
        function.sym_name = StringAttr(name)
        functions.append(function)
    vmfb = iree_backend.compile_vmfb(str(ModuleOp(functions)))
    context = ireert.SystemContext(config=ireert.Config("local-task"))
    context.add_vm_module(ireert.VmModule.copy_buffer(context.instance, vmfb))
    results = {}
    for name, arguments in calls.items():
        got = context.modules.module[name](*arguments)
        got = list(got) if isinstance(got, list | tuple) else [got]
        results[name] = [np.asarray(g.to_host() if hasattr(g, "to_host") else g) for g in got]
    return results
