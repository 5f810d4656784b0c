"""The pipeline report in a real browser: headless Chromium (Debian's `chromium`) opens the page of a small
lowering pipeline and of ResNet-18, with a pass selected (and a search) by the URL fragment; the DOM after
the page's own script ran shows that pass; a screenshot is taken (tests' tmp dir, for a person to look at).
Without a browser the test is skipped (`.ci/run` installs it)."""

import html
import re
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from xrelay import passes, transform
from xrelay.frontend import bind_params_by_name, resnet, tiny
from xrelay.instrument.pipeline_report import PipelineReport
from xrelay.instrument.report_page import read_page_data

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH: `apt-get install -y chromium` (Debian's package; .ci/run "
                             "installs it) to load the pipeline report in a headless browser")


def chromium(url, *flags):
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=20000", *flags, url]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=True).stdout


def make_page(pipeline, mod, path):
    report = PipelineReport(pipeline)
    with transform.PassContext(opt_level=3, instruments=[report]):
        pipeline(mod)
    report.write(str(path))
    return read_page_data(path.read_text())


def cells(dom, cls):
    """The text of every `<td class="cls...">` of the diff table, marks removed."""
    texts = re.findall(rf'<td class="{cls}[^"]*">(.*?)</td>', dom, re.S)
    return [html.unescape(re.sub(r"</?mark[^>]*>", "", text)) for text in texts]


def shown(path, index, query=""):
    dom = chromium(f"file://{path}#pass={index}" + (f"&q={query}" if query else ""), "--dump-dom")
    body = dom[dom.index("<body"):]
    assert 'data-ready="1"' in body[:200], body[:500]
    return body[:body.index('<script type="application/octet-stream"')]


def check_selected(body, data, index):
    entry = data["passes"][index]
    assert re.search(rf'<li data-id="{index}" class="[^"]*selected', body)
    assert len(re.findall(r'class="[^"]*selected', body)) == 1
    assert re.search(r'<h2 id="detail-name">(.*?)</h2>', body).group(1) == entry["name"]
    # Every line the diff removes / adds is on the left / right, context lines on both sides (an empty cell is
    # the other side of a line only one side has).
    old, new = cells(body, "old"), cells(body, "new")
    lines = [line for line in entry["diff"].splitlines()[2:] if not line.startswith("@@")]
    assert "show-all" not in body  # the whole diff is shown
    assert sorted(line[1:] for line in lines if line[0] in " -") == sorted(text for text in old if text)
    assert sorted(line[1:] for line in lines if line[0] in " +") == sorted(text for text in new if text)
    assert '<tr class="fold">' in body
    return old, new


def screenshot(path, index, out):
    chromium(f"file://{path}#pass={index}", f"--screenshot={out}", "--window-size=1280,800")
    png = out.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", png[16:24]) == (1280, 800)
    assert len(png) > 20_000  # not a blank page


@pytest.fixture(scope="module")
def tiny_page(tmp_path_factory):
    mod, params = tiny.get_workload(batch_size=1, image_shape=(3, 8, 8))
    pipeline = transform.Sequential([
        passes.SimplifyInference(), passes.FoldConstant(), passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}),
        passes.FoldConstant(), transform.get_pass("convert-nn-to-linalg")])
    path = tmp_path_factory.mktemp("page") / "tiny.html"
    return path, make_page(pipeline, bind_params_by_name(mod, params), path)


def test_small_lowering_pipeline_in_chromium(tiny_page, tmp_path):
    path, data = tiny_page
    index = next(i for i, p in enumerate(data["passes"]) if p["name"] == "ConvertLayout")
    body = shown(path, index, "nn.layout_transform")
    old, new = check_selected(body, data, index)
    # The op-count delta and the statistics of the pass (the data test_instrument_pipeline_report.py checks
    # against the printers) are what the page shows.
    entry = data["passes"][index]
    op_delta = re.search(r'<div id="op-delta">(.*?)</div>', body, re.S).group(1)
    assert re.findall(r"<td[^>]*>(nn\.[a-z_]+)</td><td[^>]*>(-?\d+)</td>", op_delta) == [
        (op, str(delta)) for op, delta in entry["op_delta"].items()]
    assert entry["op_delta"]["nn.layout_transform"] > 0
    stats = re.search(r'<div id="stats">(.*?)</div>', body, re.S).group(1)
    assert re.findall(r"<td[^>]*>(\d+)</td><td[^>]*>([a-z-]+)</td>", stats) == [
        (str(value), name) for name, value, _ in entry["stats"]]
    assert [name for name, _, _ in entry["stats"]] == ["num-convs-converted", "num-layout-transforms"]
    # The search marks every occurrence in the shown diff, on both sides.
    hits = body.count('<mark class="hit">')
    assert hits == sum(text.count("nn.layout_transform") for text in old + new) > 0
    screenshot(path, index, tmp_path / "tiny.png")


def test_resnet18_page_in_chromium(tmp_path):
    mod, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 224, 224))
    pipeline = transform.Sequential([
        passes.FoldConstant(), passes.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}), passes.FoldConstant()])
    path = tmp_path / "resnet18.html"
    data = make_page(pipeline, bind_params_by_name(mod, params), path)
    assert path.stat().st_size < 1_000_000  # the weights are elided
    index = next(i for i, p in enumerate(data["passes"]) if p["name"] == "ConvertLayout")
    body = shown(path, index)
    check_selected(body, data, index)
    op_delta = re.search(r'<div id="op-delta">(.*?)</div>', body, re.S).group(1)
    # The tutorial's op diff for ConvertLayout (docs/architecture.md §5).
    assert re.findall(r"<td[^>]*>(nn\.[a-z_]+)</td><td[^>]*>(-?\d+)</td>", op_delta) == [
        ("nn.expand_dims", "1"), ("nn.layout_transform", "23")]
    screenshot(path, index, tmp_path / "resnet18.png")


def test_keyboard_navigation_and_search_in_chromium(tiny_page):
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    from report_page_load import DevTools

    path, data = tiny_page
    changed = [i for i, p in enumerate(data["passes"]) if p["changed"]]
    tools = DevTools(CHROMIUM)
    try:
        target = tools.call("Target.createTarget", url="about:blank")["targetId"]
        session = tools.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        tools.call("Page.navigate", session, url=path.as_uri())

        def evaluate(expression):
            return tools.call("Runtime.evaluate", session, expression=expression, returnByValue=True)["result"].get("value")

        def press(key, code, key_code):
            for kind in ("keyDown", "keyUp"):
                tools.call("Input.dispatchKeyEvent", session, type=kind, key=key, code=code, windowsVirtualKeyCode=key_code)
            return evaluate("+document.querySelector('#pass-list li.selected').dataset.id")

        deadline = time.monotonic() + 120
        while evaluate("document.body && document.body.dataset.ready") != "1":
            assert time.monotonic() < deadline, "the page did not get ready"
            time.sleep(0.05)
        # Opened without a fragment: the first pass inside the pipeline that changed the IR.
        first = next(i for i in changed if data["passes"][i]["depth"] > 0)
        assert evaluate("+document.querySelector('#pass-list li.selected').dataset.id") == first
        assert press("ArrowDown", "ArrowDown", 40) == first + 1
        assert press("n", "KeyN", 78) == next(i for i in changed if i > first + 1)
        assert press("p", "KeyP", 80) == first
        assert press("/", "Slash", 191) == first
        assert evaluate("document.activeElement.id") == "search"
        tools.call("Input.insertText", session, text="Linalg.Generic")  # case does not matter
        with_it = [i for i, p in enumerate(data["passes"]) if "linalg.generic" in p["diff"].lower()]
        # Enter: the next pass (round the end of the list) whose diff has it.
        assert press("Enter", "Enter", 13) == min(with_it, key=lambda i: (i - first - 1) % len(data["passes"]))
        assert evaluate("document.getElementById('search-status').textContent") == f"in {len(with_it)} passes"
        assert evaluate("document.querySelectorAll('#diff mark.hit').length") > 0
    finally:
        tools.close()
