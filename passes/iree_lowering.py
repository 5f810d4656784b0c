"""The linalg on tensors that `runtime.run(..., backend="iree")` compiles for an nn-level module.

Registered with `runtime/iree/backend.py`, which cannot import passes or lowering (they are layers
above it, docs/architecture.md §1).
"""

from xdsl.dialects.builtin import ModuleOp

from xrelay import transform
from xrelay.lowering import lower
from xrelay.lowering.conv_as_matmul import ConvToMatmul
from xrelay.lowering.conv_space_to_depth import ConvSpaceToDepth
from xrelay.lowering.iree_conv_tiles import IreeConvTiles
from xrelay.lowering.pool_as_window_slices import PoolAsWindowSlices
from xrelay.passes.convert_layout import ConvertLayout
from xrelay.passes.fold_constant import FoldConstant
from xrelay.runtime.iree.backend import register_nn_lowering


@register_nn_lowering
def lower_for_iree(module: ModuleOp, channels_last: bool = True) -> ModuleOp:
    """`module` lowered to linalg on tensors; with `channels_last` its convolutions first go to
    NHWC/HWIO (ConvertLayout, then FoldConstant folds the weight transposes), which IREE runs
    several times faster than NCHW; then a strided RGB stem becomes a stride-1 convolution over
    12 channels (`conv-space-to-depth`) and 1x1 convolutions (and other few-channel ones) matrix
    products (`conv-to-matmul`), forms IREE's data tiling packs and runs faster; in every case
    pooling ops become elementwise combines of their window slices (`pool-as-window-slices`),
    which IREE's data tiling does not take for convolutions; NHWC convolutions with few output rows
    get workgroup tiles of whole rows (`iree-conv-tiles`)."""
    if not (channels_last and any(op.name == "nn.conv2d" for op in module.walk())):
        return PoolAsWindowSlices()(lower(module, to="linalg"))
    with transform.PassContext(opt_level=3):  # ConvertLayout is an opt-level-3 pass
        module = transform.Sequential([ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}), FoldConstant()])(module)
    return transform.Sequential([ConvSpaceToDepth(), ConvToMatmul(), PoolAsWindowSlices(),
                                 IreeConvTiles()])(lower(module, to="linalg"))
