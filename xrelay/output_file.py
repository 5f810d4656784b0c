"""Writing an output file without destroying what the path names.

Every xrelay tool or instrument that writes a file (`xrelay-opt -o`, `xrelay-run -o`, the Chrome
trace, the crash reproducer) goes through `open_output`:

- a regular file (or a new path) is written to a temporary file beside it and renamed over it only
  when writing succeeded, so a failure never leaves a partial file and readers never see one; the new
  file keeps the mode (and, when permitted, the owner) of the file it replaces, or gets the mode the
  umask gives a new file (a temporary file alone would be 0600);
- a symlink is followed: the file it points to is written, the link stays a link;
- anything else (a character device such as `/dev/null`, a FIFO, a socket) is opened and written
  directly, since renaming a file over it would replace the device node itself;
- `-` is standard output.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

STDOUT = "-"


def current_umask() -> int:
    """The process's umask (Linux exposes it read-only; elsewhere set it and put it back)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def open_output(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """A file object (`mode` "w" text or "wb" binary) whose contents become `path` as described above.

    OSErrors (a missing directory, no permission) propagate with the path in them.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"open_output mode must be 'w' or 'wb', not {mode!r}")
    path = os.fspath(path)
    if path == STDOUT:
        stream = sys.stdout.buffer if mode == "wb" else sys.stdout
        yield stream
        stream.flush()
        return
    try:  # the kernel follows /dev/stdout's /proc link to a pipe, which realpath cannot name
        followed: os.stat_result | None = os.stat(path)
    except OSError:
        followed = None
    if followed is not None and not stat.S_ISREG(followed.st_mode) and not stat.S_ISDIR(followed.st_mode):
        with open(path, mode) as f:  # a device, FIFO or socket: never replaced
            yield f
        return
    target = os.path.realpath(path)  # through symlinks (a dangling one names the file to create)
    try:
        existing: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        with open(target, mode) as f:  # a device, FIFO or socket: never replaced
            yield f
        return
    if existing is not None and not os.access(target, os.W_OK):
        # Renaming over it would succeed; writing into it (what `-o` promises) would not.
        raise PermissionError(13, "Permission denied", path)
    directory, name = os.path.split(target)
    fd, temp = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as f:
            yield f
        if existing is not None:
            os.chmod(temp, stat.S_IMODE(existing.st_mode))
            try:
                os.chown(temp, existing.st_uid, existing.st_gid)
            except OSError:
                pass  # not permitted (not root): the file becomes ours, as with any rewrite
        else:
            os.chmod(temp, 0o666 & ~current_umask())
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise


def write_output(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write `data` to `path` with `open_output` (text for str, binary for bytes)."""
    with open_output(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
