"""IREE as a backend: compile a module with `iree-compile` and run it with IREE's runtime (`backend`)."""
