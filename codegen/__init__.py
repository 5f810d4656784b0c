"""xrelay.codegen: the loops level compiled to machine code.

`c_source.py` translates `@main` of a loops-level module into one C translation unit (`c_ops.py`:
the scalar ops; `access.py`: index ranges and which loops may run in parallel),
`runtime/native/build.py` compiles it with the machine's C compiler and caches the library on disk,
and `program.py` calls it with numpy arrays (`NativeProgram`) and chooses it over the numpy loops
executor (`loops_program`, registered with `runtime/reference/loops_exec.py`).
"""
