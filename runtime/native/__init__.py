"""xrelay.runtime.native: C compiled at run time and called on numpy arrays.

`build.py` compiles a C translation unit with the machine's C compiler and caches the library on
disk; `conv_kernels.py` runs convolutions through `conv_kernels.c`. The loops level's translation
into C is `codegen/` (xrelay.codegen), which builds with `build.py`.
"""
