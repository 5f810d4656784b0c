"""`backend="iree"`: run a module natively through IREE, upstream MLIR's compiler and runtime.

An nn-level module is lowered to linalg on tensors by what `passes/iree_lowering.py` registers here,
printed, compiled by IREE's compiler API for this CPU (llvm-cpu; data-tiled convolutions get the
whole-row workgroup tiles of `runtime/iree/conv_tiles.py`) and run by IREE's local-task runtime.
Compiled modules are cached per text and flags, in memory and in `$XRELAY_IREE_CACHE` when set.
IREE is the optional `iree` extra, imported on first use."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType

from xrelay.plugins import load_plugins
from xrelay.runtime.iree.conv_tiles import CONFIGURED_PHASE, Tiles, conv_tiles, whole_row_convs
from xrelay.runtime.reference.interpreter import execution_level, find_main

INSTALL_HINT = "the IREE backend needs the optional 'iree' extra: pip install 'xrelay[iree]'"
"""The message for a missing IREE (the tools print it as their one-line error)."""

TARGET_FLAGS = ("--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu")
"""iree-compile flags: the local CPU through LLVM (`--iree-llvmcpu-target-cpu` is added per compile)."""

CONV_DATA_TILING = "--iree-dispatch-creation-experimental-set-data-tiling-ops=convolution"
"""The iree-compile flag that data-tiles convolutions (packs their operands into 16-channel blocks)."""

DEFAULT_FLAGS = (
    "--iree-dispatch-creation-data-tiling",
    "--iree-dispatch-creation-experimental-set-data-tiling-ops=matmul",
    CONV_DATA_TILING,
    "--iree-llvmcpu-enable-ukernels=all",
    "--iree-llvmcpu-stack-allocation-limit=65536",
)
"""The iree-compile flags `compile_text` and `compile_module` add by default (pass `flags=()` for
IREE's own defaults): data tiling (IREE packs matmul and convolution operands into tiles of the
CPU's vector width, the weights at compile time) with its matmul microkernels, the fastest
configuration benchmarks/through_iree.py measured on ResNet-18/50; packed 1x1 convolutions need
more stack than IREE's default limit of 32 KiB."""


class IreeUnavailableError(ImportError):
    """IREE's compiler or runtime package is not installed (the message says how to install it)."""


def _iree():
    """(iree.compiler, iree.runtime), or IreeUnavailableError with the install hint."""
    try:
        import iree.compiler as compiler
        import iree.runtime as runtime
    except ImportError as error:
        raise IreeUnavailableError(INSTALL_HINT) from error
    return compiler, runtime


def available() -> bool:
    """Whether IREE's compiler and runtime can be imported."""
    try:
        _iree()
    except IreeUnavailableError:
        return False
    return True


NnLowering = Callable[[ModuleOp, bool], ModuleOp]
"""`(nn-level module, channels_last) -> linalg-on-tensors module`, the lowering IREE compiles."""

_NN_LOWERING: list[NnLowering] = []


def register_nn_lowering(lowering: NnLowering) -> NnLowering:
    """Register how an nn-level module becomes the linalg IREE compiles (`passes/iree_lowering.py`
    does it: it needs passes and lowering, two layers above this one, docs/architecture.md §1)."""
    _NN_LOWERING[:] = [lowering]
    return lowering


def prepare(module: ModuleOp, channels_last: bool = True) -> ModuleOp:
    """The linalg-on-tensors module IREE compiles for `module` (nn or linalg level; left unchanged)."""
    main = find_main(module)
    if any(not isinstance(t, TensorType) for t in (*main.function_type.inputs, *main.function_type.outputs)):
        raise ValueError("backend 'iree' runs nn- or linalg-on-tensors modules; @main here takes or returns "
                         "memrefs (run it before linalg-bufferize)")
    if execution_level(main) != "nn":
        return module
    if not _NN_LOWERING:
        load_plugins()
    return _NN_LOWERING[0](module, channels_last)


class CompiledModule:
    """One IREE-compiled module; calling it runs `@main` (`call` runs any public function) on numpy
    arrays in argument order."""

    def __init__(self, vmfb: bytes):
        _, runtime = _iree()
        self.bound = runtime.load_vm_flatbuffer(vmfb, driver="local-task")
        self._functions: dict[str, object] = {}  # looked up once: a lookup is a quarter of a small call

    def __call__(self, *args: np.ndarray) -> list[np.ndarray]:
        return self.call("main", *args)

    def call(self, function: str, *args: np.ndarray) -> list[np.ndarray]:
        if function not in self._functions:
            self._functions[function] = self.bound[function]
        outcome = self._functions[function](*[np.ascontiguousarray(a) for a in args])
        outputs = list(outcome) if isinstance(outcome, tuple | list) else [outcome]
        return [np.asarray(o.to_host() if hasattr(o, "to_host") else o) for o in outputs]


_COMPILED: dict[str, CompiledModule] = {}


def _cache_dir() -> Path | None:
    path = os.environ.get("XRELAY_IREE_CACHE")
    return Path(path) if path else None


def _diagnostic(report: str) -> str:
    """The line of an iree-compile failure report that says what went wrong: its first `error:`,
    else the first line of its diagnostics (an unknown flag), without iree-compile's `Try: ...`."""
    diagnostics = report.split("Diagnostics:", 1)[-1].split("Invoked with:", 1)[0]
    lines = [line.strip() for line in diagnostics.splitlines() if line.strip()] or [report.strip()]
    return next((line for line in lines if "error:" in line), lines[0]).split("  Try:")[0]


def _all_flags(flags: Sequence[str], target_cpu: str) -> tuple[str, ...]:
    return (*TARGET_FLAGS, f"--iree-llvmcpu-target-cpu={target_cpu}", *flags)


def _retiled(flags: Sequence[str], tiles: Tiles | None) -> tuple[str, ...]:
    """The workgroup tiles to set, as text (for the cache key): none unless IREE data-tiles convolutions."""
    return tuple(f"{shape}:{blocks}x{rows}" for shape, (blocks, rows) in sorted((tiles or {}).items())
                 if CONV_DATA_TILING in flags)


def _cache_key(text: str, all_flags: Sequence[str], retiled: Sequence[str] = ()) -> str:
    from iree.compiler.version import VERSION

    return hashlib.sha256("\0".join((VERSION, *all_flags, *retiled, text)).encode()).hexdigest()


def _compile(compiler, text: str, all_flags: Sequence[str], tiles: Tiles | None) -> bytes:
    """`text` compiled with `all_flags`; with `tiles`, in two phases around `whole_row_convs`
    (the workgroup tiles IREE picks re-read a 7x7 stage's weights for every output row)."""
    if not tiles:
        return compiler.compile_str(text, extra_args=list(all_flags))
    configured = compiler.compile_str(text, extra_args=[*all_flags, f"--compile-to={CONFIGURED_PHASE}"])
    retiled, _ = whole_row_convs(configured.decode(), tiles)
    return compiler.compile_str(retiled, extra_args=[*all_flags, f"--compile-from={CONFIGURED_PHASE}"])


def compile_vmfb(text: str, flags: Sequence[str] = DEFAULT_FLAGS, target_cpu: str = "host",
                 tiles: Tiles | None = None) -> bytes:
    """`text` (linalg-on-tensors MLIR) compiled by IREE with `TARGET_FLAGS` for `target_cpu` and
    `flags`: the VM flatbuffer IREE's tools load (`iree-benchmark-module --module=...`), read from
    and written to `$XRELAY_IREE_CACHE` when that names a directory. With convolution data tiling
    in `flags` (as in `DEFAULT_FLAGS`), the convolutions of the shapes in `tiles` (`conv_tiles` of
    the module `iree-conv-tiles` ran on) get those workgroup tiles (`runtime/iree/conv_tiles.py`)."""
    compiler, _ = _iree()
    all_flags = _all_flags(flags, target_cpu)
    retiled = _retiled(flags, tiles)
    tiles = tiles if retiled else None
    cache = _cache_dir()
    cached = cache / f"{_cache_key(text, all_flags, retiled)}.vmfb" if cache else None
    if cached is not None and cached.is_file():
        return cached.read_bytes()
    try:
        vmfb = _compile(compiler, text, all_flags, tiles)
    except compiler.CompilerToolError as error:
        raise ValueError(f"IREE could not compile the module: {_diagnostic(str(error))}") from None
    if cached is not None:
        cache.mkdir(parents=True, exist_ok=True)
        partial = cached.with_suffix(".partial")
        partial.write_bytes(vmfb)
        partial.replace(cached)  # never a half-written cache entry
    return vmfb


def compile_text(text: str, flags: Sequence[str] = DEFAULT_FLAGS,
                 target_cpu: str = "host", tiles: Tiles | None = None) -> CompiledModule:
    """`text` (linalg-on-tensors MLIR) compiled by IREE with `TARGET_FLAGS` for `target_cpu` (LLVM's
    name; "host" tunes for the features of the CPU compiling it, "generic" compiles several times
    faster for NCHW convolutions) and `flags` (`DEFAULT_FLAGS` unless given), cached per text and
    flags in memory and, when `$XRELAY_IREE_CACHE` is set, on disk (`compile_vmfb`, which says
    what `tiles` does)."""
    _iree()  # the install hint, before the cache key needs IREE's version
    key = _cache_key(text, _all_flags(flags, target_cpu), _retiled(flags, tiles))
    if key not in _COMPILED:
        _COMPILED[key] = CompiledModule(compile_vmfb(text, flags, target_cpu, tiles))
    return _COMPILED[key]


def compile_module(module: ModuleOp, channels_last: bool = True,
                   flags: Sequence[str] = DEFAULT_FLAGS) -> CompiledModule:
    """`module` (nn or linalg on tensors) prepared (`prepare`) and compiled by IREE with `flags`
    and the workgroup tiles its convolutions carry (`compile_text`), cached per text and flags. The
    result runs `@main` when called: compile once and call it for repeated runs (each
    `run(..., backend="iree")` lowers and prints the module again to find it in the cache)."""
    lowered = prepare(module, channels_last)
    return compile_text(str(lowered), flags, tiles=conv_tiles(lowered))


def run_iree(module: ModuleOp, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run `@main` of `module` through IREE on `args` (checked arrays in argument order)."""
    return compile_module(module)(*args)
