"""Compile a C translation unit with the machine's C compiler into a shared library, cached on disk.

The compiler is `$XRELAY_CC` or `gcc` (read at each call); the flags are `FLAGS`. A library is kept
under `cache_dir()` named by the sha256 of the source, the compiler's version line, the flags and
the CPU (`-march=native` code runs only where it was built), so a second process, or a second
module with the same loops and other weights, loads it without compiling. Files appear atomically
(written under a temporary name, then renamed), so concurrent processes never load half a library.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass

FLAGS = ("-O3", "-march=native", "-fopenmp", "-fno-math-errno", "-fwrapv", "-fPIC", "-shared")
"""-fno-math-errno lets sqrt be one instruction (and loops over it vectorise); -fwrapv gives integer
arithmetic MLIR's wrap-around semantics; -fopenmp runs the parallel loops across threads."""


SPIN_COUNT = "10000"
"""`GOMP_SPINCOUNT` unless the user set it (libgomp reads it when first loaded): how long an OpenMP
thread spins at a barrier before it sleeps. libgomp's default, 300000, cost 10-20x on a shared 2-core
machine (a 3x3 depthwise convolution over 112x112x144 on 2 threads at load 6: 96 ms, against 7.5 ms
with 10000 and 31 ms on one thread)."""


class NativeUnsupported(Exception):
    """An op or type the C translation (`codegen/`) does not handle (the numpy path may)."""


class NativeUnavailable(NativeUnsupported):
    """No usable C compiler, or it rejected the translation unit."""


def native_enabled() -> bool:
    """Whether compiled code may run: not when `XRELAY_NATIVE=0` (read at each call), which keeps
    every kernel and the loops level on numpy."""
    return os.environ.get("XRELAY_NATIVE", "1") != "0"


def cache_dir() -> str:
    """`$XRELAY_CACHE_DIR`, else `$XDG_CACHE_HOME/xrelay`, else `~/.cache/xrelay` (read at each call)."""
    if os.environ.get("XRELAY_CACHE_DIR"):
        return os.environ["XRELAY_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "xrelay")


def compiler() -> str:
    """The C compiler's path: `$XRELAY_CC` or `gcc` on PATH; NativeUnavailable when there is none."""
    name = os.environ.get("XRELAY_CC") or "gcc"
    path = shutil.which(name)
    if path is None:
        raise NativeUnavailable(f"C compiler '{name}' not found (set XRELAY_CC to one)")
    return path


@functools.cache
def compiler_version(path: str) -> str:
    """The first line of `path --version` (part of the cache key)."""
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError) as error:
        raise NativeUnavailable(f"C compiler '{path}' does not run: {error}") from None
    return done.stdout.splitlines()[0] if done.stdout else path


@functools.cache
def _cpu() -> str:
    """The CPU's model and feature flags: what `-march=native` compiles for."""
    try:
        with open("/proc/cpuinfo") as info:
            lines = [line for line in info if line.startswith(("model name", "flags"))][:2]
    except OSError:
        lines = []
    return platform.machine() + "".join(lines)


@functools.cache
def _loading_process() -> int:
    """The process that first loaded a library, and with it libgomp."""
    return os.getpid()


def usable_threads(threads: int) -> int:
    """`threads`, or 1 in a process forked from the one that loaded libgomp: its thread pool stayed
    in the parent, and a parallel region of more threads would wait for them forever."""
    return threads if os.getpid() == _loading_process() else 1


@dataclass(frozen=True)
class Library:
    """A loaded shared library, with where it came from."""

    handle: ctypes.CDLL
    path: str
    compile_seconds: float | None
    """Seconds the compiler took, or None when the library came from the cache."""


def load(source: str) -> Library:
    """The shared library compiled from `source`: from the cache, or compiled now and cached."""
    cc = compiler()
    key = hashlib.sha256("\0".join([source, compiler_version(cc), " ".join(FLAGS), _cpu()]).encode()).hexdigest()
    directory = os.path.join(cache_dir(), "native")
    path = os.path.join(directory, f"{key[:32]}.so")
    seconds = None
    if not os.path.exists(path):
        seconds = _compile(cc, source, directory, path)
    os.environ.setdefault("GOMP_SPINCOUNT", SPIN_COUNT)
    _loading_process()
    try:
        return Library(ctypes.CDLL(path), path, seconds)
    except OSError as error:
        raise NativeUnavailable(f"cannot load {path}: {error}") from None


def _compile(cc: str, source: str, directory: str, path: str) -> float:
    try:
        os.makedirs(directory, exist_ok=True)
        work = tempfile.mkdtemp(dir=directory, prefix=".build-")
    except OSError as error:
        raise NativeUnavailable(f"cannot write the cache directory {directory}: {error}") from None
    try:
        c_file, library = os.path.join(work, "module.c"), os.path.join(work, "module.so")
        with open(c_file, "w") as out:
            out.write(source)
        started = time.perf_counter()
        try:
            done = subprocess.run([cc, *FLAGS, c_file, "-o", library, "-lm"], capture_output=True, text=True,
                                  timeout=600)
        except (OSError, subprocess.SubprocessError) as error:
            raise NativeUnavailable(f"C compiler '{cc}' failed to run: {error}") from None
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            first = next((line for line in done.stderr.splitlines() if "error" in line), done.stderr.strip()[:200])
            raise NativeUnavailable(f"C compiler '{cc}' rejected the generated source: {first}")
        os.replace(library, path)
        os.replace(c_file, path[:-3] + ".c")  # beside the library, for reading what ran
        return seconds
    finally:
        shutil.rmtree(work, ignore_errors=True)
