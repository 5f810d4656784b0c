"""QA: the Python API rejects bad arguments with an exception naming the problem (found by
hostile-user testing)."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay import passes, transform
from xrelay.instrument import PassInstrument, PassTimingInstrument


@pytest.mark.parametrize("bad, words", [
    (42, "got 42"),
    (PassTimingInstrument, "the class PassTimingInstrument; pass an instance: PassTimingInstrument()"),
    ("timing", "got 'timing'"),
])
def test_pass_context_rejects_an_instrument_that_is_not_one(bad, words):
    # Such an item used to be accepted and then silently ignored (42) or failed at the first pass (a class).
    with pytest.raises(TypeError, match="PassContext: instruments\\[1\\] is not a PassInstrument") as caught:
        transform.PassContext(instruments=[PassTimingInstrument(), bad])
    assert words in str(caught.value)
    ctx = transform.PassContext()
    with pytest.raises(TypeError, match="instruments\\[0\\] is not a PassInstrument"):
        ctx.override_instruments([bad])


def test_pass_context_keeps_accepting_duck_typed_instruments():
    class OnlyBefore:  # TVM-style: any object with hook methods
        def __init__(self):
            self.seen = []

        def run_before_pass(self, mod, info):
            self.seen.append(info.name)

    duck, base = OnlyBefore(), PassInstrument()
    with transform.PassContext(instruments=[duck, base]):
        transform.module_pass(lambda mod, ctx: mod, opt_level=0, name="Noop")(object())
    assert duck.seen == ["Noop"]


@pytest.mark.parametrize("inputs, params, words", [
    (np.zeros((1, 4), np.float32), None, "run: inputs must be a mapping of @main argument names to arrays, or a "
                                         "list of arrays in argument order, got ndarray"),
    ({1.0}, None, "run: inputs must be a mapping of @main argument names to arrays, or a list of arrays in argument "
                  "order, got set"),
    ({"x": np.zeros((1, 4), np.float32)}, [1.0], "run: params must be a mapping of @main argument names to arrays, "
                                                 "got list"),
])
def test_run_rejects_inputs_that_are_not_a_mapping(inputs, params, words):
    # A bare array is not a list of arrays (it would bind its rows); a list used to fail deep inside
    # with "unhashable type: 'numpy.ndarray'" and now binds by position (test_runtime_positional.py).
    from xdsl.parser import Parser

    from xrelay.dialects import make_context
    from xrelay.runtime import run

    module = Parser(make_context(), RELU).parse_module()
    with pytest.raises(TypeError) as caught:
        run(module, inputs, params)
    assert str(caught.value) == words


RELU = """func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = nn.relu(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %0 : tensor<1x4xf32>
}
"""


@pytest.mark.parametrize("kwargs, message", [
    ({"batch_size": 0}, "resnet: batch_size must be a positive int, got 0"),
    ({"batch_size": -1}, "resnet: batch_size must be a positive int, got -1"),
    ({"batch_size": 1.5}, "resnet: batch_size must be a positive int, got 1.5"),
    ({"num_classes": 0}, "resnet: num_classes must be a positive int, got 0"),
    ({"num_layers": "18"}, "resnet: num_layers must be one of [18, 34, 50, 101, 152, 200, 269], got '18'"),
    ({"num_layers": 19}, "resnet: num_layers must be one of [18, 34, 50, 101, 152, 200, 269], got 19"),
    ({"image_shape": "3,224,224"}, "resnet: image_shape must be 3 positive ints, got '3,224,224'"),
    ({"image_shape": (3, 0, 224)}, "resnet: image_shape must be 3 positive ints, got (3, 0, 224)"),
])
def test_resnet_workload_rejects_bad_sizes(kwargs, message):
    # batch_size=0 / num_classes=0 used to build a model of empty tensors.
    from xrelay.frontend import resnet

    with pytest.raises(ValueError) as caught:
        resnet.get_workload(**kwargs)
    assert str(caught.value) == message


@pytest.mark.parametrize("make_pass", [
    lambda: passes.InferType(),
    lambda: passes.FoldConstant(),
    lambda: transform.Sequential([passes.SimplifyInference()]),
    lambda: transform.Sequential([__import__("xdsl.transforms.dead_code_elimination", fromlist=["x"]).DeadCodeElimination()]),
], ids=["InferType", "FoldConstant", "Sequential", "wrapped-xdsl-pass"])
@pytest.mark.parametrize("not_a_module", ["module", None, 42])
def test_a_pass_given_something_else_than_a_module_says_so(make_pass, not_a_module):
    # Was "AttributeError: 'str' object has no attribute 'walk'" from deep inside the pass.
    with pytest.raises(TypeError, match=r"expected a builtin\.module \(xdsl ModuleOp\), got "
                                        + type(not_a_module).__name__):
        make_pass()(not_a_module)


def test_nn_level_results_have_the_declared_element_type():
    # nn.sqrt on i32 came back as float64 from run() (FoldConstant and the lowered levels give i32).
    from xdsl.parser import Parser

    from xrelay.dialects import make_context
    from xrelay.runtime import run

    text = """func.func @main(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = nn.sqrt(%x) : (tensor<4xi32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}
"""
    out = run(Parser(make_context(), text).parse_module(), {"x": np.array([1, 2, 3, 4], np.int32)})
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, np.sqrt([1, 2, 3, 4]).astype(np.int32))


def test_a_lowered_module_without_linalg_ops_runs_on_the_linalg_executor():
    # nn.batch_flatten lowers to tensor.collapse_shape/expand_shape only: run() took it for a loops-level
    # module and failed with "loops level: unsupported op tensor.collapse_shape".
    from xdsl.parser import Parser

    from xrelay.dialects import make_context
    from xrelay.lowering import lower
    from xrelay.runtime import run

    text = """func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x32xf32> {
  %0 = nn.batch_flatten(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x32xf32>
  func.return %0 : tensor<1x32xf32>
}
"""
    lowered = lower(Parser(make_context(), text).parse_module(), to="linalg")
    x = np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4)
    np.testing.assert_array_equal(run(lowered, {"x": x}), x.reshape(1, 32))
