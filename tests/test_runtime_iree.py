"""`backend="iree"`: every nn op kind compiled by IREE (upstream MLIR) gives the nn level's outputs
(1e-5), and the tools say how to install IREE when it is missing. Whole networks:
test_runtime_iree_models.py (ResNet) and test_frontend_onnx_zoo_iree.py (imported ONNX models)."""

from __future__ import annotations

import numpy as np
import pytest
from test_lowering_ops import CASES, as_list, single_op_module
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block, Region

from xrelay.runtime.iree import backend as iree_backend
from xrelay.runtime.reference.interpreter import run

needs_iree = pytest.mark.skipif(not iree_backend.available(), reason="IREE is not installed (the 'iree' extra)")


def every_op_case() -> list[tuple[str, str, list[np.ndarray], dict]]:
    """(id, op name, operand arrays, attributes) of every nn op case of the per-op lowering tests:
    `test_lowering_ops`, `test_ops_elementwise_math` and `test_ops_reduce_norm`."""
    import test_ops_elementwise_math
    import test_ops_reduce_norm

    rng = np.random.default_rng(7)
    cases = [(case_id, op_name, [(rng.uniform(0.5, 2.0, s) if positive else rng.standard_normal(s)).astype(np.float32)
                                 for s in shapes], attrs)
             for case_id, op_name, shapes, attrs, positive in CASES]
    for module in (test_ops_elementwise_math, test_ops_reduce_norm):
        cases += [(c[0], c[1], list(c[2]), c[3]) for c in module.CASES]
    return cases


def all_cases_module() -> tuple[ModuleOp, dict[str, np.ndarray], list[tuple[str, int]]]:
    """One `@main` applying every case of `every_op_case` to arguments of its own (one IREE compile
    for all), its inputs, and (case id, result count) in result order."""
    results, ops, inputs, layout = [], [], {}, []
    block = Block()
    for case_id, op_name, arrays, attrs in every_op_case():
        single = single_op_module(op_name, [a.shape for a in arrays], attrs)
        (main,) = single.ops
        op = main.body.block.first_op
        args = []
        for i, array in enumerate(arrays):
            name = f"{case_id}_a{i}"  # (xDSL drops a trailing _<digits> from names)
            arg = block.insert_arg(main.body.block.args[i].type, len(block.args))
            arg.name_hint = name
            args.append(arg)
            inputs[name] = array
        new = op.clone()
        for i, arg in enumerate(args):
            new.operands[i] = arg
        ops.append(new)
        results.extend(new.results)
        layout.append((case_id, len(new.results)))
    block.add_ops([*ops, func.ReturnOp(*results)])
    types = [a.type for a in block.args]
    function = func.FuncOp("main", FunctionType.from_lists(types, [r.type for r in results]), Region(block))
    return ModuleOp([function]), inputs, layout


@needs_iree
@pytest.mark.parametrize("channels_last", [False, True], ids=["as-built", "nhwc"])
def test_every_nn_op_kind_through_iree_matches_the_nn_level(channels_last):
    module, inputs, layout = all_cases_module()
    expected = as_list(run(module, inputs))
    compiled = iree_backend.compile_module(module, channels_last=channels_last)
    got = compiled(*[inputs[a.name_hint] for a in module.body.block.first_op.body.block.args])
    assert len(got) == len(expected)
    position, wrong = 0, []
    for case_id, count in layout:
        for g, e in zip(got[position:position + count], expected[position:position + count]):
            if not (g.shape == e.shape and g.dtype == e.dtype and np.allclose(g, e, rtol=1e-5, atol=1e-5, equal_nan=True)):
                wrong.append(case_id)
        position += count
    assert wrong == []


@needs_iree
def test_compiled_modules_are_cached_per_module_text(tmp_path, monkeypatch):
    monkeypatch.setenv("XRELAY_IREE_CACHE", str(tmp_path))
    module = single_op_module("nn.relu", [(2, 3)], {})
    first = iree_backend.compile_module(module)
    assert iree_backend.compile_module(single_op_module("nn.relu", [(2, 3)], {})) is first
    assert len(list(tmp_path.glob("*.vmfb"))) == 1
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    np.testing.assert_array_equal(first(x)[0], np.maximum(x, 0))
    other = iree_backend.compile_module(single_op_module("nn.negative", [(2, 3)], {}))
    assert other is not first and len(list(tmp_path.glob("*.vmfb"))) == 2
    np.testing.assert_array_equal(other(x)[0], -x)
    # The flags are part of the key: the same text with IREE's own defaults is another module.
    plain = iree_backend.compile_module(module, flags=())
    assert plain is not first and len(list(tmp_path.glob("*.vmfb"))) == 3
    assert iree_backend.compile_module(module, flags=iree_backend.DEFAULT_FLAGS) is first
    np.testing.assert_array_equal(plain(x)[0], np.maximum(x, 0))


def test_compile_vmfb_gives_the_cached_flatbuffer_iree_tools_load(tmp_path, monkeypatch):
    monkeypatch.setenv("XRELAY_IREE_CACHE", str(tmp_path))
    text = str(iree_backend.prepare(single_op_module("nn.relu", [(2, 3)], {})))
    vmfb = iree_backend.compile_vmfb(text)
    assert [path.read_bytes() for path in tmp_path.glob("*.vmfb")] == [vmfb]
    assert iree_backend.compile_vmfb(text) == vmfb  # read back from the disk cache
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    np.testing.assert_array_equal(iree_backend.CompiledModule(vmfb)(x)[0], np.maximum(x, 0))
    with pytest.raises(ValueError, match="IREE could not compile the module: .*--no-such-flag"):
        iree_backend.compile_vmfb(text, flags=("--no-such-flag",))


def test_missing_iree_is_one_line_naming_the_extra(monkeypatch, tmp_path, capsys):
    import builtins

    real_import = builtins.__import__

    def no_iree(name, *args, **kwargs):
        if name.startswith("iree"):
            raise ImportError(f"No module named '{name}'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_iree)
    module = single_op_module("nn.relu", [(2,)], {})
    with pytest.raises(iree_backend.IreeUnavailableError, match=r"pip install 'xrelay\[iree\]'"):
        run(module, {"a0": np.zeros(2, np.float32)}, backend="iree")

    from xrelay.tools import xrelay_run

    model = tmp_path / "m.mlir"
    model.write_text(str(module))
    np.save(tmp_path / "x.npy", np.zeros(2, np.float32))
    status = xrelay_run.main([str(model), "--backend", "iree", "--input", f"a0={tmp_path / 'x.npy'}"])
    err = capsys.readouterr().err
    assert status == 1
    assert err.strip().count("\n") == 0 and "pip install 'xrelay[iree]'" in err and "Traceback" not in err


def test_unknown_backend_and_memref_modules_are_refused():
    from xrelay.lowering import lower

    module = single_op_module("nn.relu", [(2,)], {})
    with pytest.raises(ValueError, match="unknown backend 'tvm'"):
        run(module, {"a0": np.zeros(2, np.float32)}, backend="tvm")
    with pytest.raises(ValueError, match="memrefs"):
        run(lower(module, to="memref"), {"a0": np.zeros(2, np.float32)}, backend="iree")


@needs_iree
def test_xrelay_run_backend_iree_matches_the_nn_level(tmp_path, capsys):
    from xrelay.tools import xrelay_run

    module = single_op_module("nn.softmax", [(2, 5)], {})
    model = tmp_path / "m.mlir"
    model.write_text(str(module))
    x = np.random.default_rng(1).standard_normal((2, 5)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out.npy"
    assert xrelay_run.main([str(model), "--backend", "iree", "--input", f"a0={tmp_path / 'x.npy'}", "-o", str(out)]) == 0
    expected = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(np.load(out), expected, rtol=1e-5, atol=1e-6)
    assert xrelay_run.main([str(model), "--backend", "iree", "--level", "loops", "--input", str(tmp_path / "x.npy")]) == 1
    assert "--backend iree runs nn- or linalg-level modules" in capsys.readouterr().err


@needs_iree
def test_xrelay_run_iree_flags_replace_the_defaults(tmp_path, capsys):
    from xrelay.tools import xrelay_run

    model = tmp_path / "m.mlir"
    model.write_text(str(single_op_module("nn.softmax", [(2, 5)], {})))
    x = np.random.default_rng(2).standard_normal((2, 5)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    expected = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    for flags in ("--iree-flags=", "--iree-flags=--iree-opt-level=O3 --iree-llvmcpu-enable-ukernels=none"):
        out = tmp_path / "out.npy"
        assert xrelay_run.main([str(model), "--backend", "iree", flags, "--input", str(tmp_path / "x.npy"),
                                "-o", str(out)]) == 0
        np.testing.assert_allclose(np.load(out), expected, rtol=1e-5, atol=1e-6)
    capsys.readouterr()
    for args, words in ((["--backend", "iree", "--iree-flags=--no-such-flag"],
                         "IREE could not compile the module: iree-compile: Unknown command line argument "
                         "'--no-such-flag'."),
                        (["--iree-flags=--iree-opt-level=O3"], "--iree-flags needs --backend iree")):
        assert xrelay_run.main([str(model), *args, "--input", str(tmp_path / "x.npy")]) == 1
        err = capsys.readouterr().err
        assert err == f"xrelay-run: error: {words}\n"


def test_prepare_finds_the_registered_lowering_without_importing_passes_first():
    # A fresh process that imports only the dialects and the backend: `prepare` must load the lowering
    # that passes/iree_lowering.py registers (through the entry points), not fail or skip NHWC.
    import subprocess
    import sys

    script = """
import sys
from xdsl.context import Context
from xdsl.parser import Parser
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xrelay.dialects.nn import NN
from xrelay.runtime.iree import backend as iree_backend
text = '''func.func @main(%x: tensor<1x8x8x8xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %y = nn.conv2d(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x8xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}'''
ctx = Context()
for dialect in (Builtin, Func, NN):
    ctx.load_dialect(dialect)
module = Parser(ctx, text).parse_module()
assert "xrelay.passes" not in sys.modules
lowered = iree_backend.prepare(module, channels_last=True)
print(sorted({op.name for op in lowered.walk() if op.name.startswith(("linalg.conv", "nn."))}))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['linalg.conv_2d_nhwc_hwcf']"
