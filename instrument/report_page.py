"""The pipeline report as data and as a page: `report_data` (PassNodes -> JSON-ready dict), `write_page`,
and `read_page_data` (the data back from a written page, for tests and tools).

Data: `{"title", "drift", "passes": [...]}`, the passes in the order they started (a parent before its
children), each `{"name", "depth", "parent" (index or -1), "status", "reason", "ms", "changed", "diff"
(IRDiff's unified diff, "" when none), "op_delta", "stats" ([name, value, description]), "patterns"
([pattern, tried, applied, created, erased, ms]), "drift" (null or max_abs/max_rel/drifted/error)}`.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import math
import re
from typing import Any

from xrelay.instrument.report_page_template import PAGE

_DATA = re.compile(r'<script type="application/octet-stream" id="report-data">([A-Za-z0-9+/=\s]*)</script>')


def _finite(value: float) -> float | str:
    # JSON has no inf/nan: keep them as text the page prints as is.
    return value if math.isfinite(value) else str(value)


def report_data(roots: list[Any], title: str, drift: bool) -> dict[str, Any]:
    """The page's data from the report's PassNode tree."""
    passes: list[dict[str, Any]] = []

    def add(node: Any, parent: int) -> None:
        index = len(passes)
        passes.append({
            "name": node.name, "depth": node.depth, "parent": parent, "status": node.status,
            "reason": node.reason, "ms": round(node.seconds * 1e3, 3), "changed": node.changed,
            "diff": node.diff, "op_delta": node.op_delta,
            "stats": [list(stat) for stat in sorted(node.statistics)],  # by name, as MLIR prints them
            "patterns": [[row[0], *(int(v) for v in row[1:5]), float(row[5])] for row in node.patterns],
            "drift": None if node.drift is None else {
                **node.drift, "max_abs": _finite(node.drift["max_abs"]), "max_rel": _finite(node.drift["max_rel"])},
        })
        for child in node.children:
            add(child, index)

    for root in roots:
        add(root, -1)
    return {"title": title, "drift": drift, "passes": passes}


def page_html(data: dict[str, Any]) -> str:
    """The self-contained page holding `data`."""
    payload = base64.b64encode(gzip.compress(json.dumps(data, separators=(",", ":")).encode(), 6, mtime=0))
    # 76-character lines, so that an editor or a diff of the file stays usable.
    encoded = "\n".join(payload[i:i + 76].decode() for i in range(0, len(payload), 76))
    title = html.escape(data["title"])
    return PAGE.replace("__TITLE__", title).replace("__DATA__", encoded)


def write_page(path: str, data: dict[str, Any]) -> None:
    """Write the page to `path`, replacing it only once it is complete."""
    from xrelay.output_file import write_output

    write_output(path, page_html(data))


def read_page_data(text: str) -> dict[str, Any]:
    """The data of a page `write_page` wrote (ValueError if `text` is not such a page)."""
    match = _DATA.search(text)
    if match is None:
        raise ValueError("not an xrelay pipeline report (no report-data block)")
    return json.loads(gzip.decompress(base64.b64decode("".join(match.group(1).split()))))
