"""ONNX Einsum as transposes, reshapes, sums and nn.batch_matmul: against ONNX Runtime and numpy's
einsum at the nn, linalg, memref and loops levels and through IREE; what it cannot express is one
message naming the node."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx_models import close, iree_against_onnxruntime, model, run_onnxruntime
from op_levels import LEVELS

from xrelay.frontend import from_onnx
from xrelay.frontend.onnx import OnnxImportError
from xrelay.lowering import lower
from xrelay.runtime import run
from xrelay.runtime.iree import backend as iree_backend

RNG = np.random.default_rng(44)

CASES = {
    "matmul": ("ij,jk->ik", [(3, 4), (4, 5)]),
    "batched": ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    "attention_scores": ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    "attention_values": ("bhqk,bhkd->bqhd", [(2, 3, 4, 6), (2, 3, 6, 5)]),
    "transpose": ("ij->ji", [(3, 4)]),
    "sum_all": ("ij->", [(3, 4)]),
    "dot": ("i,i->", [(5,), (5,)]),
    "outer": ("i,j->ij", [(3,), (4,)]),
    "ellipsis_broadcast": ("...ij,...jk->...ik", [(2, 1, 3, 4), (2, 3, 4, 5)]),
    "implicit_output": ("kj,ji", [(3, 4), (4, 5)]),
    "three_operands": ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 6)]),
    "relative_position": ("bhwc,hkc->bhwk", [(2, 3, 4, 5), (3, 6, 5)]),
    "summed_in_one_operand": ("ijk,ik->j", [(2, 3, 4), (2, 4)]),
}


def _case(name):
    equation, shapes = CASES[name]
    inputs = {f"x{i}": RNG.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
    node = helper.make_node("Einsum", list(inputs), ["y"], equation=equation)
    return model([node], {n: a.shape for n, a in inputs.items()}, ["y"], opset=12), inputs, equation


@pytest.mark.parametrize("name", sorted(CASES))
def test_einsum_matches_onnxruntime_and_numpy_at_every_level(name):
    proto, inputs, equation = _case(name)
    (expected,) = run_onnxruntime(proto, inputs)
    assert close(np.einsum(equation, *inputs.values()), expected, rtol=1e-5)
    module, params = from_onnx(proto)
    assert "nn.einsum" not in str(module)
    for level in ("nn",) + LEVELS:
        got = run(module if level == "nn" else lower(module, to=level), inputs, params)
        assert close(got, expected, rtol=1e-5), level


def test_attention_scores_are_one_batch_matmul_without_transposes():
    proto, _, _ = _case("attention_scores")
    module, _ = from_onnx(proto)
    ops = [op.name for op in module.walk() if op.name.startswith("nn.")]
    assert ops == ["nn.reshape", "nn.reshape", "nn.batch_matmul", "nn.reshape"]


@pytest.mark.slow  # one IREE compilation: 9-50 s on the shared machine
@pytest.mark.skipif(not iree_backend.available(), reason="IREE is not installed (the 'iree' extra)")
def test_every_einsum_through_iree_matches_onnxruntime():
    cases = {name: _case(name)[:2] for name in sorted(CASES)}
    for name, got, expected in iree_against_onnxruntime(cases):
        assert close(got, expected, rtol=1e-5), name


@pytest.mark.parametrize("equation, shapes, message", [
    ("ii->i", [(3, 3)], "an index repeated within one operand (a diagonal) is not supported"),
    ("ij,jk->ik", [(3, 4), (5, 6)], "index 'j' has sizes 4 and 5 in the two operands"),
    ("ij->k", [(3, 4)], "output index 'k' is not one input index"),
    ("ijk->i", [(3, 4)], "term 'ijk' names 3 indices of a rank-2 input"),
    ("ij,jk->ik", [(3, 4)], "has 2 operand terms for 1 inputs"),
])
def test_what_einsum_cannot_express_is_one_message_naming_the_node(equation, shapes, message):
    inputs = {f"x{i}": s for i, s in enumerate(shapes)}
    node = helper.make_node("Einsum", list(inputs), ["y"], equation=equation, name="mix")
    with pytest.raises(OnnxImportError, match=r"node 'mix' \(Einsum\): .*" + message.replace("(", r"\(").replace(
            ")", r"\)")):
        from_onnx(model([node], inputs, ["y"], opset=12))
