"""`NativeProgram`: a loops-level `@main` compiled to machine code, and the choice of executor.

`loops_program(module)` is what `runtime.run` builds for a loops-level module (registered with
`runtime/reference/loops_exec.py`): a `NativeProgram`
unless `XRELAY_NATIVE=0` is set, or the translation or the compiler fails, in which case one note
goes to stderr (once per reason and process) and the numpy loops executor runs the module instead.
"""

from __future__ import annotations

import ctypes
import sys
import threading

import numpy as np
from xdsl.dialects.builtin import MemRefType, ModuleOp, TensorType

from xrelay.dialects.arguments import argument_names
from xrelay.runtime.kernels.affine_views import ExecutionError
from xrelay.runtime.kernels.body_program import numpy_dtype
from xrelay.runtime.reference.loops_exec import LoopsProgram, register_loops_compiler
from xrelay.runtime.native.build import load, native_enabled, usable_threads
from xrelay.runtime.native.build import NativeUnsupported
from xrelay.codegen.c_source import CTranslation
from xrelay.runtime.executor.placement import aligned_bytes


def aligned_copy(array: np.ndarray) -> np.ndarray:
    """A writable C-contiguous copy of `array` starting at a cache line, so vector loads and stores of
    a row that starts at a multiple of 64 bytes (as `plan-buffers` places views) do not straddle two."""
    copy = aligned_bytes(array.nbytes).view(array.dtype).reshape(array.shape)
    copy[...] = array
    return copy


class NativeProgram:
    """`@main` of a loops-level module as compiled C (`c_source.py`); call with numpy arrays.

    `source` is the C text, `library` where its shared library lives, `compile_seconds` how long the
    compiler took (None when the library came from the cache) and `parallel_loops` how many loops
    run across threads."""

    def __init__(self, module: ModuleOp, entry: str = "main"):
        translation = CTranslation(module, entry)
        self.source = translation.source
        self.parallel_loops = translation.parallel_loops
        self.arg_names = argument_names(translation.func)
        self.arg_types = [a.type for a in translation.arguments]
        self.result_types = translation.result_types
        self._checks = translation.checks
        self._globals = [aligned_copy(translation.global_arrays[name])  # writable: MLIR globals may be stored to
                         for name in translation.global_names]
        library = load(self.source)
        self.library, self.compile_seconds = library.path, library.compile_seconds
        self._main = library.handle.xrelay_main
        self._main.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64]
        self._main.restype = ctypes.c_int
        self._running = threading.Lock()

    def __call__(self, *args: np.ndarray, threads: int | None = None) -> list[np.ndarray]:
        if len(args) != len(self.arg_types):
            raise ExecutionError(f"@main takes {len(self.arg_types)} arguments, got {len(args)}")
        keep = []
        for name, array, arg_type in zip(self.arg_names, args, self.arg_types, strict=True):
            if isinstance(arg_type, MemRefType | TensorType):
                array = np.asarray(array, dtype=numpy_dtype(arg_type.get_element_type()))
                if array.shape != tuple(arg_type.get_shape()):
                    raise ExecutionError(f"argument %{name}: expected shape {tuple(arg_type.get_shape())}, "
                                         f"got {array.shape}")
                keep.append(np.array(array, order="C"))  # a copy: the callee may write it
            else:
                keep.append(np.array([array], dtype=numpy_dtype(arg_type)))
        outputs = [np.empty(tuple(t.get_shape()) if isinstance(t, MemRefType | TensorType) else (),
                            dtype=numpy_dtype(t.get_element_type() if isinstance(t, MemRefType | TensorType) else t))
                   for t in self.result_types]
        pointers = [a.ctypes.data for a in (*keep, *outputs, *self._globals)]
        threads = usable_threads(threads or _threads())
        with self._running:  # one call at a time: the globals (plan-buffers' arena) are the program's state
            status = self._main((ctypes.c_void_p * max(1, len(pointers)))(*pointers), threads)
        if status == -1:
            raise MemoryError("loops level: memref.alloc failed")
        if status == -2:  # what Python's // says, as the numpy loops executor raises it
            raise ZeroDivisionError("integer division or modulo by zero")
        if status:
            raise ExecutionError(f"{self._checks[status - 1]} (native loops executor)")
        return outputs


def _threads() -> int:
    from xrelay.runtime.parallel.threads import split_threads

    return split_threads()


_NOTED: set[str] = set()


def describe(program) -> str:
    """One line saying how a loops-level program runs: compiled now (and how long that took), loaded
    from the cache, or on numpy."""
    if not isinstance(program, NativeProgram):
        return "native loops executor not used; the loops level ran on numpy"
    if program.compile_seconds is None:
        return f"native loops executor: loaded from the cache ({program.library})"
    return f"native loops executor: compiled in {program.compile_seconds:.3f} s (cached as {program.library})"


@register_loops_compiler
def loops_program(module: ModuleOp):
    """The program that runs a loops-level module: native, else the numpy loops executor (see above)."""
    if native_enabled():
        try:
            return NativeProgram(module)
        except NativeUnsupported as reason:
            if str(reason) not in _NOTED:
                _NOTED.add(str(reason))
                print(f"xrelay: note: the native loops executor cannot run this module ({reason}); running it on "
                      f"numpy (set XRELAY_NATIVE=0 to choose that)", file=sys.stderr)
    return LoopsProgram(module)
