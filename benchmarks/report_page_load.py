"""Time a pipeline report page opening in headless Chromium (DevTools protocol over --remote-debugging-pipe):
from navigation start until the page has rendered its selected pass (the page's data-load-ms), median of N.

    python benchmarks/report_page_load.py report.html [--rounds 5]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _above_4(fd: int) -> int:
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


class DevTools:
    """Chromium driven through the DevTools protocol on a pipe (fds 3 and 4 of the browser)."""

    def __init__(self, browser: str):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        to_browser_r, from_browser_w = (_above_4(fd) for fd in (to_browser_r, from_browser_w))

        # The browser reads commands on fd 3 and writes answers on fd 4: a Python trampoline puts the pipes
        # there (the fds are above 4, so the two dup2 cannot overwrite one another) and becomes the browser.
        trampoline = "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); os.execv(sys.argv[3], sys.argv[3:])"
        self.process = subprocess.Popen(
            [sys.executable, "-c", trampoline, str(to_browser_r), str(from_browser_w), browser, "--headless",
             "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "about:blank"],
            pass_fds=(to_browser_r, from_browser_w), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 0

    def call(self, method: str, session: str | None = None, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self.buffer:
                chunk = os.read(self.from_browser, 1 << 16)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self.buffer += chunk
            raw, self.buffer = self.buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]

    def close(self):
        try:
            self.call("Browser.close")
        finally:
            self.process.wait(timeout=30)


def open_page(tools: DevTools, url: str, timeout: float = 120.0) -> tuple[float, float]:
    """(the page's own load ms, ms until this process saw it ready) for one fresh tab."""
    target = tools.call("Target.createTarget", url="about:blank")["targetId"]
    session = tools.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    start = time.perf_counter()
    tools.call("Page.navigate", session, url=url)
    probe = "document.body && document.body.dataset.ready ? [document.body.dataset.ready, document.body.dataset.loadMs] : null"
    while time.perf_counter() - start < timeout:
        value = tools.call("Runtime.evaluate", session, expression=probe, returnByValue=True)["result"].get("value")
        if value:
            seen = (time.perf_counter() - start) * 1e3
            if value[0] != "1":
                raise RuntimeError(f"the page reports an error ({value[0]})")
            tools.call("Target.closeTarget", targetId=target)
            return float(value[1]), seen
        time.sleep(0.02)
    raise RuntimeError(f"the page was not ready after {timeout} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise SystemExit("report_page_load.py: no chromium on PATH (apt-get install -y chromium)")
    url = Path(args.page).resolve().as_uri()
    tools = DevTools(browser)
    try:
        runs = [open_page(tools, url) for _ in range(args.rounds)]
    finally:
        tools.close()
    size = Path(args.page).stat().st_size
    print(f"page {size / 1e6:.2f} MB; load (navigation to rendered) median {statistics.median(r[0] for r in runs):.0f} ms "
          f"(runs: {', '.join(f'{r[0]:.0f}' for r in runs)}); seen by the driver {statistics.median(r[1] for r in runs):.0f} ms; "
          f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
