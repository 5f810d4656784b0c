"""TVM's Xavier initialiser (`relay.testing.init.Xavier`), for running models on made-up weights; here,
below its two users (`frontend/init.py`, `instrument/numerical_bisect.py`), docs/architecture.md §1."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def xavier_fans(shape: Sequence[int]) -> tuple[float, float]:
    """(fan_in, fan_out) of a weight as TVM's Xavier computes them: dims 1 and 0 times the kernel area."""
    if len(shape) < 2:
        raise ValueError(f"Xavier initialisation needs a weight of rank >= 2, got shape {tuple(shape)}")
    hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
    return shape[1] * hw_scale, shape[0] * hw_scale


def xavier_uniform(
    name: str,
    shape: Sequence[int],
    rng: np.random.RandomState,
    magnitude: float = 3.0,
    factor_type: str = "avg",
) -> np.ndarray:
    """Uniform(-s, s) with s = sqrt(magnitude / factor), factor from the fans (TVM's `Xavier`)."""
    fan_in, fan_out = xavier_fans(shape)
    factors = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}
    if factor_type not in factors:
        raise ValueError(f"Xavier factor_type must be one of {sorted(factors)}, got {factor_type!r}")
    factor = factors[factor_type]
    if "depthwise" in name:  # TVM's mobilenet rule: depthwise kernels have less connectivity
        factor = float(np.prod(shape[2:]))
    scale = np.sqrt(magnitude / factor)
    return rng.uniform(-scale, scale, size=tuple(shape))
