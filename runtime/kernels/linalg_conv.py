"""Convolutions recognised in linalg contractions, whatever their layout, run by Winograd or im2col.

`conv_geometry` reads which operand axes of a contraction hold N, C, H, W / F, C, KH, KW / N, F, OH,
OW (and G, a grouped convolution's group; or a depthwise convolution's); `ConvGeometry.runner`
computes it by Winograd, as im2col + GEMM (one GEMM per group) or by the depthwise kernel."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap

from xrelay.runtime.kernels.affine_views import data_axes, is_bare_permutation
from xrelay.runtime.kernels.conv import tap, winograd_weights
from xrelay.runtime.native.conv_kernels import NativeEpilogue, native_depthwise, native_im2col, native_winograd
from xrelay.runtime.parallel.threads import split_parts


@dataclass(frozen=True)
class ConvGeometry:
    """A contraction that is a 2-D convolution `out[n, f, oh, ow] += data[n, c, oh*s + kh*d + o, ...] *
    weight[f, c, kh, kw]` in any axis order: the operand axes holding each letter and the window."""

    data: int
    """Input index of the data operand."""
    weight: int
    """Input index of the weight operand."""
    data_axes: tuple[int, int, int, int]
    """Data axes holding N, C, H, W."""
    weight_axes: tuple[int, int, int, int]
    """Weight axes holding F, C, KH, KW."""
    out_axes: tuple[int, int, int, int]
    """Output axes holding N, F, OH, OW."""
    kernel_loops: tuple[int, int]
    """The KH and KW loops."""
    offset: tuple[int, int]
    """Constant (H, W) offsets of the window in the data."""
    strides: tuple[int, int]
    dilation: tuple[int, int]
    group_axes: tuple[int, int, int] | None = None
    """A grouped convolution's data, weight and output axes holding G (the data's just before its C,
    the output's just before its F; C, F and the weight's axes then count within one group), or None."""
    depthwise: bool = False
    """Each channel its own filter: `out[n, f, oh, ow] += data[n, f, ...] * weight[f, 0, kh, kw]`, the
    weight's C axis the one it indexes by the constant 0 (upstream's (C, KH, KW) weight has none: a unit
    axis after its last stands for it)."""

    def as_nchw(self, array: np.ndarray) -> np.ndarray | None:
        """An array of the output's shape as its N, F, OH, OW view (grouped: F counting every group's
        filters; None when its G and F axes do not merge)."""
        if self.group_axes is None:
            return array.transpose(self.out_axes)
        return _merge_groups(array, self.group_axes[2], self.out_axes)

    def _views(self, ins: list, out) -> tuple | None:
        """(weight array, x, w, y) for `ins` and `out` when data, weight and out are arrays of one float
        dtype, else None: x the data from its window offset as N, C, H, W, w the weight as F, C, KH, KW,
        y the output as N, F, OH, OW. Grouped: x and y with all groups' channels and filters (a view of
        each, None if its G and C axes do not merge), w as G, F, C, KH, KW."""
        data, weight = ins[self.data], ins[self.weight]
        if not (isinstance(data, np.ndarray) and isinstance(weight, np.ndarray) and isinstance(out, np.ndarray)
                and data.dtype == weight.dtype == out.dtype and data.dtype.kind == "f"):
            return None
        if self.group_axes is None:
            x = data.transpose(self.data_axes)[:, :, self.offset[0]:, self.offset[1]:]
            w = weight[..., None] if weight.ndim == 3 else weight  # (a depthwise weight with no C axis)
            return weight, x, w.transpose(self.weight_axes), out.transpose(self.out_axes)
        g_data, g_weight, g_out = self.group_axes
        x, y = _merge_groups(data, g_data, self.data_axes), _merge_groups(out, g_out, self.out_axes)
        if x is None or y is None:
            return None
        return (weight, x[:, :, self.offset[0]:, self.offset[1]:], weight.transpose(g_weight, *self.weight_axes),
                y)

    def runner(self, ranges: Sequence[int], constant_inputs: Sequence[bool], algorithm: str | None = None,
               parts: int | None = None, split_axis: int | None = None):
        """`run(ins, out, accumulate, epilogue=None) -> bool` on the native kernels: Winograd F(m x m, 3 x 3)
        as `algorithm` (set by `choose-conv-algorithm`) names it (`winograd-f2`, `winograd-f4`: for a 3x3
        stride-1 undilated convolution with a constant weight, its transform made once), else im2col +
        GEMM for a channels-last output (the direct kernel if "direct"; a grouped convolution one
        product per group); False where they do not run (the op then runs as its planned contraction on
        numpy, `contraction_plan`). `parts` (set by `split-kernels`) is how many threads the kernels use
        (None: one), and `split_axis`, the output axis they cut (the filters' or another: pixels; None:
        by shape). `epilogue(r0, r1)` is a `NativeEpilogue`, applied inside the kernel. A depthwise
        convolution runs by the depthwise kernel (its weight laid out (KH, KW, C) once), which cuts
        pixels: a split naming the channels runs whole; on numpy, tap by tap (`_depthwise_taps`)."""
        if self.depthwise and split_axis == self.out_axes[1]:
            parts = 1
        m = {"winograd-f2": 2, "winograd-f4": 4}.get(algorithm)
        constant = self.weight < len(constant_inputs) and bool(constant_inputs[self.weight])
        winograd = (m is not None and constant and self.group_axes is None and self.strides == self.dilation == (1, 1)
                    and tuple(ranges[d] for d in self.kernel_loops) == (3, 3))
        by_filters = None if split_axis is None else split_axis == self.out_axes[1]
        layout = _weight_layouts(constant)

        def run(ins: list, out: np.ndarray, accumulate: bool, epilogue=None) -> bool:
            views = self._views(ins, out)
            if views is None or not (epilogue is None or isinstance(epilogue, NativeEpilogue)):
                return False
            weight, x, w, y = views
            if self.depthwise:
                w = layout(weight, lambda: np.ascontiguousarray(w[:, 0].transpose(1, 2, 0)))
                return (native_depthwise(x, w, self.strides, self.dilation, y, accumulate, split_parts(parts), epilogue)
                        or epilogue is None and _depthwise_taps(x, w, self.strides, self.dilation, y, accumulate))
            n, f, oh, ow = y.shape
            if winograd and not (oh % m or ow % m) and native_winograd(
                    x, layout(weight, lambda: winograd_weights(w, m)), m, y, accumulate, split_parts(parts), epilogue,
                    by_filters):
                return True
            # Channels-last: F contiguous, and each image's rows a matrix of pixels (a slice of a
            # concatenation's channels, `memory_plan.place_in_slices`, has longer pixel strides).
            if y.strides[1] != y.itemsize or _matrix_view(y[:1].transpose(0, 2, 3, 1), ow * oh, f) is None:
                return False
            grouped = self.group_axes is not None
            per_group = w[0] if grouped else w  # F, C, KH, KW of one group
            # (KH, KW, C) rows, the groups' one above the other
            wmat = layout(weight, lambda: np.ascontiguousarray(
                w.transpose((0, 3, 4, 2, 1) if grouped else (2, 3, 1, 0)).reshape(-1, per_group.shape[0])), "im2col")
            return native_im2col(x, wmat, (per_group.shape[2], per_group.shape[3]), self.strides, self.dilation, y,
                                 accumulate, split_parts(parts),
                                 (n * oh * ow < f if by_filters is None else by_filters) and not grouped,
                                 epilogue, w.shape[0] if grouped else 1, algorithm == "direct")

        return run


def _depthwise_taps(x: np.ndarray, w: np.ndarray, strides: tuple[int, int], dilation: tuple[int, int],
                    y: np.ndarray, accumulate: bool) -> bool:
    """`y (+)= sum over taps (i, j) of x's view at the tap times w[i, j]` (x, y as N, C, H, W; w as KH, KW,
    C): a multiply-add of whole views per tap, where im2col's patch copy (C outermost) costs more."""
    scratch = np.empty_like(y)  # (in y's memory order: numpy's loops then run along it for both)
    for i, j in np.ndindex(*w.shape[:2]):
        term = y if (i, j) == (0, 0) and not accumulate else scratch
        np.multiply(tap(x, i, j, dilation, strides, y.shape[2:]), w[i, j, :, None, None], out=term)
        if term is scratch:
            np.add(y, scratch, out=y)
    return True


def _weight_layouts(constant: bool) -> Callable:
    """`layout(weight, make, form="")`: `make()`, the weight laid out for a kernel, made once per form
    while a `constant` weight is the same array."""
    kept: dict = {}  # form: (the weight array seen, its layout)

    def layout(weight: np.ndarray, make: Callable[[], np.ndarray], form: str = "") -> np.ndarray:
        entry = kept.get(form)
        if entry is None or entry[0] is not weight:
            entry = kept[form] = ((weight if constant else None), make())
        return entry[1]

    return layout


def _matrix_view(array: np.ndarray, rows: int, columns: int) -> np.ndarray | None:
    """`array` as a (rows, columns) view, or None when that needs a copy (numpy's reshape would copy)."""
    view = array.view()
    try:
        view.shape = (rows, columns)
    except AttributeError:
        return None
    return view


def _merge_groups(array: np.ndarray, group: int, axes: tuple[int, int, int, int]) -> np.ndarray | None:
    """The 5-D `array` as the 4-D view of its `axes` (N, C, H, W or N, F, OH, OW) whose C counts every
    group's channels (axis `group` outer, `axes[1]` inner), or None when those two do not merge."""
    t = array.transpose(axes[0], group, *axes[1:])
    _, g, c, _, _ = t.shape
    if g > 1 and c > 1 and t.strides[1] != c * t.strides[2]:
        return None
    merged = t.strides[2] if c > 1 else t.strides[1]
    return np.lib.stride_tricks.as_strided(t, (t.shape[0], g * c, *t.shape[3:]), (t.strides[0], merged, *t.strides[3:]),
                                           writeable=array.flags.writeable)


def conv_geometry(maps: Sequence[AffineMap], ranges: Sequence[int], ia: int, ib: int, out: int) -> ConvGeometry | None:
    """The convolution that contraction `maps[out] += maps[ia] * maps[ib]` is, if it is one.

    The output map is bare loops; the weight map bare loops (and a depthwise one's constant 0); the
    data map bare loops and two windows `oh * s + kh * d + o` (H then W) with oh an output loop and
    kh a weight loop. A loop's letter is the maps it appears in: N data and output, C data and
    weight, F weight and output, G all three (a grouped convolution's group: just before C in the
    data and just before F in the output, more than one channel per group). A depthwise convolution
    (each channel its own filter) has G but no C or F, and reads the weight's C axis at 0 or has
    none: it is a `depthwise` geometry, whose letters are N, C (the group), H, W / C, 0, KH, KW / N, C, OH, OW.
    """
    if not is_bare_permutation(maps[out]):
        return None
    for data, weight in ((ia, ib), (ib, ia)):
        found = _conv_of(maps, ranges, data, weight, [e.position for e in maps[out].results])
        if found is not None:
            return found
    return None


def _conv_of(maps: Sequence[AffineMap], ranges: Sequence[int], data: int, weight: int,
             o_dims: list[int]) -> ConvGeometry | None:
    """`conv_geometry` with `data` and `weight` the operands of those roles."""
    w_results = maps[weight].results
    zeros = [a for a, e in enumerate(w_results) if isinstance(e, AffineConstantExpr) and e.value == 0]
    w_axis = {e.position: a for a, e in enumerate(w_results) if isinstance(e, AffineDimExpr)}
    if len(w_axis) + len(zeros) != len(w_results) or len(zeros) > 1:
        return None
    axes = data_axes(maps[data], set(o_dims) - set(w_axis), set(w_axis) - set(o_dims))
    if axes is None:
        return None
    letters, windows = {}, []  # letter: (data axis, loop); (data axis, out loop, kernel loop, s, d, offset)
    for axis, a in enumerate(axes):
        if a[0] == "window":
            windows.append((axis, *a[1:]))
            continue
        d = a[1]
        letter = ("G" if d in w_axis else "N") if d in o_dims else "C" if d in w_axis else None
        if letter is None or letter in letters:
            return None
        letters[letter] = (axis, d)
    depthwise = "C" not in letters
    if len(windows) != 2 or "N" not in letters or (zeros and not depthwise):
        return None
    (h_axis, oh, kh, sh, dh, ch), (w_axis_, ow, kw, sw, dw, cw) = windows
    (n_axis, n), group = letters["N"], letters.get("G")
    if depthwise:  # the group is the channel, one filter each
        if group is None:
            return None
        (c_axis, c), f, group = group, group[1], None
    else:
        c_axis, c = letters["C"]
        filters = [d for d in w_axis if d in o_dims and d != (group and group[1])]
        if len(filters) != 1:
            return None
        f = filters[0]
    if len({n, c, f, oh, ow, kh, kw} | ({group[1]} if group else set())) != len(ranges):
        return None
    group_axes = None
    if group is not None:
        g_axis, g = group
        if g_axis != c_axis - 1 or o_dims.index(g) != o_dims.index(f) - 1 or ranges[c] < 2:
            return None
        group_axes = (g_axis, w_axis[g], o_dims.index(g))
    return ConvGeometry(
        data=data, weight=weight, data_axes=(n_axis, c_axis, h_axis, w_axis_),
        weight_axes=(w_axis[f], w_axis[c] if not depthwise else zeros[0] if zeros else len(w_results), w_axis[kh],
                     w_axis[kw]),
        out_axes=tuple(o_dims.index(d) for d in (n, f, oh, ow)),
        kernel_loops=(kh, kw), offset=(ch, cw), strides=(sh, sw), dilation=(dh, dw), group_axes=group_axes,
        depthwise=depthwise)
