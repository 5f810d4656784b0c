"""ConvertLayout: options, the counts the tutorial's op-diff is built from (bound ResNet-18),
idempotence, the way back to NCHW, output preservation on ResNet-18 and the tiny model, and a
time per op that does not grow with the graph."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from xdsl.utils.arg_spec import parse_pipeline

from xrelay.dialects import nn
from xrelay.frontend import bind_params_by_name, resnet, tiny
from xrelay.instrument import PassContext, PassInfo, PassInstrument, Sequential
from xrelay.passes.canonicalize_ops import CanonicalizeOps
from xrelay.passes.convert_layout import ConvertLayout, parse_desired_layouts
from xrelay.passes.fold_constant import FoldConstant
from xrelay.runtime import run
from xrelay.transform import get_pass

NHWC = {"nn.conv2d": ["NHWC", "HWIO"]}
NCHW = {"nn.conv2d": ["NCHW", "default"]}


def op_counts(module) -> collections.Counter:
    """nn ops by name, constants not counted (as in the tutorial's op-diff)."""
    return collections.Counter(
        op.name for op in module.walk() if op.name.startswith("nn.") and op.name != "nn.constant"
    )


def diff(after, before) -> dict[str, int]:
    return {k: after[k] - before[k] for k in after | before if after[k] != before[k]}


def ops_named(module, name: str) -> list:
    return [op for op in module.walk() if op.name == name]


def assert_close(actual: np.ndarray, expected: np.ndarray) -> None:
    scale = float(np.abs(expected).max())
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5 * scale)


# --- options -------------------------------------------------------------------------------


def test_pass_info_and_names():
    p = ConvertLayout(NHWC)
    assert p.info == PassInfo("ConvertLayout", 3, ("InferType", "CanonicalizeOps"))
    assert ConvertLayout.name == "convert-layout"
    assert ConvertLayout.infer_type_after


@pytest.mark.parametrize(
    "given, stored",
    [
        ({"nn.conv2d": ["NHWC", "HWIO"]}, ("nn.conv2d=NHWC:HWIO",)),
        ({"nn.conv2d": ("NCHW", "default")}, ("nn.conv2d=NCHW:default",)),
        ({"nn.conv2d": ["NHWC"]}, ("nn.conv2d=NHWC:default",)),
        ("nn.conv2d=NHWC:OHWI", ("nn.conv2d=NHWC:OHWI",)),
        (("nn.conv2d = NHWC : HWIO",), ("nn.conv2d=NHWC:HWIO",)),
    ],
)
def test_desired_layouts_forms(given, stored):
    assert ConvertLayout(given).desired_layouts == stored


def test_option_string_round_trips_through_the_pipeline_syntax():
    (spec,) = parse_pipeline('convert-layout{desired-layouts="nn.conv2d=NHWC:HWIO"}')
    p = ConvertLayout.from_pass_spec(spec)
    assert p == ConvertLayout(NHWC)
    (again,) = parse_pipeline(str(p.pipeline_pass_spec()))
    assert ConvertLayout.from_pass_spec(again) == p


@pytest.mark.parametrize(
    "given, message",
    [
        ({"nn.conv2d": ["NHWX", "HWIO"]}, "unknown nn.conv2d data layout 'NHWX'"),
        ({"nn.conv2d": ["NCHW16c"]}, "unknown nn.conv2d data layout 'NCHW16c'"),
        ({"nn.conv2d": ["NHWC", "HWI"]}, "unknown nn.conv2d kernel layout 'HWI'"),
        ({"nn.conv2d": ["NWHC", "default"]}, "no default kernel layout for data layout 'NWHC'"),
        ({"nn.conv2d": []}, r"nn.conv2d takes \[data_layout\]"),
        ({"nn.conv2d": "NHWC"}, r"nn.conv2d takes \[data_layout\]"),
        ({"nn.dense": ["NC"]}, "op 'nn.dense' has no desired-layout support"),
        ({}, "no desired layouts given"),
        ("nn.conv2d", "malformed entry 'nn.conv2d'"),
        ("nn.conv2d=", "malformed entry 'nn.conv2d='"),
        ("nn.conv2d=NHWC;nn.conv2d=NCHW", "op 'nn.conv2d' given twice"),
        ((3,), "expected 'op=data_layout"),
    ],
)
def test_bad_desired_layouts_name_the_entry(given, message):
    with pytest.raises(ValueError, match=message):
        ConvertLayout(given)


@pytest.mark.parametrize("name", ["ConvertLayout", "convert-layout"])
def test_registered_under_both_names_and_requires_desired_layouts(name):
    with pytest.raises(ValueError, match="no desired layouts given, e.g. nn.conv2d=NHWC:HWIO"):
        get_pass(name)


def test_parse_desired_layouts_resolves_nothing_early():
    assert parse_desired_layouts("nn.conv2d=NHWC") == {"nn.conv2d": ("NHWC", "default")}


# --- bound ResNet-18: the tutorial's counts and output preservation ------------------------


@pytest.fixture(scope="module")
def resnet18():
    """(bound ResNet-18 after CanonicalizeOps, input, its output before any layout change)."""
    mod, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 224, 224))
    with PassContext(opt_level=3):
        mod = CanonicalizeOps()(bind_params_by_name(mod, params))
    data = np.random.RandomState(7).uniform(-1, 1, (1, 3, 224, 224)).astype("float32")
    return mod, data, run(mod, {"data": data})


@pytest.fixture(scope="module")
def resnet18_nhwc(resnet18):
    mod, _, _ = resnet18
    with PassContext(opt_level=3):
        return ConvertLayout(NHWC)(mod)


def test_resnet18_nhwc_adds_23_transforms_and_one_expand_dims(resnet18, resnet18_nhwc):
    mod, _, _ = resnet18
    assert diff(op_counts(resnet18_nhwc), op_counts(mod)) == {"nn.layout_transform": 23, "nn.expand_dims": 1}
    transforms = ops_named(resnet18_nhwc, "nn.layout_transform")
    kinds = collections.Counter((t.attrs()["src_layout"], t.attrs()["dst_layout"]) for t in transforms)
    assert kinds == {("OIHW", "HWIO"): 21, ("NCHW", "NHWC"): 1, ("NHWC", "NCHW"): 1}
    for t in transforms:
        producer = t.operands[0].owner
        src = t.attrs()["src_layout"]
        if src == "OIHW":  # every weight: a bound constant
            assert isinstance(producer, nn.ConstantOp)
        elif src == "NCHW":  # the input of conv0 is bn_data's output, still NCHW
            assert producer.name == "nn.batch_norm" and producer.attrs()["axis"] == 1
            assert producer.operands[0].name_hint == "data"
            assert [u.operation.name for u in t.results[0].uses] == ["nn.conv2d"]
        else:  # the way back before batch_flatten
            assert producer.name == "nn.global_avg_pool2d" and producer.attrs()["layout"] == "NHWC"
            assert [u.operation.name for u in t.results[0].uses] == ["nn.batch_flatten"]
    (expand,) = ops_named(resnet18_nhwc, "nn.expand_dims")
    assert isinstance(expand.operands[0].owner, nn.ConstantOp)  # the dense bias
    assert expand.attrs()["axis"] == 0 and expand.attrs()["num_newaxis"] == 1
    assert [u.operation.name for u in expand.results[0].uses] == ["nn.add"]


def test_resnet18_nhwc_converts_every_layout_op(resnet18_nhwc):
    convs = ops_named(resnet18_nhwc, "nn.conv2d")
    assert len(convs) == 21
    assert all((c.attrs()["data_layout"], c.attrs()["kernel_layout"]) == ("NHWC", "HWIO") for c in convs)
    axes = sorted(bn.attrs()["axis"] for bn in ops_named(resnet18_nhwc, "nn.batch_norm"))
    assert axes == [1] + [3] * (len(axes) - 1)  # bn_data alone stays on NCHW
    pools = ops_named(resnet18_nhwc, "nn.max_pool2d") + ops_named(resnet18_nhwc, "nn.global_avg_pool2d")
    assert [p.attrs()["layout"] for p in pools] == ["NHWC", "NHWC"]


def test_resnet18_fold_constant_leaves_two_transforms(resnet18, resnet18_nhwc):
    mod, data, expected = resnet18
    with PassContext(opt_level=3):
        folded = FoldConstant()(resnet18_nhwc)
    assert diff(op_counts(folded), op_counts(resnet18_nhwc)) == {"nn.layout_transform": -21, "nn.expand_dims": -1}
    assert diff(op_counts(folded), op_counts(mod)) == {"nn.layout_transform": 2}
    assert_close(run(folded, {"data": data}), expected)


def test_resnet18_nhwc_preserves_outputs(resnet18, resnet18_nhwc):
    _, data, expected = resnet18
    assert_close(run(resnet18_nhwc, {"data": data}), expected)


def test_resnet18_second_run_adds_nothing(resnet18_nhwc):
    with PassContext(opt_level=3):
        again = ConvertLayout(NHWC)(resnet18_nhwc)
    assert again.is_structurally_equivalent(resnet18_nhwc)


def test_resnet18_back_to_nchw_removes_the_transforms(resnet18, resnet18_nhwc):
    mod, data, expected = resnet18
    with PassContext(opt_level=3):
        back = ConvertLayout(NCHW)(resnet18_nhwc)
    # Every transform composes with its inverse; the dense bias keeps its (1, 1000) expand_dims.
    assert diff(op_counts(back), op_counts(mod)) == {"nn.expand_dims": 1}
    convs = ops_named(back, "nn.conv2d")
    assert all((c.attrs()["data_layout"], c.attrs()["kernel_layout"]) == ("NCHW", "OIHW") for c in convs)
    assert all(bn.attrs()["axis"] == 1 for bn in ops_named(back, "nn.batch_norm"))
    assert_close(run(back, {"data": data}), expected)


def test_resnet18_back_to_nchw_after_fold_constant(resnet18, resnet18_nhwc):
    """The weights are HWIO constants now: each gets one HWIO->OIHW transform, folded again."""
    mod, data, expected = resnet18
    with PassContext(opt_level=3):
        back = ConvertLayout(NCHW)(FoldConstant()(resnet18_nhwc))
        assert diff(op_counts(back), op_counts(mod)) == {"nn.layout_transform": 21}
        refolded = FoldConstant()(back)
    assert diff(op_counts(refolded), op_counts(mod)) == {}
    assert_close(run(refolded, {"data": data}), expected)


class OpDiffer(PassInstrument):
    """The tutorial's RelayCallNodeDiffer: (depth, pass name, op-count change) of passes that change counts."""

    def __init__(self):
        self.stack, self.diffs = [], []

    def run_before_pass(self, mod, info):
        self.stack.append(op_counts(mod))

    def run_after_pass(self, mod, info):
        change = diff(op_counts(mod), self.stack.pop())
        if change:
            self.diffs.append((len(self.stack), info.name, change))


def test_tutorial_sequential_op_diff_on_bound_resnet18():
    """docs/architecture.md §5: FoldConstant, ConvertLayout (with its required CanonicalizeOps), FoldConstant."""
    mod, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 224, 224))
    mod = bind_params_by_name(mod, params)
    differ = OpDiffer()
    seq = Sequential([FoldConstant(), ConvertLayout(NHWC), FoldConstant()])
    with PassContext(opt_level=3, instruments=[differ]):
        seq(mod)
    assert differ.diffs == [
        (1, "CanonicalizeOps", {"nn.add": 1, "nn.bias_add": -1}),
        (1, "ConvertLayout", {"nn.expand_dims": 1, "nn.layout_transform": 23}),
        (1, "FoldConstant", {"nn.expand_dims": -1, "nn.layout_transform": -21}),
        (0, "sequential", {"nn.add": 1, "nn.layout_transform": 2, "nn.bias_add": -1}),
    ]


# --- the tiny model with unbound parameters -------------------------------------------------


def test_tiny_unbound_parameters_get_transforms_and_outputs_match():
    mod, params = tiny.get_workload(image_shape=(3, 8, 8), channels=4)
    data = np.random.RandomState(1).normal(size=(1, 3, 8, 8)).astype("float32")
    with PassContext(opt_level=3):
        canonical = CanonicalizeOps()(mod)
        converted = ConvertLayout(NHWC)(canonical)
        back = ConvertLayout(NCHW)(converted)
    assert diff(op_counts(converted), op_counts(canonical)) == {"nn.layout_transform": 3, "nn.expand_dims": 1}
    (weight_transform,) = [t for t in ops_named(converted, "nn.layout_transform") if t.attrs()["src_layout"] == "OIHW"]
    assert weight_transform.operands[0].name_hint == "conv_weight"
    (expand,) = ops_named(converted, "nn.expand_dims")
    assert expand.operands[0].name_hint == "fc_bias"
    expected = run(mod, {"data": data}, params)
    assert_close(run(converted, {"data": data}, params), expected)
    assert_close(run(back, {"data": data}, params), expected)
    assert op_counts(back)["nn.layout_transform"] == 0


# --- ShuffleNet's channel shuffle stays in NHWC -----------------------------------------------


def shuffle_module(groups: int, c: int, h: int, w: int):
    """conv 1x1 -> channel shuffle (reshape (1, groups, c/groups, h, w), swap, reshape) -> conv 1x1."""
    from module_builder import make_module

    def body(args, emit):
        first = emit(nn.make("nn.conv2d", [args["x"], args["w1"]]))
        split = emit(nn.make("nn.reshape", [first], newshape=(1, groups, c // groups, h, w)))
        swapped = emit(nn.make("nn.transpose", [split], axes=(0, 2, 1, 3, 4)))
        merged = emit(nn.make("nn.reshape", [swapped], newshape=(1, c, h, w)))
        return [emit(nn.make("nn.conv2d", [merged, args["w2"]]))]

    return make_module({"x": (1, c, h, w), "w1": (c, c, 1, 1), "w2": (c, c, 1, 1)}, body)


@pytest.mark.parametrize("groups, c, h, w", [(2, 6, 4, 5), (3, 6, 1, 3), (4, 8, 3, 3)])
def test_channel_shuffle_stays_nhwc_and_matches_numpy(groups, c, h, w):
    from xrelay.lowering import lower

    rng = np.random.RandomState(groups)
    x, w1, w2 = (rng.uniform(-1, 1, s).astype("float32") for s in ((1, c, h, w), (c, c, 1, 1), (c, c, 1, 1)))
    # The reference, written out: 1x1 convs are channel matmuls; the shuffle interleaves the groups.
    first = np.einsum("oc,nchw->nohw", w1[:, :, 0, 0], x)
    shuffled = np.stack([first[:, g * (c // groups) + k] for k in range(c // groups) for g in range(groups)], axis=1)
    expected = np.einsum("oc,nchw->nohw", w2[:, :, 0, 0], shuffled)
    module = shuffle_module(groups, c, h, w)
    with PassContext(opt_level=3):
        converted = ConvertLayout(NHWC)(module)
        back = ConvertLayout(NCHW)(converted)
    # Transforms of the input, the two weights and the result only; the one transpose swaps the
    # last two axes of the NHWC split (N, H, W, g, c/g).
    transforms = ops_named(converted, "nn.layout_transform")
    assert sorted(t.operands[0].name_hint or "" for t in transforms)[-3:] == ["w1", "w2", "x"]
    assert len(transforms) == 4
    (transpose,) = ops_named(converted, "nn.transpose")
    assert tuple(transpose.attrs()["axes"]) == (0, 1, 2, 4, 3)
    assert tuple(transpose.operands[0].type.get_shape()) == (1, h, w, groups, c // groups)
    inputs = {"x": x, "w1": w1, "w2": w2}
    for graph in (module, converted, back):
        assert_close(run(graph, inputs), expected)
    assert_close(run(lower(converted, to="linalg"), inputs), expected)
    assert op_counts(back) == op_counts(module)
