"""Upstream MLIR in, below linalg on tensors: upstream's bufferization (`iree-opt --one-shot-bufferize`, its
deallocation pipeline, `--convert-linalg-to-loops`) of the checked-in upstream linalg parses in xrelay-opt,
runs in xrelay-run at its own level and lowered to loops, and matches ONNX Runtime; each construct xDSL
0.75 could not parse or verify has a test holding the upstream text, showing xDSL's failure and xrelay's
round trip."""

from __future__ import annotations

import re

import numpy as np
import pytest
import upstream_models
from test_upstream_linalg import INPUT_SHAPES, onnx_runtime
from xdsl.context import Context
from xdsl.dialects import arith, bufferization, builtin, func, linalg, math, memref, tensor
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from xrelay.dialects import make_context
from xrelay.runtime.iree.backend import available as iree_available
from xrelay.runtime.executor.linalg_exec import run_linalg
from xrelay.runtime.reference.loops_exec import run_loops
from xrelay.tools import xrelay_run

VARIANTS = list(upstream_models.BUFFERIZED)


def _checked_in(name: str, variant: str):
    return upstream_models.DATA / f"{name}.{variant}.mlir"


@pytest.mark.parametrize("level", [None, "loops"])
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", list(upstream_models.MODELS))
def test_upstream_bufferized_text_runs_in_xrelay_run_and_matches_onnx_runtime(name, variant, level, tmp_path, capsys):
    if level == "loops" and variant in ("loops", "affine"):
        pytest.skip("already at the loops level")
    x = np.random.default_rng(1).standard_normal(INPUT_SHAPES[name]).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out.npy"
    args = [str(_checked_in(name, variant)), "--input", str(tmp_path / "x.npy"), "-o", str(out)]
    assert xrelay_run.main(args + (["--level", level] if level else [])) == 0, capsys.readouterr().err
    expected = onnx_runtime(upstream_models.MODELS[name](), x)
    got = np.load(out)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", list(upstream_models.MODELS))
def test_upstream_bufferized_text_prints_back_as_it_was_parsed(name, variant):
    # Printing and reparsing is a fixed point, and the upstream spellings survive (iree-opt rereads the
    # printed text: tests/filecheck/upstream/upstream_memref_roundtrip.mlir).
    text = _checked_in(name, variant).read_text()
    printed = str(Parser(make_context(), text).parse_module())
    assert str(Parser(make_context(), printed).parse_module()) == printed
    for spelling in ("memref.alloc() alignment = 64 :", "memref.copy ", "linalg.map ", "memref.global \"private\" constant"):
        assert (spelling in text) == (spelling in printed), spelling


def _xdsl_context() -> Context:
    """xDSL 0.75's own dialects, as the stock xdsl-opt has them."""
    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, math.Math, tensor.Tensor, memref.MemRef, linalg.Linalg,
                    bufferization.Bufferization):
        ctx.load_dialect(dialect)
    return ctx


def _xdsl_fails(text: str, match: str) -> None:
    with pytest.raises((ParseError, VerifyException), match=match):
        Parser(_xdsl_context(), text).parse_module().verify()


def _round_trip(text: str):
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module, str(module)


ALLOC = """
func.func @main(%n: index) -> memref<?x4xf32> {
  %a = memref.alloc(%n) alignment = 64 {tag} : memref<?x4xf32>
  %b = memref.alloca() alignment = 16 : memref<4xf32>
  %c = memref.alloc() {alignment = 32 : i64} : memref<4xf32>
  func.return %a : memref<?x4xf32>
}
"""


def test_memref_alloc_alignment_in_upstream_syntax():
    # Upstream writes `alignment = 64` outside the attribute dictionary (and, its properties kept strictly
    # out of it, rejects xDSL's `{alignment = 64 : i64}`); xDSL 0.75 parses only the latter.
    _xdsl_fails(ALLOC, "Expected ':'")
    module, printed = _round_trip(ALLOC)
    allocs = [op for op in module.walk() if isinstance(op, memref.AllocOp | memref.AllocaOp)]
    assert [op.alignment.value.data for op in allocs] == [64, 16, 32]
    assert "memref.alloc(%n) alignment = 64 {tag} : memref<?x4xf32>" in printed
    assert "memref.alloca() alignment = 16 : memref<4xf32>" in printed
    assert "memref.alloc() alignment = 32 : memref<4xf32>" in printed  # the old spelling, printed upstream's way


GLOBALS = """
memref.global "private" constant @__constant_2xf32 : memref<2xf32> = dense<[1.5, -2.0]> alignment = 64
memref.global @state : memref<2x2xi32> = uninitialized
memref.global "private" constant @splat : memref<3xf32> = dense<0.25> {tag}
func.func @main() -> memref<2xf32> {
  %0 = memref.get_global @__constant_2xf32 : memref<2xf32>
  %1 = memref.get_global @splat : memref<3xf32>
  %2 = memref.alloc() : memref<2xf32>
  %3 = memref.subview %1[1] [2] [1] : memref<3xf32> to memref<2xf32, strided<[1], offset: 1>>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%0, %3 : memref<2xf32>, memref<2xf32, strided<[1], offset: 1>>) outs(%2 : memref<2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  func.return %2 : memref<2xf32>
}
"""


def test_memref_global_in_upstream_syntax_parses_and_runs():
    # xDSL 0.75's memref.global has no custom syntax at all: only the generic form parses.
    _xdsl_fails(GLOBALS, "memref.global does not have a custom format")
    module, printed = _round_trip(GLOBALS)
    assert ('memref.global "private" constant @__constant_2xf32 : memref<2xf32> = dense<[1.500000e+00, '
            '-2.000000e+00]> alignment = 64') in printed
    assert "memref.global @state : memref<2x2xi32> = uninitialized" in printed
    assert 'memref.global "private" constant @splat : memref<3xf32> = dense<2.500000e-01> {tag}' in printed
    runnable = GLOBALS.replace("memref.global @state : memref<2x2xi32> = uninitialized\n", "")
    (got,) = run_linalg(Parser(make_context(), runnable).parse_module(), [])  # nothing runs an uninitialized one
    np.testing.assert_array_equal(got, [1.75, -1.75])


def test_memref_global_without_initial_value_is_one_clear_error(tmp_path, capsys):
    path = tmp_path / "extern.mlir"
    path.write_text('memref.global "private" @extern : memref<2xf32>\n')
    assert xrelay_run.main([str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:2:1: error: Expected '=' before the initial value of memref.global")
    assert "Traceback" not in err


COPY_AND_CAST = """
func.func @main(%x: memref<2x3xf32, strided<[?, ?], offset: ?>>) -> memref<2x5xf32> {
  %cst = arith.constant -1.0 : f32
  %out = memref.alloc() : memref<2x5xf32>
  linalg.fill ins(%cst : f32) outs(%out : memref<2x5xf32>)
  %window = memref.subview %out[0, 1] [2, 3] [1, 1] : memref<2x5xf32> to memref<2x3xf32, strided<[5, 1], offset: 1>>
  memref.copy %x, %window : memref<2x3xf32, strided<[?, ?], offset: ?>> to memref<2x3xf32, strided<[5, 1], offset: 1>>
  %cast = memref.cast %out : memref<2x5xf32> to memref<2x5xf32, strided<[?, ?], offset: ?>>
  func.return %out : memref<2x5xf32>
}
"""


@pytest.mark.parametrize("level", ["memref", "loops"])
def test_memref_copy_and_cast_in_upstream_syntax_with_dynamically_strided_arguments(level):
    # xDSL 0.75 has no custom syntax for memref.copy or memref.cast. The argument is a fully dynamic
    # strided memref, as upstream's bufferization types arguments: executors pass contiguous arrays, so
    # the loops level (which indexes through the types' layouts) resolves `?` to row-major strides.
    _xdsl_fails(COPY_AND_CAST, "memref.copy does not have a custom format")
    module, printed = _round_trip(COPY_AND_CAST)
    assert ("memref.copy %x, %window : memref<2x3xf32, strided<[?, ?], offset: ?>> to "
            "memref<2x3xf32, strided<[5, 1], offset: 1>>") in printed
    assert "memref.cast %out : memref<2x5xf32> to memref<2x5xf32, strided<[?, ?], offset: ?>>" in printed
    if level == "loops":
        from xrelay.lowering import LinalgToLoops

        module = LinalgToLoops()(module)
        assert not any(op.name.startswith("linalg.") for op in module.walk())
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (got,) = (run_loops if level == "loops" else run_linalg)(module, [x])
    expected = np.full((2, 5), -1, np.float32)
    expected[:, 1:4] = x
    np.testing.assert_array_equal(got, expected)


MAP = """
func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %e = tensor.empty() : tensor<2x3xf32>
  %sum = linalg.map { arith.addf } ins(%x, %y : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>)
  %scaled = linalg.map ins(%sum : tensor<2x3xf32>) outs(%x : tensor<2x3xf32>)
    (%in: f32, %init: f32) {
      %0 = arith.mulf %in, %init : f32
      linalg.yield %0 : f32
    }
  %rows = linalg.map outs(%e : tensor<2x3xf32>)
    (%init: f32) {
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %k = arith.muli %i, %j : index
      %c = arith.index_cast %k : index to i64
      %f = arith.sitofp %c : i64 to f32
      linalg.yield %f : f32
    }
  func.return %sum, %scaled, %rows : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
"""


def test_linalg_map_short_and_long_forms_and_linalg_index_in_its_body():
    # xDSL 0.75 has no linalg.map; upstream's bufferization writes one for every tensor.pad, with
    # linalg.index ops in its body (which xDSL's linalg.index forbids outside a linalg.generic).
    _xdsl_fails(MAP, "linalg.map is not registered")
    module, printed = _round_trip(MAP)
    assert ("linalg.map { arith.addf } ins(%x, %y : tensor<2x3xf32>, tensor<2x3xf32>) "
            "outs(%e : tensor<2x3xf32>)") in printed
    assert re.search(r"outs\(%x : tensor<2x3xf32>\)\n +\(%in: f32, %init: f32\) \{", printed)
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    y = np.array([[0.5, 0, -1], [2, 2, 2]], np.float32)
    from xrelay.lowering import LinalgBufferize

    for program in (module, LinalgBufferize()(module.clone())):
        total, scaled, rows = run_linalg(program, [x, y])
        np.testing.assert_array_equal(total, x + y)
        np.testing.assert_array_equal(scaled, (x + y) * x)
        np.testing.assert_array_equal(rows, [[0, 0, 0], [0, 1, 2]])


def test_linalg_map_in_the_older_form_gets_its_init_argument():
    # Before LLVM 20, linalg.map's body took the inputs only.
    text = """
    func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
      %e = tensor.empty() : tensor<3xf32>
      %0 = linalg.map ins(%x : tensor<3xf32>) outs(%e : tensor<3xf32>)
        (%in: f32) {
          %n = arith.negf %in : f32
          linalg.yield %n : f32
        }
      func.return %0 : tensor<3xf32>
    }
    """
    module, printed = _round_trip(text)
    assert "linalg.map { arith.negf } ins(%x : tensor<3xf32>) outs(%e : tensor<3xf32>)" in printed
    (got,) = run_linalg(module, [np.array([1, -2, 0], np.float32)])
    np.testing.assert_array_equal(got, [-1, 2, 0])


def test_linalg_map_with_a_mis_shaped_input_is_a_verifier_error():
    text = """
    func.func @main(%x: tensor<3xf32>) -> tensor<4xf32> {
      %e = tensor.empty() : tensor<4xf32>
      %0 = linalg.map { math.absf } ins(%x : tensor<3xf32>) outs(%e : tensor<4xf32>)
      func.return %0 : tensor<4xf32>
    }
    """
    with pytest.raises(VerifyException, match=r"input type tensor<3xf32> does not have the init's shape \[4\]"):
        Parser(make_context(), text).parse_module().verify()


EDGES = """
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = bufferization.to_buffer %x : tensor<2x3xf32> to memref<2x3xf32, strided<[?, ?], offset: ?>>
  %1 = memref.alloc() alignment = 64 : memref<2x3xf32>
  linalg.map { math.absf } ins(%0 : memref<2x3xf32, strided<[?, ?], offset: ?>>) outs(%1 : memref<2x3xf32>)
  %2 = bufferization.to_tensor %1 : memref<2x3xf32> to tensor<2x3xf32>
  func.return %2 : tensor<2x3xf32>
}
"""


@pytest.mark.parametrize("level", ["memref", "loops"])
def test_bufferization_to_buffer_with_a_strided_layout(level):
    # Without bufferize-function-boundaries upstream converts tensor arguments at the edges; xDSL 0.75
    # requires to_buffer's memref to have the identity layout.
    to_buffer = EDGES.split("\n")[2].strip()  # alone, in text xDSL parses otherwise
    _xdsl_fails(f"""func.func @main(%x: tensor<2x3xf32>) {{
      {to_buffer}
      func.return
    }}""", "expected from variable 'T'")
    module, printed = _round_trip(EDGES)
    assert ("bufferization.to_buffer %x : tensor<2x3xf32> to memref<2x3xf32, strided<[?, ?], offset: ?>>"
            in printed)
    if level == "loops":
        from xrelay.lowering import LinalgToLoops

        module = LinalgToLoops()(module)
    x = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    (got,) = (run_loops if level == "loops" else run_linalg)(module, [x])
    np.testing.assert_array_equal(got, np.abs(x))


def test_bufferization_to_tensor_checks_shape_and_element_type():
    text = """
    func.func @main(%m: memref<2x3xf32>) -> tensor<3x2xf32> {
      %0 = bufferization.to_tensor %m : memref<2x3xf32> to tensor<3x2xf32>
      func.return %0 : tensor<3x2xf32>
    }
    """
    with pytest.raises(VerifyException, match="differ in shape or element type"):
        Parser(make_context(), text).parse_module().verify()


@pytest.fixture(scope="module")
def upstream_resnet18(tmp_path_factory):
    """ResNet-18 (xrelay's seeded weights, 64x64, 10 classes) as ONNX, its upstream linalg (IREE's ONNX
    import) in a file, and an input."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    import execution

    from xrelay.frontend import bind_params_by_name, resnet

    module, params = resnet.get_workload(num_layers=18, image_shape=(3, 64, 64), num_classes=10)
    model = execution.onnx_model(bind_params_by_name(module, params))
    workdir = tmp_path_factory.mktemp("resnet18")
    linalg_path = workdir / "resnet18.mlir"
    linalg_path.write_text(upstream_models.import_onnx(model, workdir))
    x = np.random.default_rng(3).standard_normal((1, 3, 64, 64)).astype(np.float32)
    np.save(workdir / "x.npy", x)
    return model, linalg_path, x


@pytest.mark.slow
@pytest.mark.skipif(not iree_available(), reason="needs IREE's ONNX import and iree-opt (the 'iree' extra)")
@pytest.mark.parametrize("variant", VARIANTS)
def test_upstream_resnet18_bufferized_runs_in_xrelay_run_and_matches_onnx_runtime(variant, upstream_resnet18, capsys):
    model, linalg_path, x = upstream_resnet18
    path = linalg_path.with_suffix(f".{variant}.mlir")
    path.write_text(upstream_models.iree_opt(upstream_models.BUFFERIZED[variant], linalg_path))
    out = path.with_suffix(".npy")
    assert xrelay_run.main([str(path), "--input", str(linalg_path.parent / "x.npy"), "-o", str(out)]) == 0, \
        capsys.readouterr().err
    np.testing.assert_allclose(np.load(out), onnx_runtime(model, x), rtol=1e-5, atol=1e-6)


BAD_UPSTREAM = {
    "map-input-shape": ("%0 = linalg.map { math.absf } ins(%x : tensor<3xf32>) outs(%e : tensor<4xf32>)",
                        "3:3: error: 'linalg.map' op input type tensor<3xf32> does not have the init's shape [4]"),
    "map-unknown-payload": ("%0 = linalg.map { foo.bar } ins(%x : tensor<3xf32>) outs(%e : tensor<4xf32>)",
                            "3:19: error: linalg.map: unknown op foo.bar in its short form"),
    "map-payload-arity": ("%0 = linalg.map { arith.addf } ins(%x : tensor<3xf32>) outs(%x : tensor<3xf32>)",
                          "3:19: error: linalg.map: arith.addf in its short form: Expected 2 operands, but got 1"),
    "map-two-inits": ("%0 = linalg.map { math.absf } ins(%x : tensor<3xf32>) outs(%x, %x : tensor<3xf32>, tensor<3xf32>)",
                      "3:57: error: linalg.map takes exactly one init in outs(...), got 2"),
    "map-body-types": ("%0 = linalg.map ins(%x : tensor<3xf32>) outs(%x : tensor<3xf32>) (%a: i32, %b: f32) {\n"
                       "    linalg.yield %b : f32\n  }",
                       "3:3: error: 'linalg.map' op the body takes (i32, f32), expected the element types (f32, f32)"),
    "copy-operands": ("memref.copy %m, %m, %m : memref<2xf32> to memref<2xf32>",
                      "3:15: error: expected 2 operand(s), got 3"),
    "to-buffer-shape": ("%0 = bufferization.to_buffer %x : tensor<3xf32> to memref<4xf32>",
                        "3:3: error: 'bufferization.to_buffer' op tensor<3xf32> and memref<4xf32> differ in shape"),
    "alloc-alignment": ("%0 = memref.alloc() alignment = 3 : memref<2xf32>",
                        "3:3: error: 'memref.alloc' op"),
    "global-type": ('func.return\n}\nmemref.global "private" constant @c : tensor<2xf32> = dense<1.0>\nfunc.func @g() {',
                    "5:39: error: memref.global needs a memref type, got tensor<2xf32>"),
    "global-literal": ('func.return\n}\nmemref.global "private" constant @c : memref<2xf32> = dense<[1.0, 2.0, 3.0]>\n'
                       'func.func @g() {', "5:55: error: Shape mismatch in dense literal. Expected [2] shape"),
}


@pytest.mark.parametrize("case", list(BAD_UPSTREAM))
def test_malformed_upstream_text_is_one_located_error(case, tmp_path, capsys):
    from xrelay.tools import xrelay_opt

    line, expected = BAD_UPSTREAM[case]
    path = tmp_path / "bad.mlir"
    path.write_text("func.func @main(%x: tensor<3xf32>, %m: memref<2xf32>) {\n"
                    "  %e = tensor.empty() : tensor<4xf32>\n"
                    f"  {line}\n  func.return\n}}\n")
    assert xrelay_opt.main([str(path)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.startswith(f"{path}:{expected}"), err


AFFINE = """
func.func @main(%x: memref<2x5xf32>) -> memref<2x4xf32> {
  %out = memref.alloc() : memref<2x4xf32>
  affine.for %i = 0 to 2 {
    affine.for %j = 0 to 4 {
      %a = affine.load %x[%i, %j] : memref<2x5xf32>
      %b = affine.load %x[%i, %j + 1] : memref<2x5xf32>
      %c = affine.load %x[1 - %i, 0] : memref<2x5xf32>
      %s = arith.subf %b, %a : f32
      %t = arith.addf %s, %c : f32
      affine.store %t, %out[%i, %j] : memref<2x4xf32>
    }
  }
  func.return %out : memref<2x4xf32>
}
"""


def test_affine_loops_run_where_xdsl_lower_affine_fails():
    # `iree-opt --convert-linalg-to-affine-loops` writes affine.load/store whose index lists xDSL 0.75
    # parses as map symbols; its own lower-affine then fails on them. The loops executor takes the
    # affine ops as scf loops (runtime/reference/affine_loops.py).
    from xdsl.context import Context as XContext
    from xdsl.transforms.lower_affine import LowerAffinePass

    module = Parser(make_context(), AFFINE).parse_module()
    with pytest.raises(IndexError):
        LowerAffinePass().apply(XContext(), module.clone())
    x = np.arange(10, dtype=np.float32).reshape(2, 5) ** 2
    (got,) = run_loops(module, [x])
    np.testing.assert_array_equal(got, x[:, 1:] - x[:, :-1] + x[::-1, :1])
