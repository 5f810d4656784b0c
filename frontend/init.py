"""Parameter initialisation as TVM's `relay.testing.init` does it (`Xavier` + `create_workload`).

Values are drawn in `@main` argument order from `np.random.RandomState(seed)`, the same stream as
TVM's `np.random.seed(seed)` + `np.random.uniform`, so the same seed gives TVM's numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType

from xrelay.dialects.arguments import find_main
from xrelay.dialects.constant import dtype_of


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


def init_value(name: str, shape: Sequence[int], dtype: np.dtype, rng: np.random.RandomState) -> np.ndarray:
    """TVM's `Initializer.__call__`: chooses the rule from the name's suffix."""
    if name.endswith("weight"):
        value = xavier_uniform(name, shape, rng)
    elif name.endswith(("gamma", "var")):
        value = np.ones(shape)
    elif name.endswith(("bias", "beta", "mean")):
        value = np.zeros(shape)
    else:
        raise ValueError(
            f"no initialisation rule for parameter {name!r}: names must end in "
            "weight, bias, gamma, beta, mean or var"
        )
    return np.asarray(value).astype(dtype)


def create_params(
    module: ModuleOp, seed: int = 0, input_names: Sequence[str] = ("data",)
) -> dict[str, np.ndarray]:
    """Initial values for every `@main` argument except the inputs, in argument order."""
    func = find_main(module, "create_params")
    rng = np.random.RandomState(seed)
    params: dict[str, np.ndarray] = {}
    for arg in func.body.block.args:
        if arg.name_hint in input_names:
            continue
        assert isinstance(arg.type, TensorType)
        params[arg.name_hint] = init_value(
            arg.name_hint, tuple(arg.type.get_shape()), dtype_of(arg.type.element_type), rng
        )
    return params
