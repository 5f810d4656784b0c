"""The compute kernels the linalg executor's steps call: structured ops from their indexing maps and
bodies (`linalg_structured`, `body_program`, `affine_views`), convolutions (im2col, Winograd, depthwise)
and their epilogues, pools and window reductions, contractions."""
