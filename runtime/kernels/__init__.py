"""The compute kernels the linalg executor's steps call: structured ops from their indexing maps and
bodies (`linalg_structured`; its elementwise and reduction fast paths `elementwise_programs` and
`reduction_programs`; `body_program`, unsigned integer ops included; `affine_views`),
convolutions (im2col, Winograd, depthwise) and their epilogues, pools and window reductions, contractions."""
