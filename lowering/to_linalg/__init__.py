"""nn -> linalg lowerings: `LOWERINGS` (op class -> lowering), one module per op family of `dialects/ops/`.

Importing this package registers them all; `lowering/nn_to_linalg.py` is the pass applying them.
CONTRIBUTING.md has the checklist for a new op.
"""

from xrelay.lowering.to_linalg import elementwise, linear, norm, reduce, shape, upsample, window  # noqa: F401 (they register)
from xrelay.lowering.to_linalg.base import LOWERINGS, Lowering, lowers

__all__ = ["LOWERINGS", "Lowering", "lowers"]
