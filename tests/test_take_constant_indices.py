"""nn.take with constant indices evenly spaced (a transformer's query/key/value split) lowers to a
`tensor.extract_slice` instead of a gather; other constant indices keep the gather. Every level gives
numpy's take."""

from __future__ import annotations

import numpy as np
import pytest
from op_levels import run_at_every_level

from xrelay.dialects import nn
from xrelay.frontend import GraphBuilder
from xrelay.lowering import lower

X = np.arange(3 * 5 * 6, dtype=np.float32).reshape(3, 5, 6) - 40

CASES = [  # (indices, attributes, numpy's answer, lowered to a slice)
    (np.array(1), {"axis": 0}, X[1], True),
    (np.array([1, 2, 3]), {"axis": 1}, X[:, 1:4], True),
    (np.array([[0, 2], [4, 6]]), {"axis": 1, "mode": "wrap"}, X[:, [[0, 2], [4, 1]]], False),
    (np.array([0, 2, 4]), {"axis": 2}, X[:, :, 0:5:2], True),
    (np.array([-1]), {"axis": 2, "mode": "wrap"}, X[:, :, 5:6], True),
    (np.array([7, 9]), {"axis": 1}, X[:, [4, 4]], False),  # clip: the same index twice
    (np.array([2, 1]), {"axis": 0}, X[[2, 1]], False),
    (np.array(7), {}, X.reshape(-1)[7], True),
]


def module(indices: np.ndarray, attrs: dict):
    b = GraphBuilder(None, "float32")
    data, constant = b.param("x", X.shape, X.dtype), b.op(nn.ConstantOp, indices)
    return b.finish(*b.op(nn.TakeOp, data, constant, **attrs).results)


@pytest.mark.parametrize(("indices", "attrs", "expected", "sliced"), CASES)
def test_take_of_constant_indices(indices, attrs, expected, sliced):
    mod = module(indices, attrs)
    for level, got in run_at_every_level(mod, {"x": X}):
        np.testing.assert_array_equal(got, expected, err_msg=level)
    ops = {op.name for op in lower(module(indices, attrs), to="linalg").walk()}
    assert ("tensor.extract_slice" in ops and "linalg.generic" not in ops) == sliced, ops
