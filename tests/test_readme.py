"""Every code block of README.md runs as written (issue 28), in document order in one directory.

The command text is the README's; only what is heavy is smaller: `resnet.get_workload` builds ResNet's
structure (stem, one residual unit, head) with 4 channels at ResNet-18's input size, and the ONNX files a
reader brings (`model.onnx`, `m.onnx`, `light_resnet50.onnx` from the onnx package) are one-convolution
models with the README's input names and shapes. `make` targets are dry-run (`make -n`): the demo is
tests/test_tutorial.py, the tests are this suite. Commands that call IREE take seconds: `-m slow`; what
the upstream route's IREE commands write is in tests/data/readme/ for the fast run.
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from doc_blocks import REPO, code_blocks, commands, run_command, run_python
from xrelay.frontend import from_onnx, resnet
from xrelay.frontend.init import create_params

README = (REPO / "README.md").read_text()
VARIABLES = dict(re.findall(r"`(\w+)='([^']*)'`", README))  # `P='simplify-inference,...'`


def _cases():
    for block in code_blocks(README):
        if block.kind == "python":
            yield pytest.param(block, None, id=f"README.md:{block.line}")
        elif block.kind == "commands":
            for command in commands(block, VARIABLES):
                argv = command.argv
                slow = argv[0].startswith("iree-") or "--backend iree" in " ".join(argv)
                yield pytest.param(block, command, id=f"README.md:{command.line}",
                                   marks=[pytest.mark.slow] if slow else [])


CASES = list(_cases())


def test_every_block_is_found():
    # Counted by hand in README.md: 5 Python blocks (xrelay.build's and the pipeline report's among them);
    # 3 make lines, 4 ONNX commands, 8 command-line ones, 7 on upstream's route, 3 binding upstream
    # arguments, 10 debugging tools and the pipeline report's.
    python = [c for c in CASES if c.values[1] is None]
    assert (len(python), len(CASES) - len(python)) == (5, 36)


def small_resnet(num_layers=18, batch_size=1, image_shape=(3, 224, 224), dtype="float32", layout="NCHW", seed=0,
                 num_classes=1000):
    """ResNet's structure at ResNet-18's input size, small: one residual unit of 4 channels, 10 classes."""
    module = resnet.resnet((1,), [4, 4], 10, (batch_size, *image_shape), False, layout, dtype)
    return module, create_params(module, seed)


def one_conv_onnx(path, data: str, weight_as_input: bool = False) -> None:
    """`relu(conv(data[1,3,224,224], w))`, w 2x3x3x3 stride 4 an initializer, or an input 1x3x1x1."""
    w_shape = [1, 3, 1, 1] if weight_as_input else [2, 3, 3, 3]
    inputs = [helper.make_tensor_value_info(data, TensorProto.FLOAT, [1, 3, 224, 224])]
    init = []
    if weight_as_input:
        inputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, w_shape))
        conv = helper.make_node("Conv", [data, "w"], ["c"])
    else:
        weight = np.random.default_rng(0).standard_normal(w_shape).astype(np.float32)
        init.append(numpy_helper.from_array(weight, "w"))
        conv = helper.make_node("Conv", [data, "w"], ["c"], strides=[4, 4])
    out_shape = [1, 1, 224, 224] if weight_as_input else [1, 2, 56, 56]
    graph = helper.make_graph([conv, helper.make_node("Relu", ["c"], ["y"])], "m", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], init)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """The reader's directory: their ONNX files and arrays, and the README's own set-up command run."""
    d = tmp_path_factory.mktemp("readme")
    one_conv_onnx(d / "model.onnx", "data")
    one_conv_onnx(d / "light_resnet50.onnx", "gpu_0/data_0")
    one_conv_onnx(d / "m.onnx", "x", weight_as_input=True)
    rng = np.random.default_rng(1)
    np.save(d / "x.npy", rng.random((1, 3, 224, 224), dtype=np.float32))
    w = rng.random((1, 3, 1, 1), dtype=np.float32)
    np.save(d / "w.npy", w)
    np.savez(d / "w.npz", w)
    for name in ("m.mlir", "m.buf.mlir", "m.loops.mlir"):  # what the IREE commands (-m slow) write
        shutil.copy(REPO / "tests" / "data" / "readme" / name, d / name)
    # The README's set-up command (model.mlir, p.npz, x.npy), so that any selection of the cases runs.
    setup = next(c.values[1] for c in CASES if c.values[1] is not None and c.values[1].argv[0] == "python")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(d)
        patch.setattr(resnet, "get_workload", small_resnet)
        assert run_command(setup.argv).returncode == 0
    return d


@pytest.fixture
def in_workdir(workdir, monkeypatch):
    monkeypatch.chdir(workdir)
    monkeypatch.setattr(resnet, "get_workload", small_resnet)
    light = str(workdir / "light_resnet50.onnx")
    monkeypatch.setattr("xrelay.frontend.from_onnx",
                        lambda path, *args, **kw: from_onnx(light if str(path).endswith("light_resnet50.onnx") else path,
                                                            *args, **kw))
    return workdir


@pytest.mark.parametrize("block, command", CASES)
def test_readme(in_workdir, block, command):
    if command is None:
        run_python(block.text, f"README.md:{block.line}")
        return
    argv = command.argv
    if argv[0] == "make":
        outcome = run_command(["make", "-n", "-C", str(REPO), *argv[1:]])
    else:
        outcome = run_command(argv)
    assert outcome.returncode == 0, f"README.md:{command.line}: {command.text}\n{outcome.stderr}"
    assert "error" not in outcome.stderr, outcome.stderr
    for start, check in CHECKS:
        if command.text.startswith(start):
            check(in_workdir, outcome)


def _skipped(d, outcome):
    assert outcome.stderr.startswith("xrelay-opt: note: skipped pass 'convert-layout' (ConvertLayout)")


def _ran_nn(d, outcome):
    out = np.load(d / "out.npy")
    assert out.shape == (1, 10) and abs(out.sum() - 1) < 1e-5  # the softmax of the 10 classes


def _listed(d, outcome):
    assert outcome.stdout.startswith("xrelay's passes") and "  fold-constant  (FoldConstant, opt level 2)" in outcome.stdout


def _upstream_ran(d, outcome):
    x, w = np.load(d / "x.npy"), np.load(d / "w.npy")
    expected = np.maximum(np.einsum("nchw,oc->nohw", x, w[:, :, 0, 0]), 0)
    values = re.findall(r"-?\d+\.\d+", outcome.stdout.split("\n", 1)[1])
    assert outcome.stdout.startswith("output_0: float32 (1, 1, 224, 224)")
    np.testing.assert_allclose(float(values[0]), expected[0, 0, 0, 0], rtol=1e-5)


CHECKS = [
    ("xrelay-opt model.mlir -p 'convert-layout{", _skipped),
    ("xrelay-opt --list-passes", _listed),
    ("xrelay-run model.mlir --input data=x.npy --params p.npz -o out.npy", _ran_nn),
    ("xrelay-run m.mlir --input", _upstream_ran),
    ("xrelay-run m.buf.mlir --input", _upstream_ran),
    ("xrelay-run m.loops.mlir --input", _upstream_ran),
]
