"""Where each output pixel of nn.resize2d reads its input, along one axis: the source indices of nearest
neighbour resizing and the interpolation matrix of linear resizing (ONNX Resize's coordinate
transformation and rounding modes). The numpy kernel and the linalg lowering both use these tables, so
the two levels agree by construction; tests compare both with ONNX Runtime."""

from __future__ import annotations

import math

import numpy as np

COORDINATE_MODES = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn")
ROUNDING_METHODS = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
METHODS = ("nearest_neighbor", "linear")


def source_coordinates(in_size: int, out_size: int, scale: float, mode: str) -> np.ndarray:
    """The input coordinate (float64) each output index maps to (ONNX Resize's
    `coordinate_transformation_mode`); `scale` is out/in unless the model gives its own scale."""
    x = np.arange(out_size, dtype=np.float64)
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out_size > 1 else np.zeros(out_size)
    if mode == "align_corners":
        return x * (in_size - 1) / (out_size - 1) if out_size > 1 else np.zeros(out_size)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    raise ValueError(f"coordinate_transformation_mode '{mode}' is not supported (one of {', '.join(COORDINATE_MODES)})")


def nearest_indices(in_size: int, out_size: int, scale: float, mode: str, rounding: str) -> np.ndarray:
    """The input index (int64, clamped into the axis) each output index copies."""
    coords = source_coordinates(in_size, out_size, scale, mode)
    if rounding == "round_prefer_floor":
        index = [math.ceil(c - 0.5) for c in coords]
    elif rounding == "round_prefer_ceil":
        index = [math.floor(c + 0.5) for c in coords]
    elif rounding == "floor":
        index = [math.floor(c) for c in coords]
    elif rounding == "ceil":
        index = [math.ceil(c) for c in coords]
    else:
        raise ValueError(f"rounding_method '{rounding}' is not supported (one of {', '.join(ROUNDING_METHODS)})")
    return np.clip(np.array(index, np.int64), 0, in_size - 1)


def linear_matrix(in_size: int, out_size: int, scale: float, mode: str) -> np.ndarray:
    """The (out_size, in_size) float64 matrix of linear interpolation: row i weighs the two inputs
    around output i's coordinate, both clamped into the axis (the edge repeats)."""
    coords = np.clip(source_coordinates(in_size, out_size, scale, mode), 0, in_size - 1)
    matrix = np.zeros((out_size, in_size))
    low = np.floor(coords).astype(np.int64)
    high = np.minimum(low + 1, in_size - 1)
    fraction = coords - low
    rows = np.arange(out_size)
    np.add.at(matrix, (rows, low), 1 - fraction)
    np.add.at(matrix, (rows, high), fraction)
    return matrix


def axis_tables(attrs: dict, in_hw: tuple[int, int]) -> list[np.ndarray]:
    """For nn.resize2d's attributes and input (H, W): per axis, the nearest indices or the linear matrix."""
    tables = []
    for in_size, out_size, given in zip(in_hw, attrs["size"], (attrs["scale_h"], attrs["scale_w"])):
        scale = given or out_size / in_size
        mode = attrs["coordinate_transformation_mode"]
        if attrs["method"] == "linear":
            tables.append(linear_matrix(in_size, out_size, scale, mode))
        else:
            tables.append(nearest_indices(in_size, out_size, scale, mode, attrs["rounding_method"]))
    return tables
