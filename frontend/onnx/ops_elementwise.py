"""Elementwise ops (unary, binary with broadcasting, activations) and reductions.

Activations without an nn op of their own are composed exactly (PRelu/LeakyRelu as
relu(x) - slope * relu(-x), Elu from exp of -relu(-x), Softplus in its overflow-free form).
"""

from __future__ import annotations

import numpy as np

from xrelay.frontend.onnx.ops_shape import axes_of, reshape_to
from xrelay.frontend.onnx.registry import converter, has_op

_UNARY = {"Relu": "nn.relu", "Sigmoid": "nn.sigmoid", "Tanh": "nn.tanh", "Erf": "nn.erf", "Exp": "nn.exp",
          "Log": "nn.log", "Abs": "nn.abs", "Sqrt": "nn.sqrt", "Neg": "nn.negative"}
_BINARY = {"Add": "nn.add", "Sub": "nn.subtract", "Mul": "nn.multiply", "Div": "nn.divide",
           "Pow": "nn.power"}


def _register_unary(op_type: str, op_name: str) -> None:
    converter(op_type, needs=(op_name,))(lambda node: node.emit(op_name, node.value(0)))


for _op_type, _op_name in _UNARY.items():
    _register_unary(_op_type, _op_name)


def legacy_broadcast(node, a, b):
    """Opset < 7 `broadcast=1` with `axis`: b's dims line up with a's from `axis` on."""
    if node.opset >= 7 or not node.attr("broadcast", 0):
        return b
    rank_a, shape_b = len(a.type.get_shape()), tuple(b.type.get_shape())
    axis = node.attr("axis", rank_a - len(shape_b))
    axis = axis % rank_a if axis < 0 else axis
    trailing = rank_a - axis - len(shape_b)
    if trailing < 0:
        raise node.error(f"cannot broadcast {shape_b} from axis {axis} of a rank-{rank_a} tensor")
    return reshape_to(node, b, shape_b + (1,) * trailing) if trailing else b


def _binary(node):
    a, b = node.values_alike(0, 1)
    return node.emit(_BINARY[node.op_type], a, legacy_broadcast(node, a, b))


for _op_type, _op_name in _BINARY.items():
    converter(_op_type, needs=(_op_name,))(_binary)


_VARIADIC = {"Sum": "nn.add", "Mean": "nn.add", "Max": "nn.maximum", "Min": "nn.minimum"}


def _variadic(node):
    """Sum/Max/Min/Mean of any number of inputs: a chain of binary ops (Mean divides at the end)."""
    values = node.values_alike(*[i for i in range(len(node.inputs)) if node.has(i)])
    result = values[0]
    for value in values[1:]:
        result = node.emit(_VARIADIC[node.op_type], result, value)
    if node.op_type == "Mean" and len(values) > 1:
        result = node.emit("nn.divide", result, node.scalar(len(values), result))
    return result


for _op_type, _op_name in _VARIADIC.items():
    converter(_op_type, needs=(_op_name,) + (("nn.divide",) if _op_type == "Mean" else ()))(_variadic)


@converter("Reciprocal", needs=("nn.divide",))
def reciprocal(node):
    x = node.value(0)
    return node.emit("nn.divide", node.scalar(1.0, x), x)


def _negative_part(node, x):
    """min(x, 0), exactly: -relu(-x)."""
    return node.emit("nn.negative", node.emit("nn.relu", node.emit("nn.negative", x)))


@converter("LeakyRelu", needs=("nn.relu", "nn.negative", "nn.multiply", "nn.add"))
def leaky_relu(node):
    x, alpha = node.value(0), node.attr("alpha", 0.01)
    if has_op("nn.leaky_relu"):
        return node.emit("nn.leaky_relu", x, alpha=alpha)
    scaled = node.emit("nn.multiply", node.scalar(alpha, x), _negative_part(node, x))
    return node.emit("nn.add", node.emit("nn.relu", x), scaled)


@converter("PRelu", needs=("nn.relu", "nn.negative", "nn.multiply", "nn.add"))
def prelu(node):
    x, slope = node.values_alike(0, 1)
    shape, slope_shape = node.shape(0), node.shape(1)
    rank = len(shape)
    if node.opset < 7 and rank > 2 and len(slope_shape) == 1 and slope_shape[0] == shape[1] > 1:
        # Opset 6 (PyTorch's export) gives one slope per channel as a 1-D tensor.
        slope_shape = (shape[1],) + (1,) * (rank - 2)
        slope = reshape_to(node, slope, slope_shape)
    aligned = (1,) * (rank - len(slope_shape)) + tuple(slope_shape)
    if has_op("nn.prelu") and rank > 1 and aligned[1] == shape[1] and \
            all(d == 1 for i, d in enumerate(aligned) if i != 1):
        return node.emit("nn.prelu", x, reshape_to(node, slope, (shape[1],)), axis=1)
    scaled = node.emit("nn.multiply", slope, _negative_part(node, x))
    return node.emit("nn.add", node.emit("nn.relu", x), scaled)


def _elu(node, x, alpha):
    """relu(x) + alpha * (exp(min(x, 0)) - 1)."""
    minus_one = node.emit("nn.subtract", node.emit("nn.exp", _negative_part(node, x)), node.scalar(1.0, x))
    return node.emit("nn.add", node.emit("nn.relu", x), node.emit("nn.multiply", node.scalar(alpha, x), minus_one))


_ELU_NEEDS = ("nn.relu", "nn.negative", "nn.exp", "nn.subtract", "nn.multiply", "nn.add")


@converter("Elu", needs=_ELU_NEEDS)
def elu(node):
    return _elu(node, node.value(0), node.attr("alpha", 1.0))


@converter("Selu", needs=_ELU_NEEDS)
def selu(node):
    x = node.value(0)
    alpha = node.attr("alpha", 1.67326319217681884765625)
    gamma = node.attr("gamma", 1.05070102214813232421875)
    return node.emit("nn.multiply", node.scalar(gamma, x), _elu(node, x, alpha))


@converter("Softplus", needs=("nn.relu", "nn.abs", "nn.negative", "nn.exp", "nn.add", "nn.log"))
def softplus(node):
    """log(1 + exp(x)) = relu(x) + log(1 + exp(-|x|)), which never overflows."""
    x = node.value(0)
    tail = node.emit("nn.exp", node.emit("nn.negative", node.emit("nn.abs", x)))
    log1p = node.emit("nn.log", node.emit("nn.add", node.scalar(1.0, x), tail))
    return node.emit("nn.add", node.emit("nn.relu", x), log1p)


@converter("Softsign", needs=("nn.abs", "nn.add", "nn.divide"))
def softsign(node):
    x = node.value(0)
    return node.emit("nn.divide", x, node.emit("nn.add", node.scalar(1.0, x), node.emit("nn.abs", x)))


def _float_bound(node, value: float) -> float:
    return float(np.clip(value, -np.finfo(np.float32).max, np.finfo(np.float32).max))


@converter("Clip", needs=("nn.clip",))
def clip(node):
    if node.opset < 11:
        low, high = node.attr("min", -np.inf), node.attr("max", np.inf)
    else:
        low = float(node.required_static(1, "min").reshape(-1)[0]) if node.has(1) else -np.inf
        high = float(node.required_static(2, "max").reshape(-1)[0]) if node.has(2) else np.inf
    return node.emit("nn.clip", node.value(0), a_min=_float_bound(node, low), a_max=_float_bound(node, high))


def _hard_sigmoid(node, x, alpha, beta):
    linear = node.emit("nn.add", node.emit("nn.multiply", x, node.scalar(alpha, x)), node.scalar(beta, x))
    return node.emit("nn.clip", linear, a_min=0.0, a_max=1.0)


@converter("HardSigmoid", needs=("nn.clip", "nn.multiply", "nn.add"))
def hard_sigmoid(node):
    return _hard_sigmoid(node, node.value(0), node.attr("alpha", 0.2), node.attr("beta", 0.5))


@converter("HardSwish", needs=("nn.clip", "nn.multiply", "nn.add"))
def hard_swish(node):
    x = node.value(0)
    return node.emit("nn.multiply", x, _hard_sigmoid(node, x, 1.0 / 6.0, 0.5))


_REDUCE = {"ReduceMean": "nn.mean", "ReduceSum": "nn.sum", "ReduceMax": "nn.max"}


def _reduce(node):
    rank = len(node.shape(0))
    # ReduceSum takes axes as an input from opset 13, the others from 18.
    axes = axes_of(node, rank, attr_from=13 if node.op_type == "ReduceSum" else 18)
    if axes is None and node.attr("noop_with_empty_axes", 0):
        return node.value(0)
    keepdims = bool(node.attr("keepdims", 1))
    return node.emit(_REDUCE[node.op_type], node.value(0), axis=axes, keepdims=keepdims)


for _op_type, _op_name in _REDUCE.items():
    converter(_op_type, needs=(_op_name,))(_reduce)


# --- comparisons and logic: truth values are i64 0/1 tensors (xrelay has no boolean tensors) -------------

_COMPARE = {"Equal": "nn.equal", "Less": "nn.less", "LessOrEqual": "nn.less_equal", "Greater": "nn.greater",
            "GreaterOrEqual": "nn.greater_equal", "And": "nn.logical_and", "Or": "nn.logical_or",
            "Xor": "nn.logical_xor"}


def _compare(node):
    a, b = node.values_alike(0, 1)
    return node.emit(_COMPARE[node.op_type], a, legacy_broadcast(node, a, b))


for _op_type, _op_name in _COMPARE.items():
    converter(_op_type, needs=(_op_name,))(_compare)


@converter("Not", needs=("nn.logical_not",))
def logical_not(node):
    return node.emit("nn.logical_not", node.value(0))


@converter("Where", needs=("nn.where",))
def where(node):
    x, y = node.values_alike(1, 2)
    return node.emit("nn.where", node.value(0), x, y)


@converter("ArgMax", "ArgMin", needs=("nn.argmax", "nn.argmin"))
def arg_reduce(node):
    rank = len(node.shape(0))
    axis = node.attr("axis", 0)
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    return node.emit("nn.argmax" if node.op_type == "ArgMax" else "nn.argmin", node.value(0), axis=[axis % rank],
                     keepdims=bool(node.attr("keepdims", 1)),
                     select_last_index=bool(node.attr("select_last_index", 0)))


@converter("CumSum", needs=("nn.cumsum",))
def cumsum(node):
    rank = len(node.shape(0))
    axis = int(node.required_static(1, "the axis").reshape(-1)[0])
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    return node.emit("nn.cumsum", node.value(0), axis=axis % rank, exclusive=bool(node.attr("exclusive", 0)),
                     reverse=bool(node.attr("reverse", 0)))


@converter("TopK", needs=("nn.topk",))
def topk(node):
    rank = len(node.shape(0))
    k = node.attr("k") if node.opset < 10 else int(node.required_static(1, "k").reshape(-1)[0])
    axis = node.attr("axis", -1)
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    # sorted=0 lets any order through: the sorted one is among them.
    op = node.emit_op("nn.topk", node.value(0), k=int(k), axis=axis % rank,
                      is_ascend=not node.attr("largest", 1))
    return list(op.results)
