"""Convolutions recognised in linalg contractions, whatever their layout, and run by Winograd.

`conv_geometry` reads a contraction's indexing maps and, when they describe a 2-D convolution,
says which operand axes hold N, C, H, W / F, C, KH, KW / N, F, OH, OW; `ConvGeometry.runner` then
computes it by Winograd (3x3 stride-1 with a constant weight, where `conv.winograd_tile` says it wins)
or as im2col + GEMM split over worker threads by output rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir.affine import AffineDimExpr, AffineMap

from xrelay.runtime.kernels.affine_views import is_bare_permutation, window_form
from xrelay.runtime.kernels.conv import winograd_conv3x3_threaded, winograd_tile, winograd_weights
from xrelay.runtime.native.conv_kernels import NativeEpilogue, native_im2col
from xrelay.runtime.parallel.threads import decide_split, run_epilogue, run_parts, split_threads


MIN_SPLIT_MACS = 1 << 23
"""im2col convolutions of fewer multiply-adds run whole on the calling thread. Measured per
convolution of ResNet-18 (one process alternating 1 and 2 threads, real-time priority, load 4):
its 1x1 stride-2 convolutions of 6.4M multiply-adds (56x56x64 -> 28x28x128, 28x28x128 -> 14x14x256)
took 0.35 and 0.26 ms on 2 threads against 0.28 and 0.24 ms on one; at 12.8M (56x56x64 -> 64),
0.42 against 0.46 ms."""


IM2COL_BLOCK_BYTES = 1 << 20
"""An im2col convolution whose patch matrix is at least twice this big and four times its weight
matrix is computed in blocks of output rows with a patch matrix about this big (each thread's part
too). Measured on ResNet's 7x7/2 stem (a 7.4 MB patch matrix): 5.7 -> 4.5 ms on one thread."""


WINOGRAD_ALGORITHMS = ("winograd-f2", "winograd-f4")


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

    def float_runner(self, compute: Callable[..., bool]) -> Callable[..., bool]:
        """`run(ins, out, accumulate, epilogue=None) -> bool`: False unless data, weight and out are
        arrays of one float dtype, else `compute(weight, x, w, y, accumulate, epilogue)` on views of
        them: x the data from its window offset as N, C, H, W, w the weight as F, C, KH, KW, y the
        output as N, F, OH, OW (and `weight` the weight array itself, which a cache keys on).

        `epilogue(r0, r1)`, if given, is called once for every output row (OH) range [r0, r1) the
        kernel has finished, covering each row once, possibly on a worker thread (the rows of a
        thread's part or of a cache block, while they are in cache: `runtime/kernels/conv_epilogue.py`)."""

        def run(ins: list, out: np.ndarray, accumulate: bool, epilogue=None) -> bool:
            data, weight = ins[self.data], ins[self.weight]
            if not (isinstance(data, np.ndarray) and isinstance(weight, np.ndarray) and isinstance(out, np.ndarray)
                    and data.dtype == weight.dtype == out.dtype and data.dtype.kind == "f"):
                return False
            x = data.transpose(self.data_axes)[:, :, self.offset[0]:, self.offset[1]:]
            return compute(weight, x, weight.transpose(self.weight_axes), out.transpose(self.out_axes), accumulate,
                           epilogue)

        return run

    def winograd_applies(self, ranges: Sequence[int], constant_inputs: Sequence[bool],
                         shape: tuple[int, int, int, int, int]) -> bool:
        """Whether `runner` computes this conv by Winograd for operands of this (N, C, F, OH, OW) shape
        (`winograd_runner` applies and `winograd_tile` picks a tile)."""
        return (self.weight < len(constant_inputs) and bool(constant_inputs[self.weight])
                and tuple(ranges[d] for d in self.kernel_loops) == (3, 3) and self.strides == (1, 1)
                and self.dilation == (1, 1) and winograd_tile(*shape) is not None)

    def winograd_runner(self, ranges: Sequence[int], constant_inputs: Sequence[bool], tile: int | None = None,
                        parts: int | None = None):
        """`run(ins, out, accumulate) -> bool` computing this conv by Winograd, or returning False
        having done nothing (arrays not all of one float dtype, or `winograd_tile` picks no tile
        for the shape); None when Winograd does not apply: not 3x3 stride-1 undilated, or a weight
        that may change between runs (its transform is computed once, on the first run)."""
        if not (self.weight < len(constant_inputs) and constant_inputs[self.weight]):
            return None
        if tuple(ranges[d] for d in self.kernel_loops) != (3, 3) or self.strides != (1, 1) or self.dilation != (1, 1):
            return None
        cache: list = [None, None]  # the weight array seen, its transform

        def compute(weight: np.ndarray, x: np.ndarray, w: np.ndarray, y: np.ndarray, accumulate: bool,
                    epilogue=None) -> bool:
            n, f, oh, ow = y.shape
            m = winograd_tile(n, x.shape[1], f, oh, ow) if tile is None else tile
            if m is None or oh % m or ow % m:
                return False
            if cache[0] is not weight or cache[1][0] != m:
                cache[0] = weight
                cache[1] = (m, winograd_weights(w, m))
            winograd_conv3x3_threaded(x, cache[1][1], m, y, accumulate, threads=parts, epilogue=epilogue)
            return True

        return self.float_runner(compute)

    def runner(self, ranges: Sequence[int], constant_inputs: Sequence[bool], reuse_views: Sequence[bool] = (False,),
               algorithm: str | None = None, parts: int | None = None):
        """`run(ins, out, accumulate) -> bool`: Winograd where it applies and wins, else im2col + GEMM
        (`im2col_runner`); False when neither takes the arrays (the caller contracts generically).
        `algorithm` (a `kernel.dispatch`'s, set by `choose-conv-algorithm`) fixes the choice:
        "winograd-f2"/"winograd-f4" (tile 2 or 4), "im2col"; `parts` (its `split`'s, set by
        `split-kernels`) how many threads it splits over (1: none; None: decided by size)."""
        tile = {"winograd-f2": 2, "winograd-f4": 4}.get(algorithm)
        winograd = self.winograd_runner(ranges, constant_inputs, tile, parts) if algorithm in (None, *WINOGRAD_ALGORITHMS) \
            else None
        im2col = self.im2col_runner(constant_inputs, reuse_views, parts)

        def run(ins: list, out: np.ndarray, accumulate: bool, epilogue=None) -> bool:
            return bool(winograd and winograd(ins, out, accumulate, epilogue)) or im2col(ins, out, accumulate, epilogue)

        return run

    def im2col_runner(self, constant_inputs: Sequence[bool], reuse_views: Sequence[bool] = (False,),
                      split_parts: int | None = None):
        """`run(ins, out, accumulate) -> bool` computing this conv as one GEMM per part of the output
        rows, each part's patch matrix (im2col) copied and multiplied by a worker thread; a
        channels-last one, with the native kernels built, as one call to `native_im2col` (its
        epilogue a `NativeEpilogue` or none).

        Patches are read with one strided view whose adjacent axes are merged where memory allows
        (NHWC: a kernel row's (kw, c) is one contiguous run, so a 3-channel stem conv copies runs of
        21 floats, not 3); a 1x1 stride-1 conv's patch matrix is the data itself (no copy). Works
        when the output is channels-last (GEMM (N*OH*OW, K) @ (K, F)) or a single NCHW image
        ((F, K) @ (K, OH*OW)); returns False otherwise. The weight matrix of a constant weight is
        made once.

        While `reuse_views[0]` (a planned program: its buffers are the same arrays on every run), the
        views a call makes (patch views and output matrices per part of the rows) are kept for the next
        call with the same arrays, which then costs the copies, the GEMMs and little Python (a one-pixel
        conv: 30 us a call less)."""
        cache: list = [None, None]
        last: list = [None]  # (data, weight, out, accumulate, the prepared call) of the last call

        def weight_matrix(weight: np.ndarray, w: np.ndarray, k_axes: list[int], f_first: bool) -> np.ndarray:
            if cache[0] is weight:
                return cache[1]
            f, k = w.shape[0], int(np.prod(w.shape[1:]))
            matrix = (w.transpose([0, *k_axes]).reshape(f, k) if f_first
                      else w.transpose([*k_axes, 0]).reshape(k, f))
            if self.weight < len(constant_inputs) and constant_inputs[self.weight]:
                cache[0], cache[1] = weight, np.ascontiguousarray(matrix)
                return cache[1]
            return matrix

        native_cache: list = [None, None]

        def native_matrix(weight: np.ndarray, w: np.ndarray) -> np.ndarray:
            """The (KH*KW*C, F) weight matrix `native_im2col` takes, made once for a constant weight."""
            if native_cache[0] is weight:
                return native_cache[1]
            matrix = np.ascontiguousarray(w.transpose(2, 3, 1, 0).reshape(-1, w.shape[0]))
            if self.weight < len(constant_inputs) and constant_inputs[self.weight]:
                native_cache[0], native_cache[1] = weight, matrix
            return matrix

        def prepare(weight: np.ndarray, x: np.ndarray, w: np.ndarray, y: np.ndarray, accumulate: bool):
            """`call(epilogue)` computing the conv of these views, or None when it does not apply."""
            n, f, oh, ow = y.shape
            # Channels-last: F contiguous, and each image's rows a matrix of pixels (a slice of a
            # concatenation's channels, `memory_plan.place_in_slices`, has longer pixel strides).
            channels_last = y.strides[1] == y.itemsize and _matrix_view(y[:1].transpose(0, 2, 3, 1), ow * oh, f) is not None
            if not channels_last and not (n == 1 and y.flags.c_contiguous):
                return None
            k_axes = sorted((1, 2, 3), key=lambda a: -w.strides[a])  # the weight's memory order
            sn, sc, sh, sw = x.strides
            (s_oh, s_ow), (d_h, d_w) = self.strides, self.dilation
            k_view = {1: (w.shape[1], sc), 2: (w.shape[2], sh * d_h), 3: (w.shape[3], sw * d_w)}
            k_shape, k_strides = [k_view[a][0] for a in k_axes], [k_view[a][1] for a in k_axes]
            kk = int(np.prod(k_shape))
            rows_strides = (sn, sh * s_oh, sw * s_ow)
            parts: dict = {}  # (r0, r1) -> (patch view, patch matrix shape, output matrix or None, target)

            def part_views(r0: int, r1: int):
                rows = (n, r1 - r0, ow)
                base = x[:, :, r0 * s_oh:]
                if channels_last:
                    view = _merged_view(base, rows + tuple(k_shape), rows_strides + tuple(k_strides))
                    shape, target = (n * (r1 - r0) * ow, kk), y.transpose(0, 2, 3, 1)[:, r0:r1]
                    matrix_out = None if accumulate else _matrix_view(target, shape[0], f)
                else:
                    view = _merged_view(base, tuple(k_shape) + rows, tuple(k_strides) + rows_strides)
                    shape, target = (kk, (r1 - r0) * ow), y[0, :, r0:r1]
                    matrix_out = None if accumulate else _matrix_view(target, f, shape[1])
                parts[r0, r1] = entry = (view, shape, matrix_out, target)
                return entry

            copied = kk != w.shape[1] or self.strides != (1, 1)
            macs = n * oh * ow * kk * f
            by_filters = _matrix_view(y.transpose(0, 2, 3, 1), n * oh * ow, f) if channels_last else None
            by_filters = by_filters if by_filters is not None and n * oh * ow < f else None
            # A patch matrix much bigger than the weights is copied and multiplied in blocks of rows
            # of about IM2COL_BLOCK_BYTES, each while in cache (on one thread, and in each thread's part);
            # a 1x1 stride-1 conv's is the data itself (no copy: in blocks, ResNet-50's 56x56x256 -> 64
            # measured 0.1 ms slower).
            row_bytes = n * ow * kk * x.itemsize
            f_k = f * kk * x.itemsize  # the weight matrix's bytes
            block = (max(1, IM2COL_BLOCK_BYTES // row_bytes)
                     if copied and row_bytes * oh >= max(2 * IM2COL_BLOCK_BYTES, 4 * f_k) else None)

            def call(epilogue) -> None:
                split, threads = decide_split(split_parts, macs, MIN_SPLIT_MACS)
                if (channels_last and (epilogue is None or isinstance(epilogue, NativeEpilogue))
                        and native_im2col(x, native_matrix(weight, w), (w.shape[2], w.shape[3]), self.strides,
                                          self.dilation, y, accumulate, (threads or split_threads()) if split else 1,
                                          n * oh * ow < f, epilogue)):
                    return
                matrix = weight_matrix(weight, w, k_axes, f_first=not channels_last)

                def rows_part(r0: int, r1: int) -> None:
                    view, shape, matrix_out, target = parts.get((r0, r1)) or part_views(r0, r1)
                    cols = np.ascontiguousarray(view).reshape(shape)
                    product = (cols, matrix) if channels_last else (matrix, cols)
                    if matrix_out is not None:
                        np.matmul(*product, out=matrix_out)
                    else:
                        result = np.matmul(*product).reshape(target.shape)
                        if accumulate:
                            target += result
                        else:
                            target[...] = result
                    if epilogue is not None:
                        epilogue(r0, r1)

                split = split and (channels_last or n == 1)
                if by_filters is not None and split and (threads or split_threads()) > 1:
                    # Few output pixels, many filters (ResNet's 7x7x512 stage): the weight matrix is
                    # the bigger operand, so each thread takes a share of the filters and reads only
                    # its share of the weights; each copies the (small) patch matrix itself.

                    def filters_part(f0: int, f1: int) -> None:
                        cols = _strided_copy(x, (n, oh, ow, *k_shape), (sn, *rows_strides[1:], *k_strides))
                        cols = cols.reshape(-1, kk)
                        share = matrix[:, f0:f1]
                        if accumulate:
                            by_filters[:, f0:f1] += np.matmul(cols, share)
                        else:
                            np.matmul(cols, share, out=by_filters[:, f0:f1])

                    run_parts(filters_part, f, True, threads)
                    if epilogue is not None:
                        run_epilogue(epilogue, oh, by_filters.size)
                elif block is not None:
                    def blocks_part(r0: int, r1: int) -> None:
                        for b in range(r0, r1, block):
                            rows_part(b, min(b + block, r1))

                    run_parts(blocks_part, oh, split, threads)
                else:
                    run_parts(rows_part, oh, split, threads)

            return call

        def run(ins: list, out: np.ndarray, accumulate: bool, epilogue=None) -> bool:
            data, weight = ins[self.data], ins[self.weight]
            entry = last[0]
            if (entry is not None and entry[0] is data and entry[1] is weight and entry[2] is out
                    and entry[3] == accumulate):
                entry[4](epilogue)
                return True
            if not (isinstance(data, np.ndarray) and isinstance(weight, np.ndarray) and isinstance(out, np.ndarray)
                    and data.dtype == weight.dtype == out.dtype and data.dtype.kind == "f"):
                return False
            x = data.transpose(self.data_axes)[:, :, self.offset[0]:, self.offset[1]:]
            call = prepare(weight, x, weight.transpose(self.weight_axes), out.transpose(self.out_axes), accumulate)
            if call is None:
                return False
            if reuse_views[0]:  # views only: the same arrays give the same views next run
                last[0] = (data, weight, out, accumulate, call)
            call(epilogue)
            return True

        return run


def _matrix_view(array: np.ndarray, rows: int, columns: int) -> np.ndarray | None:
    """`array` as a (rows, columns) view, or None when that needs a copy (numpy's reshape would copy)."""
    view = array.view()
    try:
        view.shape = (rows, columns)
    except AttributeError:
        return None
    return view


def _merged_view(base: np.ndarray, shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """The read-only view of `base`'s memory with this shape and these strides, adjacent axes merged
    where memory allows (numpy's copy then runs longer inner loops)."""
    merged_shape, merged_strides = [shape[0]], [strides[0]]
    for size, stride in zip(shape[1:], strides[1:]):
        if merged_strides[-1] == size * stride or merged_shape[-1] == 1:
            merged_shape[-1] *= size
            merged_strides[-1] = stride
        else:
            merged_shape.append(size)
            merged_strides.append(stride)
    return np.lib.stride_tricks.as_strided(base, merged_shape, merged_strides, writeable=False)


def _strided_copy(base: np.ndarray, shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """A contiguous copy of the view of `base`'s memory with this shape and these strides (no copy
    when the view is contiguous already), adjacent axes merged first where memory allows."""
    return np.ascontiguousarray(_merged_view(base, shape, strides)).reshape(shape)


def conv_geometry(maps: Sequence[AffineMap], ranges: Sequence[int], ia: int, ib: int, out: int) -> ConvGeometry | None:
    """The convolution that contraction `maps[out] += maps[ia] * maps[ib]` is, if it is one.

    The weight and output maps must be bare loops; the data map two bare loops (N, in the
    output only; C, in the weight only) and two windows `oh * s + kh * d + o` (H then W) with
    oh an output loop and kh a weight loop.
    """
    if len(ranges) != 7 or not all(len(maps[i].results) == 4 for i in (ia, ib, out)):
        return None
    if not is_bare_permutation(maps[out]):
        return None
    o_dims = [e.position for e in maps[out].results]
    for data, weight in ((ia, ib), (ib, ia)):
        if not is_bare_permutation(maps[weight]):
            continue
        w_dims = [e.position for e in maps[weight].results]
        found = _data_axes(maps[data], w_dims, o_dims)
        if found is None:
            continue
        (n_axis, n), (c_axis, c), windows = found
        (h_axis, oh, kh, sh, dh, ch), (w_axis, ow, kw, sw, dw, cw) = windows
        filters = [d for d in w_dims if d not in (c, kh, kw)]
        if len(filters) != 1 or filters[0] not in o_dims or len({n, c, oh, ow, kh, kw, filters[0]}) != 7:
            continue
        f = filters[0]
        return ConvGeometry(
            data=data, weight=weight, data_axes=(n_axis, c_axis, h_axis, w_axis),
            weight_axes=tuple(w_dims.index(d) for d in (f, c, kh, kw)),
            out_axes=tuple(o_dims.index(d) for d in (n, f, oh, ow)),
            kernel_loops=(kh, kw), offset=(ch, cw), strides=(sh, sw), dilation=(dh, dw))
    return None


def _data_axes(d_map: AffineMap, w_dims: list[int], o_dims: list[int]):
    """((axis, N loop), (axis, C loop), [(axis, out loop, kernel loop, stride, dilation, offset)] * 2)
    of a conv's data map, or None if it is not one."""
    batch = channel = None
    windows = []
    for axis, expr in enumerate(d_map.results):
        if isinstance(expr, AffineDimExpr):
            d = expr.position
            if d in o_dims and d not in w_dims and batch is None:
                batch = (axis, d)
            elif d in w_dims and d not in o_dims and channel is None:
                channel = (axis, d)
            else:
                return None
            continue
        window = window_form(expr, set(o_dims) - set(w_dims), set(w_dims) - set(o_dims))
        if window is None:
            return None
        windows.append((axis, *window))
    if batch is None or channel is None or len(windows) != 2:
        return None
    return batch, channel, windows
