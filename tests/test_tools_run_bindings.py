"""xrelay-run binds @main's arguments by name (`--input data=x.npy`, `--params p.npz`), and the
arguments upstream tools leave unnamed (`%arg0, %arg1, ...`) by position (`--input 0=x.npy`), in order
(`--input x.npy`, iree-run-module's `--input=@x.npy`), as `arg<i>`, and from `.npz` files keyed by
name, by position or by `np.savez`'s `arr_<i>`. Every bad input or binding is one error line (a value
wrong for its argument: then its line and a caret under it), exit status 1, no traceback, and the
output file and the directory stay as they were."""

from __future__ import annotations

import pickle
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

from tool_passes import DENSE_MODEL
from xrelay.tools.xrelay_run import main

# Upstream's spelling: the function named after the model, arguments %arg0.. (linalg on tensors).
UPSTREAM = """\
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module {
  func.func @model(%arg0: tensor<2x3xf32>, %arg1: tensor<3x4xf32>, %arg2: tensor<4xf32>) -> tensor<2x4xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<2x4xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %2 = linalg.matmul ins(%arg0, %arg1 : tensor<2x3xf32>, tensor<3x4xf32>) outs(%1 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%2, %arg2 : tensor<2x4xf32>, tensor<4xf32>) outs(%0 : tensor<2x4xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %4 = arith.addf %in, %in_0 : f32
      linalg.yield %4 : f32
    } -> tensor<2x4xf32>
    return %3 : tensor<2x4xf32>
  }
}
"""

RNG = np.random.default_rng(11)
X = RNG.standard_normal((2, 3)).astype(np.float32)
W = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal(4).astype(np.float32)
EXPECTED = X.astype(np.float64) @ W + B


@pytest.fixture
def d(tmp_path: Path) -> Path:
    (tmp_path / "model.mlir").write_text(UPSTREAM)
    (tmp_path / "dense.mlir").write_text(DENSE_MODEL)  # @main(%data, %w, %b), named arguments
    np.savez(tmp_path / "p.npz", w=W.T, b=B)
    for name, value in (("x", X), ("w", W), ("b", B)):
        np.save(tmp_path / f"{name}.npy", value)
    np.save(tmp_path / "x_int.npy", X.astype(np.int32))
    np.savez(tmp_path / "named.npz", arg1=W, arg2=B)
    np.savez(tmp_path / "savez.npz", W, B)  # arr_0, arr_1
    np.savez(tmp_path / "indexed.npz", **{"1": W, "2": B})
    np.savez(tmp_path / "three.npz", X, W, B)
    with zipfile.ZipFile(tmp_path / "notes.npz", "w") as archive:  # a .npy member, then a text one
        with archive.open("arg1.npy", "w") as member:
            np.lib.format.write_array(member, W)
        archive.writestr("README.txt", "weights for the model")
    with open(tmp_path / "pickled.npy", "wb") as f:
        pickle.dump({"data": [1, 2]}, f, protocol=4)
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    np.savez(tmp_path / "objects.npz", w=np.array([{"a": 1}], dtype=object), b=B)
    (tmp_path / "garbage.npy").write_text("not numpy at all")
    np.save(tmp_path / "tall.npy", np.zeros((3, 3), np.float32))
    np.save(tmp_path / "ints.npy", np.zeros((2, 3), np.int32))
    np.savez(tmp_path / "extra.npz", w=W.T, b=B, gamma=B)
    np.savez(tmp_path / "bound.npz", conv0_weight=W)
    return tmp_path


def run(capsys, d: Path, *argv: str) -> tuple[int, str]:
    args = [str(d / "model.mlir"), *(a.format(d=d) for a in argv), "-o", str(d / "out.npy")]
    status = main(args)
    return status, capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["--input", "{d}/x.npy", "--input", "{d}/w.npy", "--input", "{d}/b.npy"],
    ["--input", "@{d}/x.npy", "--input", "@{d}/w.npy", "--input", "@{d}/b.npy"],  # iree-run-module's spelling
    ["--input", "2={d}/b.npy", "--input", "0={d}/x.npy", "--input", "1={d}/w.npy"],
    ["--input", "arg1={d}/w.npy", "--input", "arg0={d}/x.npy", "--input", "arg2={d}/b.npy"],
    ["--input", "1={d}/w.npy", "--input", "{d}/x.npy", "--input", "{d}/b.npy"],  # the rest in order
    ["--input", "{d}/x.npy", "--params", "{d}/named.npz"],
    ["--input", "{d}/x.npy", "--params", "{d}/savez.npz"],
    ["--params", "{d}/savez.npz", "--input", "{d}/x.npy"],  # bare --input files come before arr_<i>
    ["--input", "{d}/x.npy", "--params", "{d}/indexed.npz"],
    ["--params", "{d}/three.npz"],
], ids=["in-order", "at-sign", "by-index", "by-argN", "index-then-order", "npz-names", "npz-savez",
        "npz-savez-first", "npz-index", "npz-all"])
def test_unnamed_arguments_bind_by_position_in_order_and_as_arg_i(capsys, d, argv):
    status, err = run(capsys, d, *argv)
    assert status == 0, err
    np.testing.assert_allclose(np.load(d / "out.npy"), EXPECTED, rtol=1e-5, atol=1e-6)


def test_savez_arrays_bind_in_numeric_order_past_ten(capsys, tmp_path):
    # arr_10 comes after arr_9 (not after arr_1, as names sort).
    n = 12
    args = ", ".join(f"%arg{i}: tensor<1xf32>" for i in range(n))
    text = (f"func.func @main({args}) -> ({', '.join(['tensor<1xf32>'] * n)}) {{\n"
            f"  func.return {', '.join(f'%arg{i}' for i in range(n))} : {', '.join(['tensor<1xf32>'] * n)}\n}}\n")
    (tmp_path / "m.mlir").write_text(text)
    np.savez(tmp_path / "p.npz", *[np.array([i], np.float32) for i in range(n)])
    assert main([str(tmp_path / "m.mlir"), "--params", str(tmp_path / "p.npz"), "-o", str(tmp_path / "o.npz")]) == 0
    with np.load(tmp_path / "o.npz") as out:
        assert [float(out[f"output_{i}"][0]) for i in range(n)] == list(range(n))


def test_a_name_wins_over_a_position(capsys, tmp_path):
    # ONNX inputs are often named "0", "1": an argument's name is looked up before a position.
    text = """func.func @main(%a: tensor<2xf32> {xrelay.name = "1"}, %b: tensor<2xf32>) -> tensor<2xf32> {
      %0 = nn.subtract(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      func.return %0 : tensor<2xf32>
    }
    """
    (tmp_path / "m.mlir").write_text(text)
    np.save(tmp_path / "ten.npy", np.array([10, 20], np.float32))
    np.save(tmp_path / "one.npy", np.array([1, 2], np.float32))
    argv = [str(tmp_path / "m.mlir"), "--input", f"1={tmp_path / 'ten.npy'}", "--input", f"{tmp_path / 'one.npy'}",
            "-o", str(tmp_path / "o.npy")]
    assert main(argv) == 0, capsys.readouterr().err
    np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), [9, 18])  # "1" is %a; the bare file is %b


# dense.mlir's arguments by name; --params {d}/p.npz binds w and b unless a case gives its own.
BAD_INPUTS = {
    "missing-input-file": (["--input", "data={d}/nope.npy"],
                           "xrelay-run: error: cannot load input 'data' from '{d}/nope.npy': No such file or directory"),
    "pickled-file": (["--input", "data={d}/pickled.npy"],
                     "xrelay-run: error: cannot load input 'data' from '{d}/pickled.npy': it holds pickled Python "
                     "objects, which xrelay-run never loads"),
    "object-array": (["--input", "data={d}/objects.npy"],
                     "xrelay-run: error: cannot load input 'data' from '{d}/objects.npy': it holds pickled"),
    "pickled-npz-member": (["--input", "{d}/x.npy", "--params", "{d}/objects.npz"],
                           "xrelay-run: error: cannot load parameters from '{d}/objects.npz': array 'w' holds pickled"),
    "not-numpy": (["--input", "data={d}/garbage.npy"],
                  "xrelay-run: error: cannot load input 'data' from '{d}/garbage.npy': not a .npy or .npz file"),
    "wrong-shape": (["--input", "data={d}/tall.npy"],
                    "{d}/dense.mlir:1:17: error: input 'data' from '{d}/tall.npy' has shape (3, 3), but the argument is "
                    "tensor<2x3xf32> (shape (2, 3))"),
    "wrong-kind": (["--input", "data={d}/ints.npy"],
                   "{d}/dense.mlir:1:17: error: input 'data' from '{d}/ints.npy' has dtype int32, but the argument is "
                   "tensor<2x3xf32> (float32)"),
    "unknown-input": (["--input", "{d}/x.npy", "--input", "weights={d}/w.npy"],
                      "xrelay-run: error: input 'weights' from '{d}/w.npy' is not an argument of @main "
                      "(its arguments: data, w, b)"),
    "unknown-param": (["--input", "{d}/x.npy", "--params", "{d}/extra.npz"],
                      "xrelay-run: error: parameter 'gamma' from '{d}/extra.npz' is not an argument of @main"),
    "params-already-bound": (["--input", "{d}/x.npy", "--params", "{d}/bound.npz"],
                             "xrelay-run: error: parameter 'conv0_weight' from '{d}/bound.npz' is not an argument "
                             "of @main (its arguments: data, w, b) (none of the file's names is an argument: were "
                             "the parameters already bound?)"),
    "missing-argument": (["--params", "{d}/p.npz"],
                         "xrelay-run: error: no value for argument(s) 'data' (tensor<2x3xf32>) of @main: "
                         "pass --input NAME=FILE.npy, --input INDEX=FILE.npy, --input FILE.npy (the next argument left) "
                         "or --params FILE.npz"),
    "given-twice": (["--input", "{d}/x.npy", "--input", "w={d}/w.npy"],
                    "xrelay-run: error: argument 'w' is given twice: by '{d}/p.npz' and '{d}/w.npy'"),
    "params-not-npz": (["--input", "{d}/x.npy", "--params", "{d}/w.npy"],
                       "xrelay-run: error: cannot load parameters from '{d}/w.npy': a single .npy array"),
    "repeat-zero": (["--input", "{d}/x.npy", "--repeat", "0"], "xrelay-run: error: --repeat must be at least 1, got 0"),
    "negative-warmup": (["--input", "{d}/x.npy", "--repeat", "2", "--warmup", "-1"],
                        "xrelay-run: error: --warmup must be at least 0, got -1"),
}

# model.mlir's unnamed arguments (arg0, arg1, arg2).
BAD_POSITIONS = {
    "too-many-inputs": (["--input", "{d}/x.npy", "--input", "{d}/w.npy", "--input", "{d}/b.npy", "--input", "{d}/b.npy"],
                        "xrelay-run: error: 4 positional value(s) ({d}/x.npy, {d}/w.npy, {d}/b.npy, {d}/b.npy) but "
                        "only 3 argument(s) of @main left to bind (arg0, arg1, arg2)"),
    "too-many-with-savez": (["--input", "{d}/x.npy", "--params", "{d}/three.npz"],
                            "xrelay-run: error: 4 positional value(s) ({d}/x.npy, {d}/three.npz[arr_0], "
                            "{d}/three.npz[arr_1], {d}/three.npz[arr_2]) but only 3 argument(s) of @main left"),
    "too-few": (["--input", "{d}/x.npy"],
                "xrelay-run: error: no value for argument(s) 'arg1' (tensor<3x4xf32>), 'arg2' (tensor<4xf32>) of "
                "@main: pass --input NAME=FILE.npy, --input INDEX=FILE.npy, --input FILE.npy (the next argument "
                "left) or --params FILE.npz"),
    "index-out-of-range": (["--input", "3={d}/x.npy"],
                           "xrelay-run: error: input '3' from '{d}/x.npy': @main has 3 argument(s), so no argument #3 "
                           "(positions count from 0: 0=arg0, 1=arg1, 2=arg2)"),
    "npz-index-out-of-range": (["--params", "{d}/indexed.npz", "--input", "{d}/x.npy", "--input", "7={d}/b.npy"],
                               "xrelay-run: error: input '7' from '{d}/b.npy': @main has 3 argument(s), so no "
                               "argument #7"),
    "index-and-name": (["--input", "0={d}/x.npy", "--input", "arg0={d}/x.npy"],
                       "xrelay-run: error: argument 'arg0' is given twice: by '{d}/x.npy' and '{d}/x.npy'"),
    "wrong-shape-in-order": (["--input", "{d}/w.npy", "--input", "{d}/x.npy", "--input", "{d}/b.npy"],
                             "{d}/model.mlir:4:20: error: input 'arg0' from '{d}/w.npy' has shape (3, 4), but the argument is "
                             "tensor<2x3xf32> (shape (2, 3))"),
    "wrong-dtype-by-index": (["--input", "0={d}/x_int.npy", "--params", "{d}/named.npz"],
                             "{d}/model.mlir:4:20: error: input '0' from '{d}/x_int.npy' has dtype int32, but the argument is "
                             "tensor<2x3xf32> (float32)"),
    "unknown-name": (["--input", "data={d}/x.npy"],
                     "xrelay-run: error: input 'data' from '{d}/x.npy' is not an argument of @main "
                     "(its arguments: arg0, arg1, arg2)"),
    "non-npy-member": (["--input", "{d}/x.npy", "--params", "{d}/notes.npz"],
                       "xrelay-run: error: cannot load parameters from '{d}/notes.npz': member 'README.txt' is not "
                       "a .npy array"),
    "no-file-after-index": (["--input", "1="], "xrelay-run: error: --input '1=': no file after '='"),
}


@pytest.mark.parametrize("model, case", [("dense.mlir", case) for case in BAD_INPUTS]
                         + [("model.mlir", case) for case in BAD_POSITIONS])
def test_bad_input_or_binding_is_one_error_and_no_output(capsys, d, model, case):
    argv, expected = BAD_INPUTS[case] if model == "dense.mlir" else BAD_POSITIONS[case]
    if model == "dense.mlir" and "--params" not in argv:
        argv = [*argv, "--params", "{d}/p.npz"]
    (d / "out.npy").write_bytes(b"previous")
    before = sorted(p.name for p in d.iterdir())
    status = main([str(d / model), *(a.format(d=d) for a in argv), "-o", str(d / "out.npy")])
    out, err = capsys.readouterr()
    assert status == 1 and out == ""
    assert "Traceback" not in err
    assert err.startswith(expected.format(d=d)), err
    lines = err.splitlines()
    located = re.match(r"\{d\}/\w+\.mlir:\d+:(\d+): ", expected)
    assert len(lines) == (3 if located else 1), err
    if located:  # the argument's line, and a caret under its name
        column = int(located.group(1))
        argument = re.match(r"%\w+", lines[1][column - 1:])
        assert argument and lines[2] == " " * (column - 1) + "^" * len(argument.group()), err
    assert (d / "out.npy").read_bytes() == b"previous"
    assert sorted(p.name for p in d.iterdir()) == before
