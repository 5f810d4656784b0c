"""`channels-last` on upstream's NCHW (torch-mlir's convolution, depthwise convolution and pools, after
`canonicalize-inits`): the module it rewrites equals numpy written in tests/test_canonicalize_inits.py on
random inputs, no channels-first windowed op is left, and built, the depthwise convolution runs by the
depthwise kernel xrelay's own NHWC lowering reaches."""

from __future__ import annotations

import numpy as np
import pytest
from test_canonicalize_inits import parse, reference

import xrelay
from xrelay import transform
from xrelay.passes.kernels.canonicalize_inits import CanonicalizeInits
from xrelay.passes.kernels.channels_last import ChannelsLast, is_seed
from xrelay.runtime import run
from xrelay.runtime.kernels.conv_epilogue import ConvStep


@pytest.mark.parametrize("seed", [0, 1])
def test_channels_last_module_equals_numpy(seed):
    x = np.random.default_rng(seed).standard_normal((1, 3, 10, 12)).astype(np.float32)
    module = ChannelsLast()(CanonicalizeInits()(parse()))
    module.verify()
    assert not any(is_seed(op) for op in module.walk())
    np.testing.assert_allclose(run(module, [x]), reference(x), rtol=1e-5, atol=1e-5)


def test_built_depthwise_runs_by_the_depthwise_kernel():
    x = np.random.default_rng(2).standard_normal((1, 3, 10, 12)).astype(np.float32)
    with transform.PassContext(opt_level=3):
        executable = xrelay.build(parse())
    convs = [step for step in executable.program.steps if isinstance(step, ConvStep)]
    assert [step.geometry.depthwise for step in convs] == [False, True]
    assert convs[1].geometry.out_axes == (0, 3, 1, 2)  # channels-last
    np.testing.assert_allclose(executable(x), reference(x), rtol=1e-5, atol=1e-5)
