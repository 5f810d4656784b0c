"""ConcatFirst: ReLUs and per-channel constant adds move behind a concatenation; against numpy."""

import numpy as np
import pytest

from xrelay import passes, transform
from xrelay.dialects import nn
from xrelay.runtime import run
from module_builder import make_module


def names(mod):
    return [op.name for op in mod.body.block.first_op.body.block.ops if op.name != "nn.constant"]


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
def test_fire_module_tails_join_after_the_concat_and_the_pool(layout):
    """SqueezeNet's fire module end: two branches with their own bias (one a bias_add, one an add of a
    (C,1,1)/(C,) constant) and ReLU, concatenated along the channels, then a max pool."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal((1, 2, 7, 7)).astype(np.float32)
    b = rng.standard_normal((1, 3, 7, 7)).astype(np.float32)
    bias_a, bias_b = rng.standard_normal(2).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    order = ["NCHW".index(c) for c in layout]
    channel = layout.index("C")
    shift_b = bias_b.reshape(3, 1, 1) if layout == "NCHW" else bias_b

    def body(values, emit):
        ya = emit(nn.make("nn.relu", [emit(nn.make("nn.bias_add", [values["a"], emit(nn.ConstantOp(bias_a))],
                                                   axis=channel))]))
        yb = emit(nn.make("nn.relu", [emit(nn.make("nn.add", [values["b"], emit(nn.ConstantOp(shift_b))]))]))
        cat = emit(nn.make("nn.concatenate", [ya, yb], axis=channel))
        return [emit(nn.make("nn.max_pool2d", [cat], pool_size=(3, 3), strides=(2, 2), layout=layout))]

    mod = make_module({"a": a.transpose(order).shape, "b": b.transpose(order).shape}, body)
    with transform.PassContext(opt_level=3):
        hoisted = passes.ConcatFirst()(mod)
        pooled = passes.MaxPoolFirst()(hoisted)
    assert names(hoisted) == ["nn.concatenate", "nn.add", "nn.relu", "nn.max_pool2d", "func.return"]
    assert names(pooled) == ["nn.concatenate", "nn.max_pool2d", "nn.add", "nn.relu", "func.return"]
    activated = np.concatenate([np.maximum(a + bias_a.reshape(2, 1, 1), 0), np.maximum(b + bias_b.reshape(3, 1, 1), 0)], 1)
    windows = np.stack([activated[:, :, i:i + 5:2, j:j + 5:2] for i in range(3) for j in range(3)])
    expected = windows.max(axis=0)
    inputs = {"a": a.transpose(order), "b": b.transpose(order)}
    for module in (hoisted, pooled):
        got = run(module, inputs).transpose([layout.index(c) for c in "NCHW"])
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def hoisted_names(make_inputs):
    def body(values, emit):
        return make_inputs(values, emit)

    mod = make_module({"a": (1, 2, 3, 3), "b": (1, 2, 3, 3)}, body)
    with transform.PassContext(opt_level=3):
        return names(passes.ConcatFirst()(mod))


def test_mixed_producers_stay():
    def f(values, emit):
        ra = emit(nn.make("nn.relu", [values["a"]]))
        sb = emit(nn.make("nn.sigmoid", [values["b"]]))
        return [emit(nn.make("nn.concatenate", [ra, sb], axis=1))]

    assert hoisted_names(f) == ["nn.relu", "nn.sigmoid", "nn.concatenate", "func.return"]


def test_an_input_read_elsewhere_stays():
    def f(values, emit):
        ra, rb = emit(nn.make("nn.relu", [values["a"]])), emit(nn.make("nn.relu", [values["b"]]))
        return [emit(nn.make("nn.concatenate", [ra, rb], axis=1)), rb]

    assert hoisted_names(f) == ["nn.relu", "nn.relu", "nn.concatenate", "func.return"]


def test_an_add_varying_off_the_concat_axis_stays():
    spatial = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)

    def f(values, emit):
        ya = emit(nn.make("nn.add", [values["a"], emit(nn.ConstantOp(spatial))]))
        yb = emit(nn.make("nn.add", [values["b"], emit(nn.ConstantOp(spatial))]))
        return [emit(nn.make("nn.concatenate", [ya, yb], axis=1))]

    assert hoisted_names(f) == ["nn.add", "nn.add", "nn.concatenate", "func.return"]
