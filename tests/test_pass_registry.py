"""One `@register_xrelay_pass` makes a pass visible to Python, `xrelay-opt` and the stock `xdsl-opt`."""

from __future__ import annotations

import subprocess
import sys

import pytest

import xrelay.passes
from xrelay.pass_base import XRELAY_PASSES
from xrelay.passes import ALL_PASSES, PASS_MODULES
from xrelay.transform import registered_pass_names
from xrelay.universe import XRELAY_UNIVERSE

EXPECTED = {
    "infer-type", "fold-constant", "simplify-inference", "backward-fold-scale-axis", "forward-fold-scale-axis",
    "fold-scale-axis", "canonicalize-ops", "dead-code-elimination", "convert-layout",
    "convert-nn-to-linalg", "linalg-bufferize", "linalg-to-loops",
}  # fmt: skip


def no_op_pass(name: str, tvm_name: str) -> type:
    """A frozen-dataclass `XRelayPass` named so that does nothing."""
    from dataclasses import dataclass

    from xrelay.pass_base import XRelayPass

    return dataclass(frozen=True)(type(tvm_name, (XRelayPass,), {
        "name": name, "tvm_name": tvm_name, "apply": lambda self, ctx, op: None}))


@pytest.mark.parametrize("name", sorted(PASS_MODULES))
def test_registered_pass_is_visible_everywhere(name):
    cls = ALL_PASSES[name]()
    assert XRELAY_PASSES[name] is cls and cls.__module__ == PASS_MODULES[name]
    assert XRELAY_UNIVERSE.all_passes[name]() is cls
    assert {cls.tvm_name, cls.name} <= set(registered_pass_names())  # transform.get_pass
    assert getattr(xrelay.passes, cls.__name__) is cls


def test_every_pass_of_the_project_is_registered():
    assert EXPECTED <= set(ALL_PASSES)


def test_pass_modules_lists_every_registered_pass_at_its_module():
    xrelay.passes.load_all_passes()
    registered = {name: cls.__module__ for name, cls in XRELAY_PASSES.items() if cls.__module__.startswith("xrelay.")}
    assert registered == PASS_MODULES, "xrelay.passes.PASS_MODULES must list every pass at its module"


def test_xrelay_opt_imports_only_the_passes_its_pipeline_names(tmp_path):
    # Every lit RUN line starts xrelay-opt: importing all ~40 passes would cost each a third of its time.
    source = tmp_path / "m.mlir"
    source.write_text('func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n'
                      '  %y = "nn.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>\n'
                      '  func.return %y : tensor<2xf32>\n}\n')
    script = ("import sys; from xrelay.tools.xrelay_opt import main; status = main(sys.argv[1:]); "
              "print(sorted(m for m in sys.modules if m.startswith(('xrelay.passes.', 'xrelay.lowering.', "
              "'xrelay.codegen')))); sys.exit(status)")
    done = subprocess.run([sys.executable, "-c", script, str(source), "-p", "infer-type,fold-constant"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "['xrelay.passes.fold_constant', 'xrelay.passes.infer_type']"
    assert '"nn.relu"' in done.stdout or "nn.relu" in done.stdout


def test_stock_xdsl_opt_finds_the_passes():
    # A fresh interpreter, as xdsl-opt starts: only the `xdsl.universe` entry point brings xrelay in.
    names = subprocess.run(
        [sys.executable, "-c", "from xdsl.universe import Universe; print(*Universe.get_multiverse().all_passes)"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    assert EXPECTED <= set(names)


def test_a_second_pass_with_a_taken_name_is_refused():
    from xrelay.pass_base import register_xrelay_pass

    with pytest.raises(ValueError, match="Impostor and FoldConstant share the name 'fold-constant'"):
        register_xrelay_pass(no_op_pass("fold-constant", "Impostor"))
    assert XRELAY_PASSES["fold-constant"].__name__ == "FoldConstant"


def test_a_renamed_pass_keeps_its_former_names_out_of_the_listings(tmp_path, capsys):
    from xrelay import lowering, transform
    from xrelay.lowering.bufferize import LinalgBufferize
    from xrelay.tools import xrelay_opt

    assert isinstance(transform.get_pass("nn-bufferize"), LinalgBufferize)
    assert isinstance(transform.get_pass("NNBufferize"), LinalgBufferize)
    assert lowering.NNBufferize is LinalgBufferize
    assert "nn-bufferize" not in ALL_PASSES and "nn-bufferize" not in XRELAY_UNIVERSE.all_passes
    # A pipeline written for the last release still runs, under the pass's new name.
    source = tmp_path / "m.mlir"
    source.write_text(
        'func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n'
        '  %y = "nn.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>\n'
        '  func.return %y : tensor<2xf32>\n}\n'
    )
    old, new = ("convert-nn-to-linalg," + name for name in ("nn-bufferize", "linalg-bufferize"))
    assert xrelay_opt.main([str(source), "-p", old]) == 0
    old_output = capsys.readouterr().out
    assert xrelay_opt.main([str(source), "-p", new]) == 0
    assert capsys.readouterr().out == old_output and "memref" in old_output


def test_fold_scale_axis_is_a_pass_class_like_the_others():
    from xrelay.pass_base import XRelayPass
    from xrelay.passes import FoldScaleAxis

    assert XRELAY_PASSES["fold-scale-axis"] is FoldScaleAxis
    assert isinstance(FoldScaleAxis(), XRelayPass)
    assert [type(part).__name__ for part in FoldScaleAxis.parts()] == [
        "BackwardFoldScaleAxis", "ForwardFoldScaleAxis", "FoldConstant"
    ]
    assert xrelay.passes.FoldScaleAxisPass is FoldScaleAxis  # the class's name until it became FoldScaleAxis


# --- one pass, two names -----------------------------------------------------------------------------


@pytest.mark.parametrize("given", ["simplify-inference", "SimplifyInference"])
def test_pass_context_takes_either_name_of_a_pass(given):
    from xrelay import transform

    required = transform.PassContext(required_pass=[given])
    assert required.is_required("SimplifyInference") and required.is_required("simplify-inference")
    assert required.required_pass == (given,)  # kept as given (reproducers record it so)
    disabled = transform.PassContext(opt_level=3, disabled_pass=[given])
    assert not disabled.pass_enabled(transform.get_pass("simplify-inference").info)
    assert disabled.pass_enabled(transform.get_pass("fold-constant").info)


def test_pass_context_refuses_a_near_miss_and_keeps_other_names():
    from xrelay import transform

    with pytest.raises(ValueError, match=r"^PassContext: unknown pass 'SimplifyInferense' in required_pass "
                                         r"\(did you mean 'SimplifyInference'\?\)$"):
        transform.PassContext(required_pass=["SimplifyInferense"])
    with pytest.raises(ValueError, match=r"in disabled_pass \(did you mean 'fold-constant'\?\)$"):
        transform.PassContext(disabled_pass=["foldconstant"])
    # A Python module_pass is registered nowhere: its name is taken, as TVM takes any name.
    assert transform.PassContext(disabled_pass=["MyScriptPass"]).disabled_pass == ("MyScriptPass",)


def test_get_pass_says_did_you_mean():
    from xrelay import transform

    with pytest.raises(ValueError, match=r"^get_pass: unknown pass 'fold-constnt' \(did you mean 'fold-constant'\?\)$"):
        transform.get_pass("fold-constnt")


def test_infer_type_after_is_off_unless_a_pass_asks():
    """The decision docs/writing-a-pass.md records: no nested InferType after a pass by default."""
    from dataclasses import dataclass

    from xrelay import transform
    from xrelay.dialects import parse_mlir
    from xrelay.instrument import PassInstrument
    from xrelay.pass_base import XRelayPass

    Plain = no_op_pass("test-plain", "Plain")

    @dataclass(frozen=True)
    class Typed(Plain):
        infer_type_after = True

    seen = []

    class Names(PassInstrument):
        def run_before_pass(self, mod, info):
            seen.append(info.name)

    module = parse_mlir("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n  func.return %x : tensor<2xf32>\n}\n")
    with transform.PassContext(instruments=[Names()]):
        Plain()(module)
        Typed()(module)
    assert XRelayPass.infer_type_after is False
    assert seen == ["Plain", "Plain", "InferType"]
