"""Passes written outside the repository, installed as plugins (`xdsl.universe` entry points) into a
temporary `site` directory (tests/plugin_site.py): every plugin style is found by every tool under
either name, and no installed plugin (eager, duplicated, broken) breaks a pipeline that does not use it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from plugin_site import install_plugin, plugin_env, tool

DOUBLE_RELU = """\
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %a = nn.relu(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b = nn.relu(%a) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %b : tensor<1x4xf32>
}
"""


def printed(func: str) -> str:
    """What the tools print for a module holding the function `func`: wrapped in builtin.module,
    indented by two, a blank line after."""
    return "builtin.module {\n" + textwrap.indent(func, "  ") + "}\n\n"


TWO_RELUS = printed(DOUBLE_RELU)
ONE_RELU = printed("""\
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %a = nn.relu(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %a : tensor<1x4xf32>
}
""")


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    """Site directories: `good` holds the three registration styles, `dup` two plugins defining one
    pass name differently, `broken` a plugin whose entry point cannot be imported."""
    root = tmp_path_factory.mktemp("plugins")
    good = root / "good"
    for name in ("reluplugin", "eagerpass", "decoratedpass"):
        install_plugin(good, name)
    dup = install_plugin(install_plugin(root / "dup", "dupa"), "dupb")
    broken = install_plugin(root / "broken", "brokenplugin")
    model = root / "model.mlir"
    model.write_text(DOUBLE_RELU)
    return {"good": good, "dup": dup, "broken": broken, "model": model, "root": root}


def run(args, *sites, cwd=None):
    return subprocess.run(args, capture_output=True, text=True, env=plugin_env(*sites), cwd=cwd, timeout=120)


def test_an_unrelated_pipeline_is_unaffected_by_any_installed_plugin(sites):
    # The eager plugin once made every run fail ("Duplicate definition of noop-eager in ['eagerpass',
    # 'xrelay']"); duplicated names fail only when used; a broken plugin is a warning.
    done = run([tool("xrelay-opt"), str(sites["model"]), "-p", "infer-type"], sites["good"], sites["dup"], sites["broken"])
    assert (done.returncode, done.stdout) == (0, TWO_RELUS)
    assert done.stderr == ("xrelay-opt: warning: plugin 'brokenplugin' (brokenplugin.universe:UNIVERSE) failed to "
                           "load: ImportError: brokenplugin needs a module nobody has\n")


XRELAY_OPT_RUNS = textwrap.dedent('''
    import contextlib, io, json, sys
    from xrelay.tools.xrelay_opt import main

    # xrelay-opt's main() several times in one process (each run of the console script costs ~2 s).
    for argv in json.loads(sys.argv[1]):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(argv)
        print(json.dumps([status, out.getvalue(), err.getvalue()]))
''')


def xrelay_opt_runs(runs, *sites):
    """[(status, stdout, stderr)] of `main(argv)` for each argv, in one process seeing `sites`."""
    done = run([sys.executable, "-c", XRELAY_OPT_RUNS, json.dumps(runs)], *sites)
    assert done.returncode == 0, done.stderr
    return [tuple(json.loads(line)) for line in done.stdout.splitlines()]


def test_xrelay_opt_runs_every_plugin_style_and_takes_either_name_in_pass_lists(sites):
    model = str(sites["model"])
    base = [model, "-p", "fold-double-relu,noop-eager,noop-decorated"]
    reproducer = str(sites["root"] / "cli_boom.mlir")
    results = xrelay_opt_runs([
        base,
        # fold-double-relu has opt level 2: at 0 it runs only when required, by either name.
        [*base, "--opt-level", "0", "--required-pass", "fold-double-relu,NoopEager"],
        [*base, "--opt-level", "0", "--required-pass", "FoldDoubleRelu"],
        [*base, "--disabled-pass", "FoldDoubleRelu,noop-decorated"],
        [*base, "--disabled-pass", "FoldDoubleRelux"],
        # A name two plugins define differently fails where it is used, and only there.
        [model, "-p", "dup-pass"],
        # The plugin's pass fails only with its option: the reproducer records it and replays it.
        [model, "-p", 'boom{fail_in="apply"}', "--crash-reproducer", reproducer],
        ["--run-reproducer", reproducer],
    ], sites["good"], sites["dup"])
    assert results[:4] == [(0, ONE_RELU, ""), (0, ONE_RELU, ""), (0, ONE_RELU, ""), (0, TWO_RELUS, "")]
    assert results[4] == (
        1, "", "xrelay-opt: error: unknown pass 'FoldDoubleRelux' in --disabled-pass (did you mean 'FoldDoubleRelu'?)\n")
    assert results[5][:2] == (1, "") and results[5][2].splitlines()[0] == (
        "pass-pipeline:1:1: error: cannot load pass 'dup-pass': ValueError: pass 'dup-pass' is defined "
        "differently by the plugins 'dupa', 'dupb'")
    boom = "xrelay-opt: error: pass 'Boom' failed: RuntimeError: boom in apply\n"
    written = f" (crash reproducer written to {reproducer}; replay: xrelay-opt --run-reproducer {reproducer})"
    assert results[6] == (1, "", boom.replace("\n", written + "\n"))
    assert '// xrelay-reproducer: pipeline: "boom{fail_in=\\"apply\\"}"' in open(reproducer).read()
    assert results[7] == (1, "", boom)


def test_stock_xdsl_opt_runs_the_plugins_listed_passes(sites):
    done = run([tool("xdsl-opt"), str(sites["model"]), "-p", "fold-double-relu,noop-eager"], sites["good"])
    assert (done.returncode, done.stdout, done.stderr) == (0, ONE_RELU, "")


PYTHON_SIDE = textwrap.dedent('''
    import sys
    from xdsl.parser import Parser
    from xrelay import transform
    from xrelay.dialects import make_context
    from xrelay.instrument.reproducer import CrashReproducer, run_reproducer

    # A fresh process: nothing imported the plugin's modules yet.
    assert "reluplugin.fold_double_relu" not in sys.modules
    for name in ("FoldDoubleRelu", "fold-double-relu", "NoopEager", "noop-decorated"):
        print(name, "->", transform.get_pass(name).info.name)
    try:
        transform.get_pass("fold-doble-relu")
    except ValueError as error:
        print(error)

    module = Parser(make_context(), open(sys.argv[1]).read()).parse_module()
    fold = transform.Sequential([transform.get_pass("fold-double-relu")])
    for settings in ({"opt_level": 0}, {"opt_level": 0, "required_pass": ["fold-double-relu"]},
                     {"opt_level": 0, "required_pass": ["FoldDoubleRelu"]},
                     {"disabled_pass": ["fold-double-relu"]}, {"disabled_pass": ["FoldDoubleRelu"]}, {}):
        with transform.PassContext(**settings):
            print(settings, "relus:", str(fold(module)).count("nn.relu("))
    try:
        transform.PassContext(disabled_pass=["fold-doble-relu"])
    except ValueError as error:
        print(error)

    # A reproducer of the plugin's pass replays in Python, options included.
    boom = transform.Sequential([transform.get_pass("boom").__class__(fail_in="apply")])
    try:
        with transform.PassContext(instruments=[CrashReproducer(sys.argv[2])]):
            boom(module)
    except RuntimeError as error:
        print("pipeline failed:", error)
    try:
        run_reproducer(sys.argv[2])
    except RuntimeError as error:
        print("replay failed:", error)
''')


def test_python_finds_the_plugin_passes_under_either_name(sites):
    reproducer = sites["root"] / "boom_reproducer.mlir"
    done = run([sys.executable, "-c", PYTHON_SIDE, str(sites["model"]), str(reproducer)], sites["good"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "FoldDoubleRelu -> FoldDoubleRelu",
        "fold-double-relu -> FoldDoubleRelu",
        "NoopEager -> NoopEager",
        "noop-decorated -> NoopDecorated",
        "get_pass: unknown pass 'fold-doble-relu' (did you mean 'fold-double-relu'?)",
        "{'opt_level': 0} relus: 2",
        "{'opt_level': 0, 'required_pass': ['fold-double-relu']} relus: 1",
        "{'opt_level': 0, 'required_pass': ['FoldDoubleRelu']} relus: 1",
        "{'disabled_pass': ['fold-double-relu']} relus: 2",
        "{'disabled_pass': ['FoldDoubleRelu']} relus: 2",
        "{} relus: 1",
        "PassContext: unknown pass 'fold-doble-relu' in disabled_pass (did you mean 'fold-double-relu'?)",
        "pipeline failed: boom in apply",
        "replay failed: boom in apply",
    ]
    assert '// xrelay-reproducer: pipeline: "boom{fail_in=\\"apply\\"}"' in reproducer.read_text()
