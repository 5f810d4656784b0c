"""nn.scatter_nd against a loop written here at every level (update and add, repeated and negative
positions), and ONNX ScatterND with run-time and import-time indices against ONNX Runtime at the nn,
linalg, memref and loops levels and through IREE."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_models import imported_at_every_level, iree_against_onnxruntime, model, run_onnxruntime
from op_levels import LEVELS, run_lowered, run_nn

from xrelay.frontend import from_onnx
from xrelay.frontend.onnx import OnnxImportError
from xrelay.runtime.iree import backend as iree_backend

RNG = np.random.default_rng(66)
DATA = RNG.standard_normal((4, 3, 2)).astype(np.float32)


def _scatter(data, indices, updates, add):
    """Relay's layout: position j's coordinates are indices[:, j]; updates applied in order."""
    out = data.copy()
    m = indices.shape[0]
    positions = indices.reshape(m, -1)
    values = updates.reshape((positions.shape[1],) + data.shape[m:])
    for j in range(positions.shape[1]):
        where = tuple(int(positions[k, j]) for k in range(m))
        out[where] = out[where] + values[j] if add else values[j]
    return out


NN_CASES = [
    (np.array([[0, 2, -1]]), RNG.standard_normal((3, 3, 2)).astype(np.float32)),
    (np.array([[1, 3], [2, 0]]), RNG.standard_normal((2, 2)).astype(np.float32)),
    (np.array([[1, 1, 3], [2, 2, 0], [0, 0, 1]]), RNG.standard_normal((3,)).astype(np.float32)),  # (1, 2, 0) twice
    (np.array([[[0, 3], [3, 0]]]), RNG.standard_normal((2, 2, 3, 2)).astype(np.float32)),  # positions in a 2x2 grid
]


@pytest.mark.parametrize("level", ("nn",) + LEVELS)
@pytest.mark.parametrize("mode", ("update", "add"))
@pytest.mark.parametrize("case", range(len(NN_CASES)))
def test_nn_scatter_nd_matches_a_loop(case, mode, level):
    indices, updates = NN_CASES[case]
    arrays = [DATA, indices, updates]
    attrs = {"mode": mode}
    got = run_nn("nn.scatter_nd", arrays, attrs) if level == "nn" else run_lowered("nn.scatter_nd", arrays, attrs,
                                                                                     level)
    np.testing.assert_allclose(got, _scatter(DATA, indices, updates, mode == "add"), rtol=1e-6, atol=1e-6)


def test_updates_of_the_wrong_shape_are_named():
    with pytest.raises(Exception, match=r"'updates' \[2, 3\] must be \[3, 3, 2\]"):
        run_nn("nn.scatter_nd", [DATA, np.array([[0, 1, 2]]), np.zeros((2, 3), np.float32)], {})


def _onnx(indices, updates, known, reduction="none"):
    """ONNX's layout: the coordinates last."""
    inputs = {"data": DATA, "updates": updates} | ({} if known else {"indices": indices})
    node = helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"], reduction=reduction)
    proto = model([node], {n: a.shape for n, a in inputs.items()}, ["y"], {"indices": indices} if known else None,
                  opset=16, input_types={"indices": TensorProto.INT64})
    return proto, inputs


CASES = {
    "runtime_indices": lambda: _onnx(np.array([[1], [3]], np.int64), RNG.standard_normal((2, 3, 2)).astype(np.float32),
                                     known=False),
    "known_indices_pairs": lambda: _onnx(np.array([[0, 2], [3, 1]], np.int64),
                                         RNG.standard_normal((2, 2)).astype(np.float32), known=True),
    "runtime_indices_add": lambda: _onnx(np.array([[[2, 1, 0]], [[2, 1, 0]]], np.int64),
                                         RNG.standard_normal((2, 1)).astype(np.float32), known=False,
                                         reduction="add"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_onnx_scatter_nd_matches_onnxruntime_at_every_level(name):
    proto, inputs = CASES[name]()
    (expected,) = run_onnxruntime(proto, inputs)
    for level, got in imported_at_every_level(proto, inputs):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6, err_msg=level)


def test_an_unsupported_reduction_is_named():
    proto, _ = _onnx(np.array([[1]], np.int64), np.ones((1, 3, 2), np.float32), known=True, reduction="mul")
    with pytest.raises(OnnxImportError, match=r"\(ScatterND\): reduction 'mul' is not supported \(none, add\)"):
        from_onnx(proto)


@pytest.mark.slow  # one IREE compilation: several seconds on the shared machine
@pytest.mark.skipif(not iree_backend.available(), reason="IREE is not installed (the 'iree' extra)")
def test_onnx_scatter_nd_through_iree_matches_onnxruntime():
    cases = {name: CASES[name]() for name in sorted(CASES)}
    for name, got, expected in iree_against_onnxruntime(cases):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6, err_msg=name)
