"""The linalg/memref executor: a module's `@main` compiled once into numpy steps (`linalg_exec`, with
`compile_linalg` and `run_linalg`; the steps per op kind: `data_steps`, `pad_step`,
`structured_step`), the arguments and cached programs (`program_entry`), the memory plan, and the bindings a
placed program keeps across runs (`bound_steps`)."""
