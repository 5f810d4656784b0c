"""The pipeline report (instrument/pipeline_report.py, report_page.py): the page's content equals what
--print-ir-diff, --op-count-diff, --pass-statistics and --numerical-bisect print for the same xrelay-opt
run; the pass tree with skipped, disabled, vetoed and failed passes; the page is self-contained."""

import ast
import re
from pathlib import Path

import pytest

from xrelay import passes, transform
from xrelay.frontend import bind_params_by_name, tiny
from xrelay.instrument import PassInstrument
from xrelay.instrument.pipeline_report import PipelineReport
from xrelay.instrument.report_page import read_page_data
from xrelay.tools.xrelay_opt import main

LOWERED = ("simplify-inference,fold-scale-axis,fold-constant,canonicalize-ops,"
           'convert-layout{desired-layouts="nn.conv2d=NHWC:HWIO"},fold-constant,'
           "convert-nn-to-linalg,linalg-bufferize,linalg-to-loops")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    mod, params = tiny.get_workload(batch_size=1, image_shape=(3, 8, 8))
    path = tmp_path_factory.mktemp("model") / "tiny.mlir"
    path.write_text(str(bind_params_by_name(mod, params)))
    return path


def postorder(passes_):
    """The page's passes (preorder, with parents) in the order they finished, as the printers print."""
    children = {i: [] for i in range(-1, len(passes_))}
    for index, entry in enumerate(passes_):
        children[entry["parent"]].append(index)

    def walk(index):
        for child in children[index]:
            yield from walk(child)
        if index >= 0:
            yield passes_[index]

    return list(walk(-1))


def statistics_text(passes_):
    """MLIR's pipeline display, written from the page's data."""
    lines = ["===" + "-" * 73 + "===", " " * 25 + "... Pass statistics report ...", "===" + "-" * 73 + "==="]
    for entry in passes_:
        if entry["status"] not in ("ran", "failed"):
            continue
        indent = "  " * entry["depth"]
        lines.append(indent + entry["name"])
        stats = entry["stats"]
        if stats:
            value_width = max(len(str(value)) for _, value, _ in stats)
            name_width = max(len(name) for name, _, _ in stats)
            for name, value, description in stats:
                lines.append(f"{indent}  (S) {str(value).rjust(value_width)} {name.ljust(name_width)} - {description}")
    return "\n".join(lines) + "\n"


def test_page_equals_the_printers_of_the_same_run(tiny_model, tmp_path, capsys):
    page = tmp_path / "report.html"
    status = main([str(tiny_model), "--opt-level", "3", "-p", LOWERED, "--pipeline-report", str(page),
                   "--print-ir-diff", "--op-count-diff", "--pass-statistics", "--numerical-bisect",
                   "-o", str(tmp_path / "out.mlir")])
    err = capsys.readouterr().err
    assert status == 0
    data = read_page_data(page.read_text())
    finished = postorder(data["passes"])

    printed_diffs = re.findall(r"// -----// IR Diff (\S+) \(depth (\d+)\) //----- //\n(.*?\n)\n", err, re.S)
    assert [(p["name"], str(p["depth"]), p["diff"]) for p in finished if p["diff"]] == printed_diffs
    assert len(printed_diffs) == 11  # 10 passes changed the IR, and the pipeline

    op_diff = ast.literal_eval(err[err.index("\n[(") + 1:err.index("===---")])
    assert [(p["depth"], p["name"], p["op_delta"]) for p in finished if p["op_delta"]] == op_diff

    report = err[err.index("===---"):]
    report = report[:report.index("numerical-bisect: no pass drifted")]
    assert report == statistics_text(data["passes"])

    drift_lines = [line for line in err.splitlines()
                   if line.startswith("numerical-bisect: ") and "(depth" in line and "first" not in line]
    page_lines = [f"numerical-bisect: {p['name']} (depth {p['depth']}): max abs {p['drift']['max_abs']:.2e}, "
                  f"max rel {p['drift']['max_rel']:.2e}" for p in finished if p["drift"]]
    assert page_lines == drift_lines and len(drift_lines) == 11

    # The page holds no weights: the 10x64 dense weight is elided, and no network address is in it.
    text = page.read_text()
    assert "dense_resource<__elided_" in data["passes"][0]["diff"]
    assert not re.search(r"https?://|<link|src=", text)


def test_skipped_disabled_vetoed_and_failed_passes_are_in_the_tree(tmp_path):
    class VetoCanonicalize(PassInstrument):
        def should_run(self, mod, info):
            return info.name != "canonicalize"

    @transform.module_pass(opt_level=0, name="Broken")
    def broken(mod, ctx):
        raise RuntimeError("broken on purpose")

    mod, params = tiny.get_workload(batch_size=1, image_shape=(3, 8, 8))
    pipeline = transform.Sequential([
        passes.SimplifyInference(), passes.CanonicalizeOps(), transform.get_pass("canonicalize"),
        passes.DeadCodeElimination(), broken, passes.FoldConstant()])
    report = PipelineReport(pipeline)
    with pytest.raises(RuntimeError, match="broken on purpose"), transform.PassContext(
            opt_level=2, disabled_pass=["DeadCodeElimination"], instruments=[VetoCanonicalize(), report]):
        pipeline(bind_params_by_name(mod, params))
    path = tmp_path / "r.html"
    report.write(str(path))
    data = read_page_data(path.read_text())
    assert [(p["depth"], p["name"], p["status"], p["parent"]) for p in data["passes"]] == [
        (0, "sequential", "failed", -1),
        (1, "InferType", "ran", 0),  # SimplifyInference requires it
        (1, "SimplifyInference", "ran", 0),
        (2, "InferType", "ran", 2),
        (1, "CanonicalizeOps", "skipped", 0),
        (1, "canonicalize", "vetoed", 0),
        (1, "DeadCodeElimination", "disabled", 0),
        (1, "Broken", "failed", 0),
        (1, "FoldConstant", "not-reached", 0),
    ]
    skipped = data["passes"][4]
    assert skipped["reason"] == "opt_level 3 > the context's 2"
    assert [p["changed"] for p in data["passes"][1:4]] == [False, True, False]
    assert data["passes"][2]["op_delta"] == {"nn.add": 1, "nn.batch_norm": -1, "nn.multiply": 1}


def test_not_a_report_and_an_unwritable_report(tmp_path, tiny_model, capsys):
    with pytest.raises(ValueError, match="not an xrelay pipeline report"):
        read_page_data("<html></html>")
    assert main([str(tiny_model), "-p", "fold-constant", "--pipeline-report", str(tmp_path / "no" / "r.html")]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("xrelay-opt: error: ") and "r.html" in captured.err


def test_the_readme_example(tmp_path, monkeypatch):
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    block = re.search(r"```python\n(from xrelay import passes, transform\nfrom xrelay.frontend import tiny\n.*?)```",
                      readme, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(block, {})  # noqa: S102 - the README's own example
    data = read_page_data((tmp_path / "report.html").read_text())
    assert [(p["name"], p["changed"]) for p in data["passes"]] == [
        ("sequential", True), ("InferType", False), ("SimplifyInference", True), ("InferType", False),
        ("FoldConstant", False), ("InferType", False)]
    assert data["passes"][2]["drift"]["drifted"] is False
