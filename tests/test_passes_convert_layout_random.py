"""ConvertLayout on randomised small graphs (seeded): outputs are preserved to NHWC and back,
every conv is converted, a second run changes nothing and the way back leaves no transform of
an activation.

The graphs mix convolutions (plain, strided, depthwise; constant or parameter weights) with the
ops that follow a layout (relu, sqrt, negative, batch_norm, bias_add, pools, binary ops against
activations, scalars and lower-rank constants such as (C,1,1), (H,W) and (W,)), the ops that need
NCHW back (softmax over channels, batch_flatten, dense) or follow it where they can (transpose,
reshape, a channel shuffle of both) and values used twice.
"""

from __future__ import annotations

import numpy as np
import pytest

import module_builder

from xrelay.dialects import nn
from xrelay.frontend.builder import shape_of
from xrelay.instrument import PassContext
from xrelay.passes.convert_layout import ConvertLayout
from xrelay.runtime import run

SEEDS = range(120)


class RandomGraph(module_builder.RandomGraph):
    """Builds one random NCHW graph; `params` holds values for its non-data arguments."""

    def __init__(self, seed: int):
        rng = np.random.RandomState(seed)
        super().__init__((1, rng.randint(1, 5), rng.randint(2, 7), rng.randint(2, 7)), rng)
        self.params: dict[str, np.ndarray] = {}

    def conv(self, x):
        _, c, h, w = shape_of(x)
        depthwise = c > 1 and self.rng.rand() < 0.2
        out = c if depthwise else self.rng.randint(1, 5)
        k = int(self.rng.choice([1, 3]))
        weight_shape = (out, 1 if depthwise else c, k, k)
        if self.rng.rand() < 0.3:
            name = f"w{len(self.params)}"
            self.params[name] = self.rng.uniform(-1, 1, weight_shape).astype("float32")
            weight = self.b.param(name, weight_shape)
        else:
            weight = self.const(weight_shape)
        stride = int(self.rng.choice([1, 1, 2]))
        return self.op(
            "nn.conv2d", x, weight, strides=(stride, stride), padding=(k // 2,) * 4,
            groups=c if depthwise else 1, channels=out, kernel_size=(k, k),
        )

    def binary(self, x, acts):
        _, c, h, w = shape = shape_of(x)
        name = str(self.rng.choice(["nn.add", "nn.subtract", "nn.multiply", "nn.divide"]))
        same = [a for a in acts if shape_of(a) == shape and a is not x]
        choice = self.rng.randint(6)
        if name != "nn.divide" and choice == 0 and same:
            other = same[self.rng.randint(len(same))]
        else:
            other_shape = [(c, 1, 1), (1, c, 1, 1), (), (w,), (h, w), shape][choice]
            other = self.const(other_shape, 0.5, 1.5)
        if name != "nn.divide" and self.rng.rand() < 0.5:
            return self.op(name, other, x)
        return self.op(name, x, other)

    def pool(self, x):
        _, c, h, w = shape_of(x)
        kind = self.rng.randint(3)
        if kind == 0 or min(h, w) < 2:
            return self.op("nn.global_avg_pool2d", x)
        stride, pad = int(self.rng.choice([1, 2])), int(self.rng.choice([0, 1]))
        attrs = dict(pool_size=(2, 2), strides=(stride, stride), padding=(pad,) * 4)
        if kind == 1:
            return self.op("nn.max_pool2d", x, **attrs)
        return self.op("nn.avg_pool2d", x, count_include_pad=bool(self.rng.rand() < 0.5), **attrs)

    def step(self, x, acts):
        _, c, h, w = shape_of(x)
        kind = self.rng.randint(11)
        if kind <= 2:
            return self.conv(x)
        if kind == 3:
            return self.op(str(self.rng.choice(["nn.relu", "nn.negative"])), x)
        if kind == 4:
            return self.op("nn.sqrt", self.op("nn.relu", x))
        if kind == 5:
            return self.binary(x, acts)
        if kind == 6:
            stats = [self.const((c,)), self.const((c,)), self.const((c,)), self.const((c,), 0.5, 2.0)]
            return self.b.op(nn.BatchNormOp, x, *stats, epsilon=1e-3).results[0]
        if kind == 7:
            return self.op("nn.bias_add", x, self.const((c,)))
        if kind == 8:
            return self.pool(x)
        # Ops that want their input in the original layout, or follow it only in some cases.
        boundary = self.rng.randint(4)
        if boundary == 3 and c % 2 == 0:  # ShuffleNet's channel shuffle, 2 groups
            split = self.op("nn.reshape", x, newshape=(1, 2, c // 2, h, w))
            return self.op("nn.reshape", self.op("nn.transpose", split, axes=(0, 2, 1, 3, 4)), newshape=(1, c, h, w))
        if boundary == 0:
            return self.op("nn.transpose", x, axes=(0, 1, 3, 2))
        if boundary == 1:
            return self.op("nn.reshape", x, newshape=(0, c, w, h))
        return self.op("nn.softmax", x, axis=1)

    def build(self):
        x = self.b.input
        if self.rng.rand() < 0.5:  # ResNet's bn_data on the raw input
            c = self.input_shape[1]
            stats = [self.const((c,)), self.const((c,)), self.const((c,)), self.const((c,), 0.5, 2.0)]
            x = self.b.op(nn.BatchNormOp, x, *stats, scale=False).results[0]
        acts = [x]
        for _ in range(self.rng.randint(4, 12)):
            source = acts[-1] if self.rng.rand() < 0.7 else acts[self.rng.randint(len(acts))]
            acts.append(self.step(source, acts))
        result = acts[-1]
        if self.rng.rand() < 0.5:  # a classifier head
            flat = self.op("nn.batch_flatten", self.op("nn.global_avg_pool2d", result))
            units = self.rng.randint(1, 6)
            dense = self.op("nn.dense", flat, self.const((units, shape_of(flat)[1])), units=units)
            result = self.op("nn.softmax", self.op("nn.add", dense, self.const((units,))))
        return self.b.finish(result)


def activation_transforms(module) -> list:
    """layout_transforms whose input does not come (through expand_dims) from a constant."""
    found = []
    for op in module.walk():
        if op.name == "nn.layout_transform":
            source = op.operands[0].owner
            while getattr(source, "name", None) == "nn.expand_dims":
                source = source.operands[0].owner
            if not isinstance(source, nn.ConstantOp):
                found.append(op)
    return found


@pytest.mark.parametrize("seed", SEEDS)
def test_random_graph_round_trip(seed):
    graph = RandomGraph(seed)
    module = graph.build()
    module.verify()
    rng = np.random.RandomState(1000 + seed)
    inputs = {"data": rng.uniform(-1, 1, graph.input_shape).astype("float32")}
    expected = run(module, inputs, graph.params)
    kernel = ["HWIO", "OHWI", "default"][seed % 3]
    with PassContext(opt_level=3):
        nhwc = ConvertLayout({"nn.conv2d": ["NHWC", kernel]})(module)
        again = ConvertLayout({"nn.conv2d": ["NHWC", kernel]})(nhwc)
        back = ConvertLayout({"nn.conv2d": ["NCHW", "OIHW"]})(nhwc)
    nhwc.verify()
    back.verify()
    expected_kernel = "HWIO" if kernel == "default" else kernel
    for conv in (op for op in nhwc.walk() if op.name == "nn.conv2d"):
        assert (conv.attrs()["data_layout"], conv.attrs()["kernel_layout"]) == ("NHWC", expected_kernel)
    assert again.is_structurally_equivalent(nhwc)
    assert activation_transforms(back) == []
    scale = float(np.abs(expected).max()) or 1.0
    for converted in (nhwc, back):
        np.testing.assert_allclose(run(converted, inputs, graph.params), expected, rtol=1e-5, atol=1e-5 * scale)
