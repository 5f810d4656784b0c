"""Contractions with a one-element side per matrix product over a small reduction space (a depthwise
convolution: per channel, a window of the data times one weight), which a batched matmul runs badly:
`depthwise_geometry` recognises a depthwise convolution, which then runs as a convolution step
(`conv_epilogue.ConvStep`: its epilogue and destination pad inside the native kernel); any other such
contraction `tap_contraction` computes by the native taps kernel, or tap by tap over loop-space views."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap

from xrelay.runtime.kernels.affine_views import LoopView, is_bare_permutation, loop_order, used_loops, window_form
from xrelay.runtime.kernels.linalg_conv import ConvGeometry
from xrelay.runtime.native.conv_kernels import NativeEpilogue, native_depthwise, native_taps
from xrelay.runtime.parallel.threads import split_parts


MAX_TAPS = 64
"""Window reductions over at most this many points run tap by tap: a contraction (`tap_contraction`)
and a pooling window (`linalg_structured.compile_structured`); a plain reduction (each input's map
one loop per axis: a global average pool's sum, a softmax's) is one `ufunc.reduce`."""


def tap_contraction(maps: Sequence[AffineMap], ranges: Sequence[int], ia: int, ib: int, out: int,
                    reuse_views: Sequence[bool] = (False,)):
    """`run(ins, out, accumulate) -> bool` computing the contraction `maps[out] += maps[ia] * maps[ib]`
    for the products a batched matmul runs badly: a side of each matrix product is one element (a
    depthwise convolution is, per channel, a window of the data times one weight) and the reduction
    space is small (the window). With the native kernels built, one call to `native_taps` (kept for
    the next call with the same arrays while `reuse_views[0]`: a planned program); otherwise one
    multiply-add over whole loop-space views per point of the reduction space. False when the arrays
    are not all of one float dtype; None when the contraction is not of that kind."""
    used_a, used_b, used_o = used_loops(maps[ia]), used_loops(maps[ib]), used_loops(maps[out])
    reduction = [d for d in range(len(ranges)) if d not in used_o]
    if not reduction or any(d not in used_a or d not in used_b for d in reduction):
        return None
    if len(used_o) + len(reduction) != len(ranges):
        return None
    size = lambda loops: int(np.prod([ranges[d] for d in loops], dtype=np.int64))  # noqa: E731
    if size(reduction) > MAX_TAPS or min(size(used_a - used_b), size(used_b - used_a)) != 1:
        return None
    views = [LoopView(maps[i], ranges) for i in (ia, ib, out)]
    if not all(v.linear for v in views):
        return None
    # Loop axes in the output's memory order (numpy's loops run fastest along the last axis).
    order = loop_order(maps[out]) + reduction
    position = {d: i for i, d in enumerate(order)}
    taps = []
    for point in np.ndindex(*(ranges[d] for d in reduction)):
        index = [slice(None)] * len(ranges)
        for d, t in zip(reduction, point):
            index[position[d]] = slice(t, t + 1)
        taps.append(tuple(index))
    # The output's innermost loop of more than one point, in `order` (the native kernel's vector loop).
    inner = max((i for i, d in enumerate(order[:len(used_o)]) if ranges[d] > 1), default=0)
    last_native: list = [None]  # (a, b, target, accumulate, the native call) of the last native call

    def run(ins: list, target: np.ndarray, accumulate: bool) -> bool:
        a, b = ins[ia], ins[ib]
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and isinstance(target, np.ndarray)
                and a.dtype == b.dtype == target.dtype and a.dtype.kind == "f"):
            return False
        kept = last_native[0]
        if kept is not None and kept[0] is a and kept[1] is b and kept[2] is target and kept[3] == accumulate:
            return kept[4]()
        va, vb, vo = (v.transpose(order) for v in (views[0](a), views[1](b), views[2](target, writeable=True)))
        call = native_taps([va, vb, vo], len(used_o), inner, accumulate)
        if call is not None and call():
            if reuse_views[0]:  # the same arrays next run: the same call
                last_native[0] = (a, b, target, accumulate, call)
            return True
        scratch = np.empty(vo.shape, vo.dtype)
        for k, tap in enumerate(taps):
            if k == 0 and not accumulate:
                np.multiply(va[tap], vb[tap], out=vo)
            else:
                np.multiply(va[tap], vb[tap], out=scratch)
                np.add(vo, scratch, out=vo)
        return True

    return run


class DepthwiseGeometry(ConvGeometry):
    """A depthwise convolution `out[n, f, oh, ow] += data[n, f, oh*s + kh*d + o, ...] * weight[f, 0, kh, kw]`
    (each channel its own filter) in any axis order: `weight_axes`' C is the weight's axis indexed by
    the constant 0. Its runner is the native depthwise kernel (epilogue applied inside, as im2col's),
    or numpy tap by tap."""

    def runner(self, ranges: Sequence[int], constant_inputs: Sequence[bool], algorithm: str | None = None,
               parts: int | None = None, split_axis: int | None = None):
        """`run(ins, out, accumulate, epilogue=None) -> bool` as `ConvGeometry.runner`'s; a constant
        weight laid out (KH, KW, C) once. The native kernel cuts pixels: a split naming the channels
        (which it cannot cut) runs whole."""
        if split_axis is not None and split_axis == self.out_axes[1]:
            parts = 1
        constant = self.weight < len(constant_inputs) and bool(constant_inputs[self.weight])
        kept: list = [None, None]  # the weight array seen, its (KH, KW, C) layout

        def run(ins: list, out: np.ndarray, accumulate: bool, epilogue=None) -> bool:
            views = self._views(ins, out)
            if views is None:
                return False
            weight, x, w, y = views
            n, f, oh, ow = y.shape
            kh, kw = w.shape[2:]
            if kept[0] is not weight:
                kept[:] = (weight if constant else None), np.ascontiguousarray(w[:, 0].transpose(1, 2, 0))
            if epilogue is None or isinstance(epilogue, NativeEpilogue):
                if native_depthwise(x, kept[1], self.strides, self.dilation, y, accumulate, split_parts(parts),
                                    epilogue):
                    return True
            (sh, sw), (dh, dw) = self.strides, self.dilation
            for i in range(kh):
                for j in range(kw):
                    tap = x[:, :, i * dh:i * dh + (oh - 1) * sh + 1:sh, j * dw:j * dw + (ow - 1) * sw + 1:sw]
                    product = tap * w[:, 0, i, j][None, :, None, None]
                    if i == j == 0 and not accumulate:
                        y[...] = product
                    else:
                        y += product
            if epilogue is not None:
                epilogue(0, oh)
            return True

        return run


def depthwise_geometry(maps: Sequence[AffineMap], ranges: Sequence[int], ia: int, ib: int,
                       out: int) -> DepthwiseGeometry | None:
    """The depthwise convolution that contraction `maps[out] += maps[ia] * maps[ib]` is, if it is one:
    six loops; the output map bare loops (N, F, OH, OW); the weight's F, KH, KW and one constant-0 axis;
    the data's N and F bare and two windows `oh * s + kh * d + o` (H then W)."""
    if len(ranges) != 6 or not all(len(maps[i].results) == 4 for i in (ia, ib, out)) \
            or not is_bare_permutation(maps[out]):
        return None
    o_dims = [e.position for e in maps[out].results]
    for data, weight in ((ia, ib), (ib, ia)):
        w_results = maps[weight].results
        constants = [a for a, e in enumerate(w_results) if isinstance(e, AffineConstantExpr) and e.value == 0]
        w_dims = [e.position for e in w_results if isinstance(e, AffineDimExpr)]
        if len(constants) != 1 or len(w_dims) != 3:
            continue
        shared = [d for d in w_dims if d in o_dims]
        kernel = [d for d in w_dims if d not in o_dims]
        axes, windows = {}, []
        for axis, expr in enumerate(maps[data].results):
            if isinstance(expr, AffineDimExpr):
                letter = "C" if expr.position in shared else "N" if expr.position in o_dims else None
                if letter is None or letter in axes:
                    break
                axes[letter] = (axis, expr.position)
                continue
            window = window_form(expr, set(o_dims) - set(w_dims), set(kernel))
            if window is None:
                break
            windows.append((axis, *window))
        else:
            if len(shared) != 1 or len(axes) != 2 or len(windows) != 2:
                continue
            (h_axis, oh, kh, sh, dh, ch), (w_axis, ow, kw, sw, dw, cw) = windows
            n, f = axes["N"][1], shared[0]
            if len({n, f, oh, ow, kh, kw}) != 6:
                continue
            w_axis_of = {e.position: a for a, e in enumerate(w_results) if isinstance(e, AffineDimExpr)}
            return DepthwiseGeometry(
                data=data, weight=weight, data_axes=(axes["N"][0], axes["C"][0], h_axis, w_axis),
                weight_axes=(w_axis_of[f], constants[0], w_axis_of[kh], w_axis_of[kw]),
                out_axes=tuple(o_dims.index(d) for d in (n, f, oh, ow)),
                kernel_loops=(kh, kw), offset=(ch, cw), strides=(sh, sw), dilation=(dh, dw))
    return None
