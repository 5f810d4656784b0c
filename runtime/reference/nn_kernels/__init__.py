"""Reference numpy kernels for every nn op: `KERNELS` (op class -> kernel), one module per op family.

The families mirror `dialects/ops/`; importing this package registers them all. See `base` for the
kernel contract and CONTRIBUTING.md for adding one.
"""

from xrelay.runtime.reference.nn_kernels import elementwise, linear, norm, reduce, shape, upsample, window  # noqa: F401 (they register)
from xrelay.runtime.reference.nn_kernels.base import KERNELS, Kernel, kernel

__all__ = ["KERNELS", "Kernel", "kernel"]
