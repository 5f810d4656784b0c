"""Parallel execution: BLAS threads and the worker threads a step splits over (`threads`)."""
