"""Lowerings of the upsampling ops (nn.conv2d_transpose, nn.resize2d) to linalg on tensors.

A transposed convolution is a convolution (lowered as nn.conv2d's, so it reaches the same named op and
kernels) over the input spread out with zeros: the input is inserted at every stride
(`tensor.insert_slice` with strides) into a zero tensor framed by the dilated kernel's reach, the kernel
is flipped and its channel axes swapped (a `linalg.generic` gathering `w[c, o, k - 1 - kh]`), and the
uncropped result is cropped by `padding` (`tensor.extract_slice`). Nearest resizing is a gather
(`tensor.extract` at constant per-axis index tables); linear resizing is two contractions with constant
per-axis interpolation matrices (dialects/resize_tables.py), output rows then columns.
"""

from __future__ import annotations

from xdsl.dialects import tensor
from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import Operation, SSAValue

from xrelay.dialects import nn
from xrelay.dialects.layout import pad4, pair
from xrelay.dialects.resize_tables import axis_tables
from xrelay.lowering.builders import PARALLEL, REDUCTION, Emitter, affine_map, dims, is_float
from xrelay.lowering.to_linalg.base import lowers, shape_of
from xrelay.lowering.to_linalg.window import emit_conv2d


@lowers(nn.Conv2DTransposeOp)
def lower_conv2d_transpose(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.conv2d_transpose → zero-spread input, flipped weight, nn.conv2d's lowering, crop."""
    attrs = op.attrs()
    data, weight = op.operands
    element_type = data.type.get_element_type()
    groups = int(attrs["groups"])
    (sh, sw), (dh, dw), (oph, opw) = pair(attrs["strides"]), pair(attrs["dilation"]), pair(attrs["output_padding"])
    top, left, bottom, right = pad4(attrs["padding"], "nn.conv2d_transpose")
    n, c, h, w = shape_of(data)
    _, per_group, kh, kw = shape_of(weight)
    spread_shape = [n, c, (h - 1) * sh + 1 + 2 * dh * (kh - 1) + oph, (w - 1) * sw + 1 + 2 * dw * (kw - 1) + opw]
    spread = e.add(tensor.InsertSliceOp.from_static_parameters(
        data, e.filled(0, spread_shape, element_type), [0, 0, dh * (kh - 1), dw * (kw - 1)], [n, c, h, w],
        [1, 1, sh, sw]))

    # The weight as nn.conv2d's (OIHW, groups outermost in O), the kernel flipped: a gather (IREE's
    # unit-dimension folding mishandles a map reading `k - 1 - kh`).
    def flip(b, args):
        g, o, i, y, x = (b.loop_index(d) for d in range(5))
        channel = b.binary("add", b.binary("mul", g, b.index(c // groups)), i)
        return b.extract(weight, [channel, o, b.binary("sub", b.index(kh - 1), y), b.binary("sub", b.index(kw - 1), x)])

    flipped = e.generic([], e.empty([groups, per_group, c // groups, kh, kw], element_type),
                        [affine_map(5, dims(5))], [PARALLEL] * 5, flip)
    conv_weight = e.reshape(flipped, (groups * per_group, c // groups, kh, kw))

    full_h, full_w = spread_shape[2] - dh * (kh - 1), spread_shape[3] - dw * (kw - 1)
    conv_attrs = {"data_layout": "NCHW", "kernel_layout": "OIHW", "out_layout": "NCHW", "strides": (1, 1),
                  "dilation": (dh, dw), "groups": groups, "padding": (0, 0, 0, 0)}
    full = emit_conv2d(e, spread, conv_weight, conv_attrs,
                       TensorType(element_type, [n, groups * per_group, full_h, full_w]))
    if not any((top, left, bottom, right)):
        return [full]
    sizes = [n, groups * per_group, full_h - top - bottom, full_w - left - right]
    return [e.add(tensor.ExtractSliceOp.from_static_parameters(full, [0, 0, top, left], sizes))]


@lowers(nn.Resize2DOp)
def lower_resize2d(op: Operation, e: Emitter) -> list[SSAValue]:
    """nn.resize2d → a gather at constant index tables (nearest) or two contractions (linear)."""
    attrs = op.attrs()
    (data,) = op.operands
    element_type = data.type.get_element_type()
    n, c, h, w = shape_of(data)
    out_h, out_w = attrs["size"]
    rows, cols = axis_tables(attrs, (h, w))
    ln, lc, li, lj, lk = dims(5)
    if attrs["method"] != "linear":
        def gather(b, args):
            indices = [b.loop_index(0), b.loop_index(1), b.to_index(args[0]), b.to_index(args[1])]
            return b.extract(data, indices)

        return [e.generic([e.constant(rows, i64), e.constant(cols, i64)], e.empty([n, c, out_h, out_w], element_type),
                          [affine_map(4, [li]), affine_map(4, [lj]), affine_map(4, [ln, lc, li, lj])], [PARALLEL] * 4,
                          gather)]
    if not is_float(element_type):
        raise NotImplementedError(f"nn.resize2d: linear resizing needs a float element type, got {element_type}")

    def multiply_add(b, args):
        return b.binary("add", args[2], b.binary("mul", args[0], args[1]))

    iterators = [PARALLEL] * 4 + [REDUCTION]
    # Rows: t[n, c, i, w] = sum_h R[i, h] * x[n, c, h, w] (loops n, c, i, w, h).
    along_rows = e.generic(
        [e.constant(rows, element_type), data], e.filled(0, [n, c, out_h, w], element_type),
        [affine_map(5, [li, lk]), affine_map(5, [ln, lc, lk, lj]), affine_map(5, [ln, lc, li, lj])], iterators,
        multiply_add)
    # Columns: y[n, c, i, j] = sum_w t[n, c, i, w] * C[j, w] (loops n, c, i, j, w).
    return [e.generic(
        [along_rows, e.constant(cols, element_type)], e.filled(0, [n, c, out_h, out_w], element_type),
        [affine_map(5, [ln, lc, li, lk]), affine_map(5, [lj, lk]), affine_map(5, [ln, lc, li, lj])], iterators,
        multiply_add)]
