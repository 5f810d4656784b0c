"""benchmarks/split_profile.py's per-step listing names each convolution step by its shape."""

from __future__ import annotations

import sys
from pathlib import Path

from xdsl.parser import Parser

from tests.test_runtime_plan import conv_nhwc_hwcf
from xrelay.dialects import make_context
from xrelay.runtime.linalg_exec import LinalgProgram


def test_step_label_names_a_convolution_by_kernel_stride_channels_and_output():
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    from split_profile import step_label

    text = conv_nhwc_hwcf((1, 17, 13, 3), (5, 3, 3, 7), 2, 0.0)  # output 7x6
    program = LinalgProgram(Parser(make_context(), text).parse_module())
    labels = [step_label(step) for step in program.steps]
    assert [label for label in labels if label] == ["conv 5x3/2 3->7 out 7x6"]
