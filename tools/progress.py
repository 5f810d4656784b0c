"""A one-line status on stderr for the command-line tools (`xrelay-run`, `xrelay-import-onnx`)."""

from __future__ import annotations

import threading
import time
from typing import IO


class Progress:
    """A one-line status on stderr ("xrelay-run: running 3/10 (1.2 s)"), refreshed twice a second.

    On a terminal the line is rewritten in place and erased at the end; on anything else (only when
    forced with --progress) each new status is one line.
    """

    def __init__(self, stream: IO[str], enabled: bool, prog: str):
        self.prog = prog
        self.stream = stream
        self.enabled = enabled
        self.tty = stream.isatty() if hasattr(stream, "isatty") else False
        self.status = ""
        self.started = time.perf_counter()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._ticker: threading.Thread | None = None
        if enabled and self.tty:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()

    def update(self, status: str) -> None:
        """Show a new status; its elapsed time counts from now."""
        if not self.enabled:
            return
        with self._lock:
            self.status, self.started = status, time.perf_counter()
            if self.tty:
                self._draw()
            else:
                print(f"{self.prog}: {status}", file=self.stream, flush=True)

    def _draw(self) -> None:
        elapsed = time.perf_counter() - self.started
        self.stream.write(f"\r\x1b[K{self.prog}: {self.status} ({elapsed:.1f} s)")
        self.stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            with self._lock:
                if self.status:
                    self._draw()

    def close(self) -> None:
        """Stop refreshing and erase the status line (before any result or error is printed)."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self.enabled and self.tty and self.status:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
