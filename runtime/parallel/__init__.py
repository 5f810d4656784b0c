"""Parallel execution: BLAS and worker threads (`threads`), and the forked second process that runs
half of a program's steps (`spmd`, `spmd_lanes`, `spmd_steps`, `spmd_fallback`)."""
