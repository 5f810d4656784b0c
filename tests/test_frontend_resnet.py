"""ResNet builder against TVM's printed ResNet-18 (tests/data/resnet18_seed_ir.txt) and hand counts."""

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import BlockArgument, OpResult

from xrelay.frontend import resnet

SEED_IR = Path(__file__).parent / "data" / "resnet18_seed_ir.txt"

# ---------------------------------------------------------------- the seed's Relay text, parsed here

_OP_LINE = re.compile(r"^\s*(?:%(\d+) = )?([\w.]+)\((.*)\) /\* ty=(.*) \*/;?$")
_GET_ITEM = re.compile(r"^\s*%(\d+) = %(\d+)\.(\d+) /\*")
_TENSOR = re.compile(r"Tensor\[\(([\d, ]*)\), (\w+)\]")
_TOP_LEVEL_COMMA = re.compile(r",\s*(?![^\[]*\])")


def _tensor_shapes(text):
    return [
        (tuple(int(d) for d in dims.split(",") if d.strip()), dtype)
        for dims, dtype in _TENSOR.findall(text)
    ]


def _attr_value(text):
    if text.startswith("["):
        return tuple(int(v) for v in text[1:-1].split(","))
    if text in ("True", "False"):
        return text == "True"
    if text.endswith("f"):
        return float(text[:-1])
    return int(text)


def parse_seed():
    """(signature [(name, shape)], ops [dict(id, name, operands, attrs, types)]) from the fixture."""
    lines = [ln for ln in SEED_IR.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    signature_line, body = lines[0], lines[1:]
    signature = [
        (name, tuple(int(d) for d in dims.split(",")))
        for name, dims in re.findall(r"%(\w+): Tensor\[\(([\d, ]*)\), float32\] /\*", signature_line)
    ]
    aliases = {}  # %N = %M.0  ->  ("op", M, 0)
    ops = []
    for line in body:
        if m := _GET_ITEM.match(line):
            aliases[m.group(1)] = ("op", int(m.group(2)), int(m.group(3)))
            continue
        m = _OP_LINE.match(line)
        assert m, f"unparsed seed line: {line}"
        value_id, name, args, ty = m.groups()
        operands, attrs = [], {}
        for piece in _TOP_LEVEL_COMMA.split(args):
            if piece.startswith("%"):
                ref = piece[1:]
                if ref.isdigit():
                    operands.append(aliases.get(ref, ("op", int(ref), 0)))
                else:
                    operands.append(("param", ref))
            else:
                key, value = piece.split("=", 1)
                attrs[key] = _attr_value(value)
        ops.append(
            dict(
                id=int(value_id) if value_id else None,
                name="nn.add" if name == "add" else name,
                operands=operands,
                attrs=attrs,
                types=_tensor_shapes(ty),
            )
        )
    return signature, ops


# Relay's defaults for the attributes its printer leaves out when they hold the default.
RELAY_DEFAULTS = {
    "nn.conv2d": {
        "strides": (1, 1), "padding": (0, 0, 0, 0), "dilation": (1, 1), "groups": 1,
        "data_layout": "NCHW", "kernel_layout": "OIHW",
    },
    "nn.batch_norm": {"axis": 1, "epsilon": 1e-5, "center": True, "scale": True},
    "nn.max_pool2d": {"dilation": (1, 1), "layout": "NCHW", "ceil_mode": False},
    "nn.global_avg_pool2d": {"layout": "NCHW"},
    "nn.bias_add": {"axis": 1},
    "nn.softmax": {"axis": -1},
}


def main_func(module):
    funcs = [op for op in module.ops if isinstance(op, FuncOp)]
    assert [f.sym_name.data for f in funcs] == ["main"]
    return funcs[0]


def body_ops(module):
    return [op for op in main_func(module).body.block.ops if not isinstance(op, ReturnOp)]


def op_counts(module):
    return Counter(op.name for op in body_ops(module))


@pytest.fixture(scope="module")
def resnet18():
    return resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 224, 224))


@pytest.fixture(scope="module")
def seed():
    return parse_seed()


# ---------------------------------------------------------------- ResNet-18 against the seed


def test_seed_fixture_is_complete(seed):
    signature, ops = seed
    assert len(signature) == 100 and signature[0] == ("data", (1, 3, 224, 224))
    # 91 body lines: 72 ops (21 conv2d, 19 batch_norm, 18 relu, 8 add, 6 others) + 19 tuple gets.
    assert len(ops) == 72 and ops[-1]["name"] == "nn.softmax" and ops[-2]["id"] == 89


def test_resnet18_signature_matches_seed(resnet18, seed):
    module, params = resnet18
    signature, _ = seed
    func = main_func(module)
    args = [(a.name_hint, tuple(a.type.get_shape())) for a in func.body.block.args]
    assert args == signature
    assert [str(a.type.element_type) for a in func.body.block.args] == ["f32"] * 100
    assert list(params) == [name for name, _ in signature[1:]]
    assert {k: v.shape for k, v in params.items()} == dict(signature[1:])
    assert [tuple(t.get_shape()) for t in func.function_type.outputs] == [(1, 1000)]


def test_resnet18_body_matches_seed_op_for_op(resnet18, seed):
    module, _ = resnet18
    _, seed_ops = seed
    ours = body_ops(module)
    assert [op.name for op in ours] == [s["name"] for s in seed_ops]

    # Name our values the way the seed does: result i of our k-th op is ("op", seed id of op k, i).
    ids = {op: s["id"] for op, s in zip(ours, seed_ops)}

    def ref(value):
        if isinstance(value, BlockArgument):
            return ("param", value.name_hint)
        assert isinstance(value, OpResult)
        return ("op", ids[value.op], value.index)

    for k, (op, s) in enumerate(zip(ours, seed_ops)):
        where = f"op {k} ({s['name']}, seed %{s['id']})"
        assert [ref(v) for v in op.operands] == s["operands"], where
        attrs = op.attrs()
        for key, expected in {**RELAY_DEFAULTS.get(s["name"], {}), **s["attrs"]}.items():
            got = attrs[key]
            if isinstance(expected, float):
                assert got == pytest.approx(expected, rel=1e-12), f"{where}: {key}"
            else:
                assert type(got) is type(expected) and got == expected, f"{where}: {key}={got!r}"
        got_types = [(tuple(r.type.get_shape()), str(r.type.element_type)) for r in op.results]
        assert got_types == [(shape, "f32") for shape, _ in s["types"]], where
    # The last op's value is what @main returns.
    ret = main_func(module).body.block.last_op
    assert isinstance(ret, ReturnOp) and ret.operands[0].op is ours[-1]


def test_only_bn_data_skips_the_scale(resnet18):
    module, _ = resnet18
    bns = [op for op in body_ops(module) if op.name == "nn.batch_norm"]
    assert [op.attrs()["scale"] for op in bns] == [False] + [True] * (len(bns) - 1)
    assert [op.operands[1].name_hint for op in bns][:2] == ["bn_data_gamma", "bn0_gamma"]


# ---------------------------------------------------------------- deeper networks: hand counts

# Per unit: basic = 2 x (bn, relu, conv); bottleneck = 3 x. Units per stage from TVM's table.
# conv2d = conv0 + k*U + 4 shortcuts; batch_norm = bn_data + bn0 + k*U + bn1; relu = 1 + k*U + 1; add = U.
HAND_COUNTS = {
    # layers: (U, conv2d, batch_norm, relu, add, parameters)
    18: (8, 21, 19, 18, 8, 4 * 19 + 21 + 2),
    34: (16, 37, 35, 34, 16, 4 * 35 + 37 + 2),
    50: (16, 53, 51, 50, 16, 4 * 51 + 53 + 2),
    101: (33, 104, 102, 101, 33, 4 * 102 + 104 + 2),
    152: (50, 155, 153, 152, 50, 4 * 153 + 155 + 2),
}


@pytest.mark.parametrize("layers", [18, 34, 50, 101, 152])
def test_op_counts(layers):
    module = resnet.get_net(batch_size=1, num_classes=1000, num_layers=layers)
    units, conv, bn, relu, add, n_params = HAND_COUNTS[layers]
    assert op_counts(module) == Counter(
        {
            "nn.conv2d": conv,
            "nn.batch_norm": bn,
            "nn.relu": relu,
            "nn.add": add,
            "nn.max_pool2d": 1,
            "nn.global_avg_pool2d": 1,
            "nn.batch_flatten": 1,
            "nn.dense": 1,
            "nn.bias_add": 1,
            "nn.softmax": 1,
        }
    )
    args = main_func(module).body.block.args
    assert len(args) == 1 + n_params
    assert len({a.name_hint for a in args}) == len(args)
    module.verify()


def test_resnet50_bottleneck_shapes():
    module = resnet.get_net(batch_size=2, num_classes=1000, num_layers=50)
    shapes = {a.name_hint: tuple(a.type.get_shape()) for a in main_func(module).body.block.args}
    expected = {
        "data": (2, 3, 224, 224),
        "conv0_weight": (64, 3, 7, 7),
        "stage1_unit1_bn1_gamma": (64,),
        "stage1_unit1_conv1_weight": (64, 64, 1, 1),
        "stage1_unit1_conv2_weight": (64, 64, 3, 3),
        "stage1_unit1_bn3_moving_var": (64,),
        "stage1_unit1_conv3_weight": (256, 64, 1, 1),
        "stage1_unit1_sc_weight": (256, 64, 1, 1),
        "stage1_unit2_conv1_weight": (64, 256, 1, 1),
        "stage2_unit1_conv1_weight": (128, 256, 1, 1),
        "stage2_unit1_sc_weight": (512, 256, 1, 1),
        "stage4_unit3_conv2_weight": (512, 512, 3, 3),
        "stage4_unit3_conv3_weight": (2048, 512, 1, 1),
        "bn1_gamma": (2048,),
        "fc1_weight": (1000, 2048),
        "fc1_bias": (1000,),
    }
    assert {k: shapes[k] for k in expected} == expected
    assert "stage4_unit4_conv1_weight" not in shapes and "stage2_unit4_bn3_beta" in shapes
    # The stride-2 convolution of a bottleneck unit is its first (1x1) one, as in TVM.
    convs = {op.operands[1].name_hint: op for op in body_ops(module) if op.name == "nn.conv2d"}
    assert convs["stage2_unit1_conv1_weight"].attrs()["strides"] == (2, 2)
    assert convs["stage2_unit1_conv2_weight"].attrs()["strides"] == (1, 1)
    assert tuple(convs["stage2_unit1_conv1_weight"].results[0].type.get_shape()) == (2, 128, 28, 28)
    assert tuple(body_ops(module)[-1].results[0].type.get_shape()) == (2, 1000)


def test_param_order_is_first_use_order_in_bottleneck_unit():
    module = resnet.get_net(batch_size=1, num_classes=1000, num_layers=50)
    names = [a.name_hint for a in main_func(module).body.block.args]
    unit = [n for n in names if n.startswith("stage1_unit1_")]
    def bn(i):
        return [f"stage1_unit1_bn{i}_{s}" for s in ("gamma", "beta", "moving_mean", "moving_var")]

    assert unit == (
        bn(1) + ["stage1_unit1_conv1_weight"] + bn(2) + ["stage1_unit1_conv2_weight"]
        + bn(3) + ["stage1_unit1_conv3_weight", "stage1_unit1_sc_weight"]
    )


def test_cifar_sized_input_uses_three_stages_and_a_3x3_stem():
    module, params = resnet.get_workload(num_layers=20, image_shape=(3, 28, 28), num_classes=10)
    counts = op_counts(module)
    assert counts["nn.conv2d"] == 1 + 2 * 9 + 3 and counts["nn.max_pool2d"] == 0
    assert params["conv0_weight"].shape == (16, 3, 3, 3) and params["fc1_weight"].shape == (10, 64)
    assert "stage4_unit1_conv1_weight" not in params


def test_nhwc_layout():
    module = resnet.get_net(
        batch_size=1, num_classes=1000, num_layers=18, image_shape=(224, 224, 3), layout="NHWC"
    )
    ops = body_ops(module)
    shapes = {a.name_hint: tuple(a.type.get_shape()) for a in main_func(module).body.block.args}
    assert shapes["data"] == (1, 224, 224, 3) and shapes["conv0_weight"] == (7, 7, 3, 64)
    assert shapes["stage2_unit1_sc_weight"] == (1, 1, 64, 128)
    assert all(op.attrs()["axis"] == 3 for op in ops if op.name == "nn.batch_norm")
    assert tuple(ops[1].results[0].type.get_shape()) == (1, 112, 112, 64)
    assert tuple(ops[-1].results[0].type.get_shape()) == (1, 1000)


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_layers"):
        resnet.get_workload(num_layers=19)
    with pytest.raises(ValueError, match="layout"):
        resnet.get_workload(layout="NCWH")
    with pytest.raises(ValueError, match="dtype"):
        resnet.get_workload(dtype="complex64")


# ---------------------------------------------------------------- initial values


def _xavier_bound(shape):
    """TVM's Xavier(uniform, avg, magnitude 3): fans are dims 1 and 0 times the kernel area."""
    area = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    fan_in, fan_out = shape[1] * area, shape[0] * area
    return np.sqrt(3.0 / ((fan_in + fan_out) / 2.0))


def test_initial_values(resnet18):
    _, params = resnet18
    for name, value in params.items():
        assert value.dtype == np.float32, name
        if name.endswith(("gamma", "moving_var")):
            assert np.all(value == 1), name
        elif name.endswith(("beta", "moving_mean", "bias")):
            assert np.all(value == 0), name
        else:
            assert name.endswith("weight")
            bound = _xavier_bound(value.shape)
            assert np.abs(value).max() <= np.float32(bound), name
            assert np.abs(value).max() > 0.95 * bound, name  # uniform over the whole range
            assert abs(value.mean()) < 0.05 * bound, name
            assert value.std() == pytest.approx(bound / np.sqrt(3), rel=0.05), name
    assert _xavier_bound((1000, 512)) == pytest.approx(np.sqrt(6 / 1512))
    assert _xavier_bound((64, 3, 7, 7)) == pytest.approx(np.sqrt(6 / (147 + 3136)))


def test_values_follow_tvm_random_stream(resnet18):
    """TVM: np.random.seed(seed), then one np.random.uniform per weight in argument order."""
    _, params = resnet18
    rng = np.random.RandomState(0)
    for name in ("conv0_weight", "stage1_unit1_conv1_weight", "stage1_unit1_conv2_weight"):
        shape = params[name].shape
        bound = _xavier_bound(shape)
        expected = rng.uniform(-bound, bound, size=shape).astype(np.float32)
        np.testing.assert_array_equal(params[name], expected, err_msg=name)


def test_seed_determinism(resnet18):
    _, params = resnet18
    _, again = resnet.get_workload(num_layers=18)
    _, other = resnet.get_workload(num_layers=18, seed=1)
    assert all(np.array_equal(params[k], again[k]) for k in params)
    assert not np.array_equal(params["conv0_weight"], other["conv0_weight"])
    assert np.array_equal(params["bn0_gamma"], other["bn0_gamma"])
