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
from xrelay.runtime.initializers import xavier_uniform


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
