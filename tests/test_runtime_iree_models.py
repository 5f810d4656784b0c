"""Whole networks through IREE: ResNet-18 and ResNet-50 (`make test-slow`: compiling the seven
variants of ResNet-18 took 40 s of `make test`'s five minutes; `make test` sends a whole network
through IREE in tests/test_frontend_onnx_zoo_iree.py, the light SqueezeNet) with
parameters bound as constants and as arguments, as built, after the opt-level-3 pipeline
(SimplifyInference, FoldScaleAxis, FoldConstant) and after it ConvertLayout to NHWC/HWIO, each
lowered in its own layout (no conversion by the backend), plus what `backend="iree"` compiles for
the model as built (its own NHWC conversion), compared with the nn level of the model as built
(xrelay's numpy kernels) to 1e-5 of the output's largest magnitude.

The variants of one model are the functions of one module, compiled once (IREE shares the
dispatches they have in common)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, StringAttr
from test_passes_pipeline import randomise_batch_norm_stats

from xrelay import passes, transform
from xrelay.frontend import bind_params_by_name, resnet
from xrelay.runtime.iree import backend as iree_backend
from xrelay.runtime.reference.interpreter import find_main, run

pytestmark = pytest.mark.skipif(not iree_backend.available(), reason="IREE is not installed (the 'iree' extra)")

STAGES = ("as-built", "opt3", "nhwc")
BINDINGS = ("bound", "unbound")
MODELS = {18: (3, 32, 32), 50: (3, 32, 32)}
"""Layers -> input image shape: the smallest input the five stride-2 stages keep at least 1x1."""


@functools.cache
def workload(layers: int):
    """(module, params with non-trivial batch-norm statistics, input, nn-level output)."""
    rng = np.random.RandomState(layers)
    module, params = resnet.get_workload(num_layers=layers, image_shape=MODELS[layers], num_classes=10)
    params = randomise_batch_norm_stats(params, rng)
    data = rng.randn(1, *MODELS[layers]).astype(np.float32)
    return module, params, data, run(module, {"data": data}, params)


def variant(layers: int, binding: str, stage: str):
    """(module, params left as arguments) of one variant of the model."""
    module, params, _, _ = workload(layers)
    if binding == "bound":
        module, params = bind_params_by_name(module, params), {}
    with transform.PassContext(opt_level=3):
        if stage in ("opt3", "nhwc"):
            module = transform.Sequential([passes.SimplifyInference(), passes.FoldScaleAxis(),
                                           passes.FoldConstant()])(module)
        if stage == "nhwc":
            module = transform.Sequential([passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}),
                                           passes.FoldConstant()])(module)
    return module, params


def variant_name(binding: str, stage: str) -> str:
    return f"{binding}_{stage.replace('-', '_')}"


@functools.cache
def compiled_variants(layers: int):
    """(IREE module with one function per variant and `backend_default`, {function: (argument
    names, params)})."""
    functions, arguments = [], {}
    cases = [(variant_name(b, s), *variant(layers, b, s), False) for b in BINDINGS for s in STAGES]
    module, params, _, _ = workload(layers)
    cases.append(("backend_default", module, params, True))
    for name, module, params, channels_last in cases:
        main = find_main(iree_backend.prepare(module, channels_last=channels_last)).clone()
        main.sym_name = StringAttr(name)
        functions.append(main)
        arguments[name] = ([a.name_hint for a in find_main(module).body.block.args], params)
    text = str(ModuleOp(functions))
    # LLVM's generic x86-64 CPU: a third of the host-tuned compile time for the NCHW variants; the
    # host-tuned code is what test_runtime_iree and benchmarks/through_iree.py check.
    return iree_backend.compile_text(text, target_cpu="generic" if layers == 18 else "host"), arguments


def check(layers: int, function: str):
    compiled, arguments = compiled_variants(layers)
    names, params = arguments[function]
    _, _, data, expected = workload(layers)
    (got,) = compiled.call(function, *[data if name == "data" else params[name] for name in names])
    assert got.shape == expected.shape and got.dtype == np.float32
    error = np.max(np.abs(got - expected)) / np.max(np.abs(expected))
    assert error <= 1e-5, f"max error {error:.2e} of the largest magnitude"


def test_variants_are_what_they_say():
    for binding in BINDINGS:
        for stage in STAGES:
            module, params = variant(18, binding, stage)
            assert bool(params) == (binding == "unbound")
            convs = {op.attrs()["data_layout"] for op in module.walk() if op.name == "nn.conv2d"}
            assert convs == ({"NHWC"} if stage == "nhwc" else {"NCHW"})
            assert any(op.name == "nn.batch_norm" for op in module.walk()) == (stage == "as-built")


@pytest.mark.slow
@pytest.mark.parametrize("function", [variant_name(b, s) for b in BINDINGS for s in STAGES] + ["backend_default"])
def test_resnet18_variant_through_iree_matches_the_nn_level(function):
    check(18, function)


@pytest.mark.slow
@pytest.mark.parametrize("function", [variant_name(b, s) for b in BINDINGS for s in STAGES] + ["backend_default"])
def test_resnet50_variant_through_iree_matches_the_nn_level(function):
    check(50, function)
