"""bind_params_by_name, the tiny model, and the printed form of a bound model."""

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.frontend import bind_params_by_name, resnet, tiny


def main_func(module):
    (func,) = [op for op in module.ops if isinstance(op, FuncOp)]
    return func


def arg_names(func):
    return [a.name_hint for a in func.body.block.args]


def constants(func):
    return [op for op in func.body.block.ops if op.name == "nn.constant"]


# ---------------------------------------------------------------- tiny model


def test_tiny_model_structure():
    module, params = tiny.get_workload(batch_size=2, image_shape=(3, 8, 8), channels=4, num_classes=10)
    func = main_func(module)
    body = [op.name for op in func.body.block.ops if not isinstance(op, ReturnOp)]
    assert body == [
        "nn.conv2d", "nn.batch_norm", "nn.relu", "nn.max_pool2d", "nn.batch_flatten",
        "nn.dense", "nn.bias_add", "nn.softmax",
    ]
    assert arg_names(func) == [
        "data", "conv_weight", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var",
        "fc_weight", "fc_bias",
    ]
    # 8x8 -> conv pad 1 keeps 8x8 -> pool 2/2 gives 4x4 -> 4*4*4 = 64 features.
    assert params["conv_weight"].shape == (4, 3, 3, 3) and params["fc_weight"].shape == (10, 64)
    assert [tuple(t.get_shape()) for t in func.function_type.outputs] == [(2, 10)]
    module.verify()


# ---------------------------------------------------------------- bind_params_by_name


@pytest.fixture
def tiny_workload():
    return tiny.get_workload()


def test_bind_all_params(tiny_workload):
    module, params = tiny_workload
    before = str(module)
    bound = bind_params_by_name(module, params)
    assert isinstance(bound, ModuleOp) and bound is not module
    assert str(module) == before  # the input is untouched
    assert len(main_func(module).body.block.args) == 1 + len(params)

    func = main_func(bound)
    assert arg_names(func) == ["data"]
    assert [tuple(t.get_shape()) for t in func.function_type.inputs] == [(1, 3, 8, 8)]
    consts = constants(func)
    assert len(consts) == len(params)
    # Constants lead the body in argument order, keep the parameter's name and hold its data.
    assert list(func.body.block.ops)[: len(params)] == consts
    for op, (name, value) in zip(consts, params.items()):
        assert op.results[0].name_hint == name
        np.testing.assert_array_equal(op.numpy(), value)
        assert op.numpy().dtype == value.dtype
    conv = next(op for op in func.body.block.ops if op.name == "nn.conv2d")
    assert conv.operands[1] is consts[0].results[0]
    bound.verify()


def test_bind_some_params_and_ignore_unknown_names(tiny_workload):
    module, params = tiny_workload
    subset = {"fc_bias": params["fc_bias"], "bn_gamma": params["bn_gamma"], "no_such_param": np.ones(3)}
    func = main_func(bind_params_by_name(module, subset))
    assert arg_names(func) == [
        "data", "conv_weight", "bn_beta", "bn_moving_mean", "bn_moving_var", "fc_weight"
    ]
    assert [op.results[0].name_hint for op in constants(func)] == ["bn_gamma", "fc_bias"]
    assert len(func.function_type.inputs) == 6


def test_bind_a_function_returns_a_function(tiny_workload):
    module, params = tiny_workload
    func = main_func(module)
    bound = bind_params_by_name(func, {"conv_weight": params["conv_weight"]})
    assert isinstance(bound, FuncOp) and bound is not func and bound.parent is None
    assert arg_names(bound) == [n for n in arg_names(func) if n != "conv_weight"]
    assert "conv_weight" in arg_names(func)


def test_bind_accepts_ndarray_likes(tiny_workload):
    """Values with a `.numpy()` method (TVM's NDArray) are converted; dtype still has to match."""

    class FakeNDArray:
        def numpy(self):
            return np.full(10, 0.5, np.float32)

    func = main_func(bind_params_by_name(tiny_workload[0], {"fc_bias": FakeNDArray()}))
    assert arg_names(func)[-1] == "fc_weight"
    np.testing.assert_array_equal(constants(func)[0].numpy(), np.full(10, 0.5, np.float32))
    with pytest.raises(ValueError, match="'fc_bias'.*float64"):  # a list of Python floats is float64
        bind_params_by_name(tiny_workload[0], {"fc_bias": [0.5] * 10})


@pytest.mark.parametrize(
    "value, message",
    [
        (np.zeros((4, 3, 3), np.float32), r"'conv_weight'.*shape \(4, 3, 3, 3\).*\(4, 3, 3\)"),
        (np.zeros((4, 3, 3, 3), np.float64), r"'conv_weight'.*float32.*float64"),
        (np.zeros((4, 3, 3, 3), np.int32), r"'conv_weight'.*int32"),
    ],
)
def test_bind_rejects_mismatched_values(tiny_workload, value, message):
    module, params = tiny_workload
    before = str(module)
    with pytest.raises(ValueError, match=message):
        bind_params_by_name(module, {**params, "conv_weight": value})
    assert str(module) == before


def test_bind_rejects_other_things():
    with pytest.raises(TypeError, match="func.func or a builtin.module"):
        bind_params_by_name("not a module", {})
    with pytest.raises(ValueError, match="no func.func @main"):
        bind_params_by_name(ModuleOp([]), {})


# ---------------------------------------------------------------- printing and parsing


def _round_trip(module):
    text = str(module)
    parsed = Parser(make_context(), text).parse_module()
    return text, parsed


def test_tiny_bound_module_round_trips(tiny_workload):
    module, params = tiny_workload
    text, parsed = _round_trip(bind_params_by_name(module, params))
    assert str(parsed) == text
    assert "nn.constant" in text


def test_resnet18_module_round_trips():
    module, params = resnet.get_workload(num_layers=18)
    text, parsed = _round_trip(module)
    assert str(parsed) == text
    bound_text, bound_parsed = _round_trip(bind_params_by_name(module, params))
    assert str(bound_parsed) == bound_text
    consts = {op.results[0].name_hint: op for op in constants(main_func(bound_parsed))}
    assert len(consts) == len(params)
    for name in ("conv0_weight", "stage4_unit2_conv2_weight", "fc1_weight", "bn1_moving_var"):
        np.testing.assert_array_equal(consts[name].numpy(), params[name])
