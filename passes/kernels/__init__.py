"""Kernel formation over linalg on tensors (DESIGN §11): the passes that decide what the CPU executor
runs as one step, with which algorithm and split, written into the IR as `kernel.dispatch` ops."""
