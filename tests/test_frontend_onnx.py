"""from_onnx: names, import-time shape subgraphs, the up-front checks, and op conversions checked
against ONNX Runtime (opset 13 and later) or numpy written here (opset-6 semantics ORT refuses)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_models import close, model, run_onnxruntime
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.dialects.arguments import argument_names
from xrelay.frontend import bind_params_by_name, from_onnx
from xrelay.frontend.onnx import OnnxImportError
from xrelay.frontend.onnx.registry import has_op, supported
from xrelay.lowering import lower
from xrelay.runtime import run

RNG = np.random.default_rng(20261130)


def rand(*shape, positive=False):
    values = RNG.standard_normal(shape).astype(np.float32)
    return np.abs(values) + 0.5 if positive else values


def nn_ops(module):
    return [op.name for op in module.walk() if op.name.startswith("nn.") and op.name != "nn.constant"]


def check_against_ort(proto, inputs, levels=("nn", "linalg"), rtol=1e-4):
    """The imported model matches ONNX Runtime at every level in `levels`."""
    expected = run_onnxruntime(proto, inputs)
    module, params = from_onnx(proto)
    for level in levels:
        lowered = module if level == "nn" else lower(module, to=level)
        actual = run(lowered, inputs, params)
        actual = actual if isinstance(actual, list) else [actual]
        for a, e in zip(actual, expected, strict=True):
            assert close(a, e, rtol), f"{level}: max error {np.max(np.abs(a - e))}"
    return module


# --- names --------------------------------------------------------------------------------------------


def _named_model():
    nodes = [helper.make_node("Conv", ["gpu_0/data_0", "conv1_w_0", "onnx::Conv_193"], ["gpu_0/conv1_1"],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["gpu_0/conv1_1"], ["out"])]
    inits = {"conv1_w_0": rand(4, 3, 3, 3), "onnx::Conv_193": rand(4)}
    return model(nodes, {"gpu_0/data_0": (1, 3, 5, 5)}, ["out"], inits)


def test_onnx_names_survive_printing_parsing_running_and_binding():
    proto = _named_model()
    module, params = from_onnx(proto)
    assert sorted(params) == ["conv1_w_0", "onnx::Conv_193"]
    text = str(module)
    parsed = Parser(make_context(), text).parse_module()
    main = next(iter(parsed.ops))
    assert argument_names(main) == ["gpu_0/data_0", "conv1_w_0", "onnx::Conv_193"]
    x = rand(1, 3, 5, 5)
    (expected,) = run_onnxruntime(proto, {"gpu_0/data_0": x})
    assert close(run(parsed, {"gpu_0/data_0": x}, params), expected)
    bound = bind_params_by_name(parsed, params)
    assert argument_names(next(iter(bound.ops))) == ["gpu_0/data_0"]
    assert close(run(bound, {"gpu_0/data_0": x}), expected)
    assert close(run(lower(bound, to="linalg"), {"gpu_0/data_0": x}), expected)


def test_names_differing_only_in_a_numeric_suffix_stay_apart():
    nodes = [helper.make_node("Add", ["data_0", "w_0"], ["s"]), helper.make_node("Mul", ["s", "w_1"], ["out"])]
    proto = model(nodes, {"data_0": (2, 3)}, ["out"], {"w_0": rand(2, 3), "w_1": rand(2, 3)})
    module, params = from_onnx(proto)
    parsed = Parser(make_context(), str(module)).parse_module()
    assert argument_names(next(iter(parsed.ops))) == ["data_0", "w_0", "w_1"]
    x = rand(2, 3)
    assert close(run(parsed, {"data_0": x}, params), (x + params["w_0"]) * params["w_1"])


# --- import-time evaluation ---------------------------------------------------------------------------


def test_shape_subgraph_is_evaluated_at_import():
    """torch.onnx's flatten: Shape -> Gather -> Unsqueeze -> Concat -> Reshape."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z", TensorProto.INT64, [], [0])),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        helper.make_node("Constant", [], ["axes"], value=helper.make_tensor("a", TensorProto.INT64, [1], [0])),
        helper.make_node("Unsqueeze", ["batch", "axes"], ["batch1"]),
        helper.make_node("Constant", [], ["minus1"], value=helper.make_tensor("m", TensorProto.INT64, [1], [-1])),
        helper.make_node("Concat", ["batch1", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"]),
        helper.make_node("Dropout", ["flat"], ["dropped"]),
        helper.make_node("Identity", ["dropped"], ["y"]),
    ]
    proto = model(nodes, {"x": (2, 3, 4)}, ["y"])
    module = check_against_ort(proto, {"x": rand(2, 3, 4)})
    assert nn_ops(module) == ["nn.reshape"]


def test_constant_of_shape_and_cast_are_evaluated():
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("ConstantOfShape", ["s"], ["ones"], value=helper.make_tensor("v", TensorProto.FLOAT, [1], [2.5])),
        helper.make_node("Constant", [], ["one"], value=helper.make_tensor("o", TensorProto.INT64, [], [1])),
        helper.make_node("Gather", ["s", "one"], ["cols"]),
        helper.make_node("Cast", ["cols"], ["sf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["x", "ones"], ["m"]),
        helper.make_node("Div", ["m", "sf"], ["y"]),
    ]
    proto = model(nodes, {"x": (2, 4)}, ["y"])
    module = check_against_ort(proto, {"x": rand(2, 4)})
    assert nn_ops(module) == ["nn.multiply", "nn.divide"]


# --- up-front checks ------------------------------------------------------------------------------------


def test_unsupported_ops_are_all_listed_with_counts_and_opset():
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Round", ["a"], ["b"]),
             helper.make_node("NonZero", ["b"], ["c"]), helper.make_node("Round", ["c"], ["d"])]
    proto = model(nodes, {"x": (4,)}, ["d"], opset=11)
    with pytest.raises(OnnxImportError) as info:
        from_onnx(proto)
    assert str(info.value) == ("The following operators are not supported for frontend ONNX: "
                               "NonZero (1), Round (2) (model opset 11)")


def test_dynamic_dimension_is_named_and_shape_fixes_it():
    proto = model([helper.make_node("Relu", ["x"], ["y"])], {"x": ("batch", 3)}, ["y"])
    with pytest.raises(OnnxImportError, match=r"input 'x' has a dynamic dimension 0 \('batch'\)"):
        from_onnx(proto)
    module, _ = from_onnx(proto, shape={"x": (2, 3)})
    x = rand(2, 3)
    assert np.array_equal(run(module, {"x": x}), np.maximum(x, 0))
    with pytest.raises(OnnxImportError, match="no input of"):
        from_onnx(proto, shape={"y": (2, 3)})


def test_not_an_onnx_file(tmp_path):
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"\x08\x07garbage that is not protobuf \xff\xff\xff")
    with pytest.raises(OnnxImportError, match="is not an ONNX model"):
        from_onnx(str(path))
    good = tmp_path / "good.onnx"
    good.write_bytes(_named_model().SerializeToString())
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(good.read_bytes()[:150])
    with pytest.raises(OnnxImportError, match="is not an ONNX model"):
        from_onnx(str(truncated))
    with pytest.raises(OnnxImportError, match="cannot read"):
        from_onnx(str(tmp_path / "missing.onnx"))


# --- conversions against ONNX Runtime ---------------------------------------------------------------------


def _single(op_type, inputs, attrs=None, inits=None, opset=13, n_outputs=1):
    names = list(inputs) + list(inits or {})
    outputs = [f"y{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, names, outputs, **(attrs or {}))
    shapes = {name: value.shape for name, value in inputs.items()}
    return model([node], shapes, outputs, inits, opset=opset), inputs


CASES = {
    "conv_groups_dilation_asymmetric": lambda: _single(
        "Conv", {"x": rand(1, 4, 9, 8)}, dict(group=2, dilations=[2, 1], pads=[1, 0, 2, 1], strides=[1, 2]),
        {"w": rand(6, 2, 3, 3), "b": rand(6)}),
    "conv_same_upper": lambda: _single("Conv", {"x": rand(1, 3, 7, 6)}, dict(auto_pad="SAME_UPPER", strides=[2, 2]),
                                       {"w": rand(4, 3, 4, 4)}),
    "conv_same_lower": lambda: _single("Conv", {"x": rand(1, 3, 7, 6)}, dict(auto_pad="SAME_LOWER", strides=[2, 2]),
                                       {"w": rand(4, 3, 4, 4)}),
    "conv_1d": lambda: _single("Conv", {"x": rand(2, 3, 10)}, dict(pads=[2, 1], strides=[2]),
                               {"w": rand(5, 3, 3), "b": rand(5)}),
    "maxpool_ceil_pads": lambda: _single("MaxPool", {"x": rand(1, 2, 9, 9)},
                                         dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 0, 0], ceil_mode=1)),
    "averagepool_count_include_pad": lambda: _single(
        "AveragePool", {"x": rand(1, 2, 6, 6)}, dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)),
    "averagepool_1d": lambda: _single("AveragePool", {"x": rand(2, 3, 8)}, dict(kernel_shape=[3], strides=[2])),
    "global_avg_pool": lambda: _single("GlobalAveragePool", {"x": rand(2, 3, 4, 5)}),
    "global_max_pool": lambda: _single("GlobalMaxPool", {"x": rand(2, 3, 4, 5)}),
    "batchnorm": lambda: _single("BatchNormalization", {"x": rand(2, 3, 4, 4)}, dict(epsilon=1e-3),
                                 {"s": rand(3), "b": rand(3), "m": rand(3), "v": rand(3, positive=True)}),
    "gemm_all_attributes": lambda: _single("Gemm", {"a": rand(4, 3)}, dict(alpha=0.5, beta=2.0, transA=1),
                                           {"b": rand(4, 5), "c": rand(5)}),
    "gemm_matrix_bias_transB": lambda: _single("Gemm", {"a": rand(3, 4)}, dict(transB=1),
                                               {"b": rand(5, 4), "c": rand(3, 5)}),
    "matmul_batched_by_matrix": lambda: _single("MatMul", {"a": rand(2, 3, 4)}, inits={"b": rand(4, 5)}),
    "matmul_vector": lambda: _single("MatMul", {"a": rand(4)}, inits={"b": rand(4, 5)}),
    "add_broadcast": lambda: _single("Add", {"a": rand(2, 3, 4), "b": rand(3, 1)}),
    "sub_div_mul": lambda: _single("Div", {"a": rand(2, 3), "b": rand(2, 3, positive=True)}),
    "sum_variadic": lambda: _single("Sum", {"a": rand(2, 3), "b": rand(3), "c": rand(2, 1)}),
    "mean_variadic": lambda: _single("Mean", {"a": rand(2, 3), "b": rand(2, 3), "c": rand(2, 3)}),
    "reciprocal": lambda: _single("Reciprocal", {"a": rand(5, positive=True)}),
    "leaky_relu": lambda: _single("LeakyRelu", {"x": rand(3, 4)}, dict(alpha=0.2)),
    "prelu_channels": lambda: _single("PRelu", {"x": rand(2, 3, 4, 4)}, inits={"s": rand(3, 1, 1)}),
    "prelu_scalar": lambda: _single("PRelu", {"x": rand(2, 3, 4)}, inits={"s": rand(1)}),
    "softmax_opset11_flattens": lambda: _single("Softmax", {"x": rand(2, 3, 4)}, dict(axis=1), opset=11),
    "softmax_opset13_axis": lambda: _single("Softmax", {"x": rand(2, 3, 4)}, dict(axis=1)),
    "flatten": lambda: _single("Flatten", {"x": rand(2, 3, 4, 5)}, dict(axis=2)),
    "transpose": lambda: _single("Transpose", {"x": rand(2, 3, 4)}, dict(perm=[1, 2, 0])),
    "squeeze_input_axes": lambda: _single("Squeeze", {"x": rand(2, 1, 4, 1)}, inits={"a": np.array([1, -1])}),
    "squeeze_attr_axes": lambda: _single("Squeeze", {"x": rand(2, 1, 4, 1)}, dict(axes=[1]), opset=11),
    "unsqueeze_input_axes": lambda: _single("Unsqueeze", {"x": rand(3, 4)}, inits={"a": np.array([0, 3])}),
    "unsqueeze_attr_axes": lambda: _single("Unsqueeze", {"x": rand(3)}, dict(axes=[1, 2]), opset=11),
    "reshape_zero_and_minus_one": lambda: _single("Reshape", {"x": rand(2, 3, 4)}, inits={"s": np.array([0, -1])}),
    "sqrt_neg": lambda: _single("Sqrt", {"x": rand(6, positive=True)}),
    # Ops whose nn op other work adds: they run once the dialect has it.
    "concat": lambda: _single("Concat", {"a": rand(1, 2, 3, 3), "b": rand(1, 3, 3, 3)}, dict(axis=1)),
    "split": lambda: _single("Split", {"x": rand(2, 6)}, dict(axis=1), {"s": np.array([2, 4])}, n_outputs=2),
    "slice": lambda: _single("Slice", {"x": rand(4, 6)}, inits={"st": np.array([1, -5]), "en": np.array([3, 100]),
                                                                "ax": np.array([0, 1]), "sp": np.array([1, 2])}),
    "gather_constant_indices": lambda: _single("Gather", {"x": rand(5, 3)}, dict(axis=0),
                                               {"i": np.array([4, 0, -1])}),
    "pad_reflect": lambda: _single("Pad", {"x": rand(1, 2, 4, 4)}, dict(mode="reflect"),
                                   {"p": np.array([0, 0, 1, 2, 0, 0, 2, 1])}),
    "pad_constant": lambda: _single("Pad", {"x": rand(1, 2, 3, 3)}, None,
                                    {"p": np.array([0, 0, 1, 0, 0, 1, 0, 2]), "v": np.array(1.5, np.float32)}),
    "pad_edge": lambda: _single("Pad", {"x": rand(2, 3)}, dict(mode="edge"), {"p": np.array([1, 2, 0, 1])}),
    "expand": lambda: _single("Expand", {"x": rand(3, 1)}, inits={"s": np.array([2, 3, 4])}),
    "tile": lambda: _single("Tile", {"x": rand(2, 3)}, inits={"r": np.array([2, 3])}),
    "clip_inputs": lambda: _single("Clip", {"x": rand(3, 4)}, inits={"lo": np.array(-0.5, np.float32),
                                                                     "hi": np.array(0.7, np.float32)}),
    "clip_attrs": lambda: _single("Clip", {"x": rand(3, 4)}, dict(min=-0.2, max=0.3), opset=6),
    "hard_sigmoid": lambda: _single("HardSigmoid", {"x": rand(3, 4)}, dict(alpha=0.3, beta=0.4)),
    "hard_swish": lambda: _single("HardSwish", {"x": rand(3, 4) * 4}, opset=14),  # HardSwish is new in opset 14
    "elu": lambda: _single("Elu", {"x": rand(3, 4)}, dict(alpha=0.7)),
    "selu": lambda: _single("Selu", {"x": rand(3, 4)}),
    "softplus": lambda: _single("Softplus", {"x": rand(3, 4) * 30}),
    "tanh": lambda: _single("Tanh", {"x": rand(3, 4)}),
    "erf": lambda: _single("Erf", {"x": rand(3, 4)}),
    "exp_log_abs": lambda: _single("Log", {"x": rand(3, 4, positive=True)}),
    "sigmoid": lambda: _single("Sigmoid", {"x": rand(3, 4)}),
    "pow": lambda: _single("Pow", {"x": rand(3, 4, positive=True), "e": rand(3, 4)}),
    "max_min": lambda: _single("Max", {"a": rand(3, 4), "b": rand(4)}),
    "reduce_mean_attr": lambda: _single("ReduceMean", {"x": rand(2, 3, 4)}, dict(axes=[1, 2], keepdims=1),
                                        opset=13),
    "reduce_sum_input": lambda: _single("ReduceSum", {"x": rand(2, 3, 4)}, dict(keepdims=0),
                                        {"a": np.array([0, 2])}),
    "reduce_max_all": lambda: _single("ReduceMax", {"x": rand(2, 3, 4)}, dict(keepdims=0)),
    "log_softmax_opset11": lambda: _single("LogSoftmax", {"x": rand(2, 3, 4)}, dict(axis=1), opset=11),
    "layer_norm": lambda: _single("LayerNormalization", {"x": rand(2, 3, 8)}, dict(axis=-1, epsilon=1e-3),
                                  {"g": rand(8), "b": rand(8)}, opset=17),
    "layer_norm_two_axes": lambda: _single("LayerNormalization", {"x": rand(2, 3, 4)}, dict(axis=1),
                                           {"g": rand(3, 4), "b": rand(3, 4)}, opset=17),
    "lrn": lambda: _single("LRN", {"x": rand(1, 7, 3, 3)}, dict(size=3, alpha=0.01, beta=0.75, bias=1.5)),
    "matmul_batched_both": lambda: _single("MatMul", {"a": rand(2, 1, 3, 4), "b": rand(3, 4, 5)}),
    "instance_norm": lambda: _single("InstanceNormalization", {"x": rand(2, 3, 4, 5)}, dict(epsilon=1e-3),
                                     {"s": rand(3), "b": rand(3)}),
}


EXTRA_NEEDS = {"matmul_batched_both": ("nn.batch_matmul", "nn.broadcast_to"), "global_max_pool": (),
               "leaky_relu": (), "prelu_channels": ()}


@pytest.mark.parametrize("case", sorted(CASES))
def test_conversion_matches_onnxruntime(case):
    proto, inputs = CASES[case]()
    op_type = proto.graph.node[0].op_type
    if not supported(op_type) or not all(has_op(name) for name in EXTRA_NEEDS.get(case, ())):
        pytest.skip(f"the nn dialect lacks the ops {op_type} needs here (pending)")
    check_against_ort(proto, inputs)


# --- opset-6 semantics ONNX Runtime no longer implements: numpy references --------------------------------


def test_opset6_add_broadcast_axis():
    a, b = rand(2, 3, 4, 5), rand(3, 4)
    proto = model([helper.make_node("Add", ["a", "b"], ["y"], broadcast=1, axis=1)], {"a": a.shape, "b": b.shape},
                  ["y"], opset=6)
    module, _ = from_onnx(proto)
    assert close(run(module, {"a": a, "b": b}), a + b[None, :, :, None])


def test_opset6_prelu_slope_per_channel():
    x, slope = rand(2, 3, 4, 5), rand(3)
    proto = model([helper.make_node("PRelu", ["x", "s"], ["y"])], {"x": x.shape}, ["y"], {"s": slope}, opset=6)
    module, params = from_onnx(proto)
    s = slope[None, :, None, None]
    assert close(run(module, {"x": x}, params), np.where(x > 0, x, x * s))


def test_opset6_batchnorm_with_spatial_and_unused_statistics_outputs():
    x = rand(2, 3, 4)
    stats = {"s": rand(3), "b": rand(3), "m": rand(3), "v": rand(3, positive=True)}
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv", "sm", "sv"],
                            is_test=1, spatial=1, epsilon=1e-5, momentum=0.9)
    module, params = from_onnx(model([node], {"x": x.shape}, ["y"], stats, opset=6))
    c = (slice(None), None)
    expected = (x - stats["m"][c]) / np.sqrt(stats["v"][c] + 1e-5) * stats["s"][c] + stats["b"][c]
    assert close(run(module, {"x": x}, params), expected)


def test_opset6_gemm_broadcast_bias():
    a, b, c = rand(2, 3), rand(3, 4), rand(4)
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], broadcast=1, alpha=2.0, beta=0.5)
    module, params = from_onnx(model([node], {"a": a.shape}, ["y"], {"b": b, "c": c}, opset=6))
    assert close(run(module, {"a": a}, params), 2.0 * a @ b + 0.5 * c)


def test_opset6_softmax_flattens_from_axis_1():
    x = rand(2, 3, 4)
    module, _ = from_onnx(model([helper.make_node("Softmax", ["x"], ["y"])], {"x": x.shape}, ["y"], opset=6))
    flat = x.reshape(2, 12)
    expected = np.exp(flat - flat.max(1, keepdims=True))
    assert close(run(module, {"x": x}), (expected / expected.sum(1, keepdims=True)).reshape(2, 3, 4))


def test_training_outputs_used_is_an_error():
    node = helper.make_node("Dropout", ["x"], ["y", "mask"])
    relu = helper.make_node("Relu", ["mask"], ["z"])
    with pytest.raises(OnnxImportError, match="only training computes"):
        from_onnx(model([node, relu], {"x": (3,)}, ["z"]))
