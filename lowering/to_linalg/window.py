"""Lowerings of the windowed nn ops (conv2d, max/avg/global-avg pooling) to linalg on tensors.

Padding is a `tensor.pad` yielding 0 (-inf for max pooling), as upstream frontends write it. Convolutions in the layouts xDSL
has named ops for become `linalg.conv_2d_nchw_fchw` / `conv_2d_nhwc_hwcf` / `conv_2d_nhwc_fhwc`;
every other layout, and grouped convolutions (channels split by `tensor.expand_shape`), become a
`linalg.generic` with the same `acc + x * w` body. Pooling in NCHW and NHWC is upstream's named
pooling op (`linalg.pooling_nchw_max`, `pooling_nhwc_sum`, ...: `dialects/upstream_linalg.py`), in other
layouts a `linalg.generic` folding into the accumulator (`max(x, acc)` from a -inf init); both read a
shape-only `tensor.empty` window operand so every loop has a static range.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import tensor
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, i64
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineExpr

from xrelay.dialects import nn, upstream_linalg
from xrelay.lowering.builders import (
    PARALLEL,
    REDUCTION,
    Emitter,
    affine_map,
    dims,
    is_float,
    lowest,
    reassociation,
)

from xrelay.dialects.layout import avg_pool_divisor, check_layout, pad4, pair, pool_geometry
from xrelay.lowering.to_linalg.base import element_of, lowers

_NAMED_CONVS = {
    ("NCHW", "OIHW"): linalg.Conv2DNchwFchwOp,
    ("NHWC", "HWIO"): linalg.Conv2DNhwc_HwcfOp,
    ("NHWC", "OHWI"): linalg.Conv2DNhwc_FhwcOp,
}


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def pad_spatial(
    e: Emitter, value: SSAValue, layout: str, pad: Sequence[int], fill_value: float | int
) -> SSAValue:
    """`value` padded on H/W by (top, left, bottom, right) with `fill_value` (`Emitter.pad`: a `tensor.pad`)."""
    if not any(pad):
        return value
    top, left, bottom, right = pad
    h, w = layout.index("H"), layout.index("W")
    low, high = [0] * len(_shape(value)), [0] * len(_shape(value))
    low[h], low[w], high[h], high[w] = top, left, bottom, right
    return e.pad(value, low, high, fill_value)


def _split_axis(e: Emitter, value: SSAValue, axis: int, outer: int, collapse: bool = False) -> SSAValue:
    """Split (or, with collapse, merge back) axis `axis` into (outer, size // outer)."""
    shape = list(_shape(value))
    element_type = value.type.get_element_type()
    if collapse:
        groups = [[i] for i in range(axis)] + [[axis, axis + 1]] + [[i + 1] for i in range(axis + 1, len(shape) - 1)]
        new_shape = shape[:axis] + [shape[axis] * shape[axis + 1]] + shape[axis + 2:]
        return e.add(tensor.CollapseShapeOp.build(
            operands=[value], result_types=[TensorType(element_type, new_shape)],
            properties={"reassociation": reassociation(groups)}))
    groups = [[i] for i in range(axis)] + [[axis, axis + 1]] + [[i + 1] for i in range(axis + 1, len(shape))]
    new_shape = shape[:axis] + [outer, shape[axis] // outer] + shape[axis + 1:]
    return e.add(tensor.ExpandShapeOp(value, [], reassociation(groups), new_shape, TensorType(element_type, new_shape)))


def _int_pair_attr(values: Sequence[int]) -> DenseIntOrFPElementsAttr:
    return DenseIntOrFPElementsAttr.from_list(TensorType(i64, [2]), list(values))


@lowers(nn.Conv2DOp)
def lower_conv2d(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.conv2d → tensor.pad + named linalg conv, or a linalg.generic for other layouts/groups."""
    return [emit_conv2d(e, op.operands[0], op.operands[1], op.attrs(), op.results[0].type)]


def emit_conv2d(e: Emitter, data: SSAValue, weight: SSAValue, attrs: dict, result_type: TensorType) -> SSAValue:
    """The linalg of an nn.conv2d with these operands and attributes (`lower_conv2d`)."""
    element_type = result_type.get_element_type()
    data_layout = check_layout(attrs["data_layout"] or "NCHW", "NCHW", "nn.conv2d data")
    kernel_layout = check_layout(attrs["kernel_layout"] or "OIHW", "OIHW", "nn.conv2d kernel")
    out_layout = check_layout(attrs["out_layout"] or data_layout, "NCHW", "nn.conv2d out")
    strides = pair(attrs["strides"])
    dilation = pair(attrs["dilation"])
    groups = int(attrs["groups"])
    x = pad_spatial(e, data, data_layout, pad4(attrs["padding"], "nn.conv2d"), 0)
    out_shape = list(result_type.get_shape())

    named = _NAMED_CONVS.get((data_layout, kernel_layout))
    if groups == 1 and out_layout == data_layout and named is not None:
        init = e.filled(0, out_shape, element_type)
        return e.add(named([x, weight], [init], [result_type],
                           strides=_int_pair_attr(strides), dilations=_int_pair_attr(dilation)))

    # Generic: loops (n, [g,] f, oh, ow, c, kh, kw); with groups the channel axes are split. A depthwise
    # convolution (each group one input and one output channel) has loops (n, f, oh, ow, kh, kw), its
    # weight's input-channel axis read at 0: no reshape between it and its epilogue (form-kernels).
    grouped = groups > 1
    depthwise = grouped and groups == _shape(data)[data_layout.index("C")] == out_shape[out_layout.index("C")]
    names = (["n", "f", "oh", "ow", "kh", "kw"] if depthwise else ["n", "g", "f", "oh", "ow", "c", "kh", "kw"]
             if grouped else ["n", "f", "oh", "ow", "c", "kh", "kw"])
    loop = dict(zip(names, dims(len(names))))
    if depthwise:
        init = e.filled(0, out_shape, element_type)
    elif grouped:
        x = _split_axis(e, x, data_layout.index("C"), groups)
        weight = _split_axis(e, weight, kernel_layout.index("O"), groups)
        out_c = out_layout.index("C")
        grouped_shape = out_shape[:out_c] + [groups, out_shape[out_c] // groups] + out_shape[out_c + 1:]
        init = e.filled(0, grouped_shape, element_type)
    else:
        init = e.filled(0, out_shape, element_type)

    def results(layout: str, letters: dict[str, list[AffineExpr]]) -> list[AffineExpr]:
        return [expr for letter in layout for expr in letters[letter]]

    channel = [loop["f"]] if depthwise else [loop["g"], loop["c"]] if grouped else [loop["c"]]
    out_channel = [loop["g"], loop["f"]] if grouped and not depthwise else [loop["f"]]
    data_map = results(data_layout, {
        "N": [loop["n"]], "C": channel,
        "H": [loop["oh"] * strides[0] + loop["kh"] * dilation[0]],
        "W": [loop["ow"] * strides[1] + loop["kw"] * dilation[1]]})
    weight_map = results(kernel_layout, {"O": out_channel, "I": [0 if depthwise else loop["c"]], "H": [loop["kh"]],
                                         "W": [loop["kw"]]})
    out_map = results(out_layout, {"N": [loop["n"]], "C": out_channel, "H": [loop["oh"]], "W": [loop["ow"]]})
    n = len(names)
    reductions = 2 if depthwise else 3
    iterators = [PARALLEL] * (n - reductions) + [REDUCTION] * reductions
    result = e.generic(
        [x, weight], init, [affine_map(n, data_map), affine_map(n, weight_map), affine_map(n, out_map)], iterators,
        lambda b, args: b.binary("add", args[2], b.binary("mul", args[0], args[1])))
    if grouped and not depthwise:
        result = _split_axis(e, result, out_layout.index("C"), groups, collapse=True)
    return result


_NAMED_POOLS = {
    ("NCHW", "max"): upstream_linalg.PoolingNchwMaxOp, ("NCHW", "add"): upstream_linalg.PoolingNchwSumOp,
    ("NHWC", "max"): upstream_linalg.PoolingNhwcMaxOp, ("NHWC", "add"): upstream_linalg.PoolingNhwcSumOp,
}


def _window_reduce(e: Emitter, x: SSAValue, layout: str, kernel, strides, dilation,
                   init: SSAValue, combine: str):
    """A window reduction over a `pad_spatial` result: upstream's named pooling op for NCHW and NHWC
    (`linalg.pooling_nchw_max`, `pooling_nhwc_sum`, ...), else a generic over loops (n, c, oh, ow, kh, kw)
    with body `combine(x, acc)`. Both read a shape-only `tensor.empty` window."""
    window = e.empty(kernel, x.type.get_element_type())
    named = _NAMED_POOLS.get((layout, combine))
    if named is not None:
        return e.add(named([x, window], [init], [init.type],
                           strides=_int_pair_attr(strides), dilations=_int_pair_attr(dilation)))
    n, c, oh, ow, kh, kw = dims(6)
    letters = {"N": n, "C": c, "H": oh * strides[0] + kh * dilation[0],
               "W": ow * strides[1] + kw * dilation[1]}
    out_letters = {"N": n, "C": c, "H": oh, "W": ow}
    maps = [affine_map(6, [letters[ch] for ch in layout]), affine_map(6, [kh, kw]),
            affine_map(6, [out_letters[ch] for ch in layout])]
    return e.generic([x, window], init, maps, [PARALLEL] * 4 + [REDUCTION] * 2,
                     lambda b, args: b.binary(combine, args[0], args[2]))


def _pool_operand(op: Operation, float_only: bool = False):
    """(attrs, layout, data, result type, element type) of a pool op, its layout checked and, for the
    average pools, its element type a float."""
    attrs = op.attrs()
    layout = check_layout(attrs["layout"] or "NCHW", "NCHW", op.name)
    (data,) = op.operands
    result_type = op.results[0].type
    element_type = result_type.get_element_type()
    if float_only and not is_float(element_type):
        raise NotImplementedError(f"{op.name}: only float element types lower to linalg, got {element_type}")
    return attrs, layout, data, result_type, element_type


@lowers(nn.MaxPool2DOp)
def lower_max_pool2d(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.max_pool2d → -inf padding + a `max(x, acc)` window generic from a -inf init."""
    attrs, layout, data, result_type, element_type = _pool_operand(op)
    kernel, strides, dilation, _, padded, _ = pool_geometry(
        attrs, *(_shape(data)[layout.index(a)] for a in "HW"), "nn.max_pool2d")
    x = pad_spatial(e, data, layout, padded, lowest(element_type))
    init = e.filled(lowest(element_type), result_type.get_shape(), element_type)
    return [_window_reduce(e, x, layout, kernel, strides, dilation, init, "max")]


@lowers(nn.AvgPool2DOp)
def lower_avg_pool2d(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.avg_pool2d → zero padding + a window-sum generic, divided by a constant (OH, OW) count tensor
    (`avg_pool_divisor`)."""
    attrs, layout, data, result_type, element_type = _pool_operand(op, float_only=True)
    in_shape = _shape(data)
    h, w = (in_shape[layout.index(a)] for a in "HW")
    kernel, strides, dilation, _, padded, _ = pool_geometry(attrs, h, w, "nn.avg_pool2d")
    x = pad_spatial(e, data, layout, padded, 0)
    out_shape = list(result_type.get_shape())
    summed = _window_reduce(e, x, layout, kernel, strides, dilation, e.filled(0, out_shape, element_type), "add")
    counts = e.constant(avg_pool_divisor(attrs, h, w, "nn.avg_pool2d"), element_type)
    loops = dims(4)
    count_map = affine_map(4, [loops[layout.index("H")], loops[layout.index("W")]])
    return [e.generic([summed, counts], e.empty(out_shape, element_type),
                      [affine_map(4, loops), count_map, affine_map(4, loops)], [PARALLEL] * 4,
                      lambda b, args: b.binary("div", args[0], args[1]))]


def _reduce_hw(e: Emitter, data: SSAValue, layout: str, init: float, combine: str) -> SSAValue:
    """`combine(x, acc)` over H and W from an `init`-filled tensor: loops follow the data's axes,
    H and W are the reductions, kept as size-1 output axes."""
    element_type = data.type.get_element_type()
    h, w = layout.index("H"), layout.index("W")
    out_shape = [1 if i in (h, w) else n for i, n in enumerate(_shape(data))]
    loops = dims(4)
    iterators = [REDUCTION if i in (h, w) else PARALLEL for i in range(4)]
    out_map = affine_map(4, [0 if i in (h, w) else d for i, d in enumerate(loops)])
    return e.generic([data], e.filled(init, out_shape, element_type), [affine_map(4, loops), out_map], iterators,
                     lambda b, args: b.binary(combine, args[0], args[1]))


@lowers(nn.GlobalAvgPool2DOp)
def lower_global_avg_pool2d(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.global_avg_pool2d → a sum over H and W into a zero init, then a multiply by 1 / (H * W)."""
    attrs, layout, data, result_type, element_type = _pool_operand(op, float_only=True)
    in_shape = _shape(data)
    out_shape = list(result_type.get_shape())
    summed = _reduce_hw(e, data, layout, 0, "add")
    scale = 1.0 / (in_shape[layout.index("H")] * in_shape[layout.index("W")])
    loops = dims(4)
    return [e.generic([summed], e.empty(out_shape, element_type), [affine_map(4, loops)] * 2, [PARALLEL] * 4,
                      lambda b, args: b.binary("mul", args[0], b.scalar(scale, element_type)))]


@lowers(nn.GlobalMaxPool2DOp)
def lower_global_max_pool2d(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.global_max_pool2d → a `max(x, acc)` reduction over H and W from a lowest-value init."""
    layout = check_layout(op.attrs()["layout"] or "NCHW", "NCHW", "nn.global_max_pool2d")
    (data,) = op.operands
    return [_reduce_hw(e, data, layout, lowest(element_of(op)), "max")]
