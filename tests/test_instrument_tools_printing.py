"""PrintIR and IRDiff: exact dumps and diffs around hand-written passes on a three-op module."""

import io

import numpy as np
import pytest

from xrelay import transform
from xrelay.dialects import nn
from xrelay.instrument.ir_diff import IRDiff
from xrelay.instrument.print_ir import PrintIR, module_changed, module_text
from tool_passes import RELU_ADD, clone_only, drop_relu, noop, outer, parse_module

# The module as parsed and as printed, before any pass: the shared RELU_ADD is written in printed form.
BEFORE = RELU_ADD

AFTER = """\
builtin.module {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %c = nn.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
    %y = nn.add(%x, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    func.return %y : tensor<2xf32>
  }
}
"""


def parse(text=RELU_ADD):
    return parse_module(text)


def header(when, name, depth):
    return f"// -----// IR Dump {when} {name} (depth {depth}) //----- //\n"


def run(instrument, passes):
    with transform.PassContext(instruments=[instrument]):
        return transform.Sequential(passes)(parse())


def test_module_text_and_changed():
    mod = parse()
    assert module_text(mod) == BEFORE
    assert not module_changed(mod, mod)
    assert not module_changed(mod, mod.clone())
    assert module_changed(mod, drop_relu(mod))


def test_print_after_all_names_every_pass_with_its_depth():
    out = io.StringIO()
    run(PrintIR(after_all=True, stream=out), [noop, outer])
    assert out.getvalue() == (
        header("After", "Noop", 1) + BEFORE + "\n"
        + header("After", "DropRelu", 2) + AFTER + "\n"
        + header("After", "Outer", 1) + AFTER + "\n"
        + header("After", "sequential", 0) + AFTER + "\n"
    )


def test_print_before_and_after_selected_by_name_and_regex():
    out = io.StringIO()
    run(PrintIR(before=["Outer"], after="Drop.*", stream=out), [noop, outer])
    assert out.getvalue() == header("Before", "Outer", 1) + BEFORE + "\n" + header("After", "DropRelu", 2) + AFTER + "\n"


def test_print_before_all():
    out = io.StringIO()
    run(PrintIR(before_all=True, stream=out), [noop])
    assert out.getvalue() == header("Before", "sequential", 0) + BEFORE + "\n" + header("Before", "Noop", 1) + BEFORE + "\n"


def test_print_after_change_skips_passes_that_changed_nothing():
    out = io.StringIO()
    run(PrintIR(after_change=True, stream=out), [noop, clone_only, outer])
    assert out.getvalue() == (
        header("After", "DropRelu", 2) + AFTER + "\n"
        + header("After", "Outer", 1) + AFTER + "\n"
        + header("After", "sequential", 0) + AFTER + "\n"
    )
    # With a selection, after-change restricts it.
    out = io.StringIO()
    run(PrintIR(after=["Noop", "Outer"], after_change=True, stream=out), [noop, outer])
    assert out.getvalue() == header("After", "Outer", 1) + AFTER + "\n"


def test_print_ir_goes_to_stderr_by_default(capsys):
    run(PrintIR(after=["Noop"]), [noop])
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == header("After", "Noop", 1) + BEFORE + "\n"


def test_bad_selector_regex_is_one_clear_error():
    with pytest.raises(ValueError, match=r"PrintIR after: 'Fold\(' is not a valid pass name or regex"):
        PrintIR(after=["Fold("])


def test_large_constants_are_elided_to_a_digest_of_their_bytes():
    import hashlib

    values = np.arange(20, dtype=np.float32)
    text = RELU_ADD.replace("%c = nn.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>",
                       "%c = nn.constant dense<0.0> : tensor<2xf32>")
    mod = parse(text)
    # Put a 20-element constant in front of the function body's first op.
    block = next(op for op in mod.walk() if op.name == "func.func").body.block
    block.insert_op_before(nn.ConstantOp(values), block.first_op)
    digest = hashlib.sha1(values.tobytes()).hexdigest()[:12]
    full = module_text(mod)
    assert '"0x' in full  # the full form prints hex
    elided = module_text(mod, max_constant_elements=16)
    assert f"nn.constant dense_resource<__elided_{digest}__> : tensor<20xf32>" in elided
    assert '"0x' not in elided
    assert module_text(mod, max_constant_elements=20) == full  # not larger than the limit: printed
    # A splat never needs eliding; small constants stay.
    assert "dense<0.000000e+00> : tensor<2xf32>" in elided


DIFF = """\
--- before DropRelu
+++ after DropRelu
@@ -1,8 +1,7 @@
 builtin.module {
   func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
     %c = nn.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
-    %r = nn.relu(%x) : (tensor<2xf32>) -> tensor<2xf32>
-    %y = nn.add(%r, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
+    %y = nn.add(%x, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
     func.return %y : tensor<2xf32>
   }
 }
"""


def test_ir_diff_for_every_pass_that_changed_the_ir():
    out = io.StringIO()
    differ = IRDiff(stream=out)
    run(differ, [noop, clone_only, outer])
    assert [(depth, name) for depth, name, _ in differ.diffs] == [(2, "DropRelu"), (1, "Outer"), (0, "sequential")]
    assert differ.diffs[0][2] == DIFF
    assert differ.diffs[1][2] == DIFF.replace("DropRelu", "Outer")
    assert out.getvalue().startswith("// -----// IR Diff DropRelu (depth 2) //----- //\n" + DIFF + "\n")
    assert out.getvalue().count("// -----// IR Diff") == 3


def test_ir_diff_with_one_context_line():
    differ = IRDiff(context_lines=1, print_diffs=False)
    run(differ, [drop_relu])
    assert differ.diffs[0][2] == (
        "--- before DropRelu\n+++ after DropRelu\n@@ -3,4 +3,3 @@\n"
        "     %c = nn.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>\n"
        "-    %r = nn.relu(%x) : (tensor<2xf32>) -> tensor<2xf32>\n"
        "-    %y = nn.add(%r, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
        "+    %y = nn.add(%x, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
        "     func.return %y : tensor<2xf32>\n"
    )


def test_instruments_stay_balanced_when_a_pass_raises():
    @transform.module_pass(opt_level=0, name="Boom")
    def boom(mod, ctx):
        raise ValueError("boom")

    out = io.StringIO()
    printer = PrintIR(after_all=True, stream=out)
    differ = IRDiff(stream=out)
    with transform.PassContext(instruments=[printer, differ]):
        with pytest.raises(ValueError, match="boom"):
            transform.Sequential([drop_relu, boom])(parse())
        assert printer.running == [] and differ.running == []
        out.truncate(0)
        out.seek(0)
        noop(parse())  # a later top-level pass is at depth 0 again
    assert out.getvalue() == header("After", "Noop", 0) + BEFORE + "\n"


def test_lowered_constants_are_elided_too():
    """After lowering, weights are `arith.constant`s and `memref.global`s: elided like `nn.constant`s
    (MLIR's --mlir-elide-elementsattrs-if-larger elides any elements attribute); small ones and splats kept."""
    import hashlib

    import numpy as np
    from xdsl.parser import Parser

    from xrelay.dialects import make_context
    from xrelay.instrument.print_ir import module_text

    values = np.arange(32, dtype=np.float32).reshape(4, 8)
    text = f"""
memref.global "private" constant @w : memref<4x8xf32> = dense<{values.tolist()}>
memref.global "private" constant @v : memref<2xf32> = dense<[1.0, 2.0]>
func.func @main() -> tensor<4x8xf32> {{
  %c = arith.constant dense<{values.tolist()}> : tensor<4x8xf32>
  %s = arith.constant dense<1.0> : tensor<4x8xf32>
  func.return %c : tensor<4x8xf32>
}}
"""
    digest = hashlib.sha1(values.tobytes()).hexdigest()[:12]
    assert module_text(Parser(make_context(), text).parse_module(), 16) == f"""builtin.module {{
  memref.global "private" constant @w : memref<4x8xf32> = dense_resource<__elided_{digest}__>
  memref.global "private" constant @v : memref<2xf32> = dense<[1.000000e+00, 2.000000e+00]>
  func.func @main() -> tensor<4x8xf32> {{
    %c = arith.constant dense_resource<__elided_{digest}__> : tensor<4x8xf32>
    %s = arith.constant dense<1.000000e+00> : tensor<4x8xf32>
    func.return %c : tensor<4x8xf32>
  }}
}}
"""
