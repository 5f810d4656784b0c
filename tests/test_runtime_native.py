"""The native loops executor (codegen/): models compiled to C equal numpy written here, loops
that may run in parallel are found, the library is reused across processes, and without the
compiler everything still runs on numpy."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from xdsl.parser import Parser

from op_levels import conv2d_reference, single_op_module
from tool_passes import DENSE_MODEL
from xrelay.dialects import make_context
from xrelay.lowering import lower
from xrelay.runtime import run
from xrelay.runtime.reference.loops_exec import LoopsProgram
from xrelay.codegen import c_source
from xrelay.codegen.program import NativeProgram, loops_program
from xrelay.tools.xrelay_run import main as xrelay_run_main

pytestmark = [pytest.mark.skipif(os.environ.get("XRELAY_NATIVE") == "0", reason="native executor disabled"),
              pytest.mark.usefixtures("native_cache")]
RNG = np.random.default_rng(30)


def native(module, *arrays):
    program = NativeProgram(lower(module, to="loops"))
    return program, program(*arrays)


def test_conv_equals_numpy_and_runs_its_output_loops_in_parallel():
    x, w = RNG.standard_normal((1, 8, 12, 12), np.float32), RNG.standard_normal((16, 8, 3, 3), np.float32)
    program, (got,) = native(single_op_module("nn.conv2d", [x, w], {"padding": (1, 1, 1, 1)}), x, w)
    np.testing.assert_allclose(got, conv2d_reference(x, w, padding=1), rtol=1e-4, atol=1e-4)
    assert program.parallel_loops >= 1


def test_dense_equals_numpy():
    x, w = RNG.standard_normal((3, 40), np.float32), RNG.standard_normal((24, 40), np.float32)
    _, (got,) = native(single_op_module("nn.dense", [x, w], {}), x, w)
    np.testing.assert_allclose(got, x.astype(np.float64) @ w.T, rtol=1e-4, atol=1e-4)


def test_max_and_average_pool_equal_numpy():
    x = RNG.standard_normal((1, 3, 8, 8), np.float32)
    windows = x.reshape(1, 3, 4, 2, 4, 2)
    _, (got,) = native(single_op_module("nn.max_pool2d", [x], {"pool_size": (2, 2), "strides": (2, 2)}), x)
    np.testing.assert_array_equal(got, windows.max(axis=(3, 5)))
    _, (got,) = native(single_op_module("nn.avg_pool2d", [x], {"pool_size": (2, 2), "strides": (2, 2)}), x)
    np.testing.assert_allclose(got, windows.mean(axis=(3, 5)), rtol=1e-5)


def test_elementwise_ops_equal_numpy():
    x = RNG.standard_normal((2, 3, 5), np.float32)
    x[0, 0, 0] = np.nan  # relu, like numpy's maximum, keeps a NaN
    for name, expected in [("nn.relu", np.maximum(x, 0)), ("nn.sigmoid", 1 / (1 + np.exp(-x.astype(np.float64)))),
                           ("nn.tanh", np.tanh(x)), ("nn.exp", np.exp(x))]:
        _, (got,) = native(single_op_module(name, [x], {}), x)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=name)


def test_reductions_and_softmax_equal_numpy():
    x = RNG.standard_normal((4, 6, 5), np.float32)
    _, (got,) = native(single_op_module("nn.sum", [x], {"axis": (1,)}), x)
    np.testing.assert_allclose(got, x.sum(axis=1), rtol=1e-5, atol=1e-6)
    _, (got,) = native(single_op_module("nn.mean", [x], {"axis": (0, 2)}), x)
    np.testing.assert_allclose(got, x.mean(axis=(0, 2)), rtol=1e-5, atol=1e-6)
    _, (got,) = native(single_op_module("nn.softmax", [x], {}), x)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-7)


def parse(text: str, name: str = "test.mlir"):
    return Parser(make_context(), text, name).parse_module()


RUNNING_TOTAL_OF_POSITIVES = """
func.func @main(%x: memref<6xf32>) -> (memref<6xf32>, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %out = memref.alloc() : memref<6xf32>
  %total = scf.for %i = %c0 to %c6 step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %x[%i] : memref<6xf32>
    %neg = arith.cmpf olt, %v, %zero : f32
    %a = scf.if %neg -> (f32) {
      scf.yield %acc : f32
    } else {
      %more = arith.addf %acc, %v : f32
      scf.yield %more : f32
    }
    memref.store %a, %out[%i] : memref<6xf32>
    scf.yield %a : f32
  }
  func.return %out, %total : memref<6xf32>, f32
}
"""


def test_loop_carried_values_and_branches(monkeypatch):
    # Nests whose order lies in memory: tests/test_runtime_loop_nests.py.
    monkeypatch.setattr(c_source, "PARALLEL_WORK", 1)  # however small, a loop free to split is split
    x = np.array([1, -2, 3, 4, -5, 6], np.float32)
    program = NativeProgram(parse(RUNNING_TOTAL_OF_POSITIVES))
    running, total = program(x, threads=4)
    np.testing.assert_array_equal(running, [1, 1, 4, 8, 8, 14])
    assert total == 14
    assert program.parallel_loops == 0  # each iteration adds to what the one before carried


FLOOR_DIV_MOD_AND_SUBVIEW_COPY = """
func.func @main(%x: memref<4x4xi64>) -> memref<2x2xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cm = arith.constant -7 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %d = affine.apply affine_map<(d0, d1) -> ((d0 - d1 * 5 - 7) floordiv 3 + (d0 - 9) mod 4)>(%i, %j)
      %v = arith.index_cast %d : index to i64
      memref.store %v, %x[%i, %j] : memref<4x4xi64>
    }
  }
  %view = memref.subview %x[1, 2] [2, 2] [1, 1] : memref<4x4xi64> to memref<2x2xi64, strided<[4, 1], offset: 6>>
  %out = memref.alloc() : memref<2x2xi64>
  memref.copy %view, %out : memref<2x2xi64, strided<[4, 1], offset: 6>> to memref<2x2xi64>
  func.return %out : memref<2x2xi64>
}
"""


def test_floor_division_modulo_and_a_copy_out_of_a_subview():
    i, j = np.meshgrid(np.arange(4), np.arange(4), indexing="ij")
    expected = (i - j * 5 - 7) // 3 + (i - 9) % 4  # Python's // and % round towards -inf, as affine's do
    (got,) = NativeProgram(parse(FLOOR_DIV_MOD_AND_SUBVIEW_COPY))(np.zeros((4, 4), np.int64))
    np.testing.assert_array_equal(got, expected[1:3, 2:4])


GATHER = """
func.func @main(%table: memref<5xf32>, %at: memref<3xi64>) -> memref<3xf32> {
  %out = memref.alloc() : memref<3xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %k = memref.load %at[%i] : memref<3xi64>
    %ki = arith.index_cast %k : i64 to index
    %v = memref.load %table[%ki] : memref<5xf32>
    memref.store %v, %out[%i] : memref<3xf32>
  }
  func.return %out : memref<3xf32>
}
"""


def xrelay_run(capsys, *argv) -> tuple[int, str, str]:
    status = xrelay_run_main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_an_index_read_from_memory_is_checked_and_the_failure_located(tmp_path, capsys):
    (tmp_path / "gather.mlir").write_text(GATHER)
    np.save(tmp_path / "table.npy", np.arange(5, dtype=np.float32) * 10)
    np.save(tmp_path / "good.npy", np.array([4, 0, 2]))
    np.save(tmp_path / "bad.npy", np.array([1, 5, 2]))
    status, out, err = xrelay_run(capsys, tmp_path / "gather.mlir", "--input", tmp_path / "table.npy", "--input",
                                  tmp_path / "good.npy", "-o", tmp_path / "out.npy")
    assert (status, err) == (0, "")
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), [40, 0, 20])
    status, out, err = xrelay_run(capsys, tmp_path / "gather.mlir", "--input", tmp_path / "table.npy", "--input",
                                  tmp_path / "bad.npy", "-o", tmp_path / "bad_out.npy")
    assert status == 1 and not (tmp_path / "bad_out.npy").exists()
    assert err == (f"xrelay-run: error: execution failed: {tmp_path / 'gather.mlir'}:10:5: memref.load index #0 is "
                   "outside the memref's dimension of size 5 (native loops executor)\n")


def test_a_constant_index_outside_its_memref_is_an_error_at_the_op(tmp_path, capsys):
    text = GATHER.replace("%v = memref.load %table[%ki]", "%v = memref.load %table[%c3]").replace("<5xf32>", "<3xf32>")
    (tmp_path / "gather.mlir").write_text(text)
    np.save(tmp_path / "table.npy", np.zeros(3, np.float32))
    np.save(tmp_path / "at.npy", np.zeros(3, np.int64))
    status, out, err = xrelay_run(capsys, tmp_path / "gather.mlir", "--input", tmp_path / "table.npy", "--input",
                                  tmp_path / "at.npy")
    assert status == 1 and out == ""
    assert err == (f"xrelay-run: error: execution failed: {tmp_path / 'gather.mlir'}:10:5: loops level: "
                   "memref.load index #0 takes values 3..3, outside the memref's dimension of size 3\n")


def test_without_the_compiler_the_numpy_executor_runs_and_says_so_once(monkeypatch, capsys):
    x, w = RNG.standard_normal((2, 6), np.float32), RNG.standard_normal((5, 6), np.float32)
    loops = lower(single_op_module("nn.dense", [x, w], {}), to="loops")
    monkeypatch.setenv("XRELAY_CC", "/nonexistent/gcc")
    assert isinstance(loops_program(loops), LoopsProgram)
    np.testing.assert_allclose(run(loops, [x, w]), x.astype(np.float64) @ w.T, rtol=1e-5, atol=1e-6)
    err = capsys.readouterr().err
    assert err == ("xrelay: note: the native loops executor cannot run this module (C compiler "
                   "'/nonexistent/gcc' not found (set XRELAY_CC to one)); running it on numpy (set "
                   "XRELAY_NATIVE=0 to choose that)\n")
    monkeypatch.delenv("XRELAY_CC")
    monkeypatch.setenv("XRELAY_NATIVE", "0")
    assert isinstance(loops_program(loops), LoopsProgram)
    assert capsys.readouterr().err == ""  # the user's choice needs no note


CACHE_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    from xdsl.parser import Parser
    from xrelay.dialects import make_context
    from xrelay.codegen.program import NativeProgram
    program = NativeProgram(Parser(make_context(), sys.stdin.read()).parse_module())
    x = np.array([1, -2, 3, 4, -5, 6], np.float32)
    assert program(x)[1] == 14
    print("compiled" if program.compile_seconds is not None else "cached")
""")


def test_a_second_process_loads_the_library_without_compiling(tmp_path, monkeypatch):
    monkeypatch.setenv("XRELAY_CACHE_DIR", str(tmp_path))
    assert NativeProgram(parse(RUNNING_TOTAL_OF_POSITIVES)).compile_seconds is not None  # compiled here
    child = subprocess.run([sys.executable, "-c", CACHE_CHILD], input=RUNNING_TOTAL_OF_POSITIVES,
                           capture_output=True, text=True, check=True)
    assert child.stdout == "cached\n"
    assert len(list((tmp_path / "native").glob("*.so"))) == 1


def test_xrelay_run_at_the_loops_level_reports_the_compilation_then_the_cache(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XRELAY_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "model.mlir").write_text(DENSE_MODEL)
    x, w, b = (RNG.standard_normal(shape, np.float32) for shape in ((2, 3), (4, 3), (4,)))
    np.savez(tmp_path / "p.npz", data=x, w=w, b=b)
    reports = []
    for _ in range(2):
        status, out, err = xrelay_run(capsys, tmp_path / "model.mlir", "--params", tmp_path / "p.npz", "--level",
                                      "loops", "--repeat", "1", "-o", tmp_path / "out.npy")
        assert (status, err) == (0, "")
        np.testing.assert_allclose(np.load(tmp_path / "out.npy"), np.maximum(x @ w.T + b, 0), rtol=1e-5, atol=1e-6)
        reports.append(out.splitlines()[-1])
    library = next((tmp_path / "cache" / "native").glob("*.so"))
    assert re.fullmatch(rf"native loops executor: compiled in \d+\.\d{{3}} s \(cached as {library}\)", reports[0])
    assert reports[1] == f"native loops executor: loaded from the cache ({library})"


def test_a_process_forked_after_the_threads_started_still_runs(tmp_path):
    """libgomp's thread pool does not survive fork (the fuzzer and the two-process mode fork): a child
    runs on one thread instead of waiting for the parent's threads forever."""
    x, w = np.ones((64, 256), np.float32), np.ones((64, 256), np.float32)
    program = NativeProgram(lower(single_op_module("nn.dense", [x, w], {}), to="loops"))
    assert program.parallel_loops == 1
    program(x, w, threads=2)
    pid = os.fork()
    if pid == 0:  # the child: exit status 0 only if the run finishes with the right values
        os._exit(0 if (program(x, w, threads=2)[0] == 256).all() else 1)
    for _ in range(200):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("the forked child hangs in its parallel loop")


INTEGER_DIVISION = """
func.func @main(%a: memref<3xi32>, %b: memref<3xi32>) -> memref<3xi32> {
  %out = memref.alloc() : memref<3xi32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %x = memref.load %a[%i] : memref<3xi32>
    %y = memref.load %b[%i] : memref<3xi32>
    %q = arith.floordivsi %x, %y : i32
    %r = arith.remsi %x, %y : i32
    %s = arith.addi %q, %r : i32
    memref.store %s, %out[%i] : memref<3xi32>
  }
  func.return %out : memref<3xi32>
}
"""


def test_an_integer_division_by_zero_is_an_error_not_a_signal(tmp_path, capsys):
    (tmp_path / "div.mlir").write_text(INTEGER_DIVISION)
    np.save(tmp_path / "a.npy", np.array([7, -7, 7], np.int32))
    np.save(tmp_path / "b.npy", np.array([2, 2, -3], np.int32))
    np.save(tmp_path / "zero.npy", np.array([2, 0, 1], np.int32))
    status, _, err = xrelay_run(capsys, tmp_path / "div.mlir", "--input", tmp_path / "a.npy", "--input",
                                tmp_path / "b.npy", "-o", tmp_path / "out.npy")
    assert (status, err) == (0, "")
    # floor(7/2) + rem(7, 2), floor(-7/2) + rem(-7, 2) (C's remainder takes the dividend's sign), ...
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), [3 + 1, -4 - 1, -3 + 1])
    status, _, err = xrelay_run(capsys, tmp_path / "div.mlir", "--input", tmp_path / "a.npy", "--input",
                                tmp_path / "zero.npy")
    assert status == 1
    assert err == "xrelay-run: error: execution failed: ZeroDivisionError: integer division or modulo by zero\n"


def test_the_cache_directory_follows_the_environment(monkeypatch, tmp_path):
    from xrelay.runtime.native.build import cache_dir

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XRELAY_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_dir() == str(tmp_path / "home" / ".cache" / "xrelay")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == str(tmp_path / "xdg" / "xrelay")
    monkeypatch.setenv("XRELAY_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == str(tmp_path / "mine")
