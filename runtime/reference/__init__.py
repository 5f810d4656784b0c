"""The reference executors: the nn level on xDSL's interpreter (`interpreter`, its numpy kernels in
`nn_kernels`) and the scalar loops executor (`loops_exec`, `loop_nests`, `affine_loops`)."""
