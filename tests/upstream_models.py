"""Small ONNX models built with `onnx.helper`, whose upstream linalg (IREE's ONNX import) is checked in
under tests/data/upstream/ (`<model>.mlir`), with upstream's bufferization of it (`<model>.<variant>.mlir`,
`BUFFERIZED`); `python tests/upstream_models.py` regenerates those files (needs the `iree` extra), with
the command that made each in its header."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

DATA = Path(__file__).parent / "data" / "upstream"
PIPELINE = ["--torch-onnx-to-torch-backend-pipeline", "--torch-backend-to-linalg-on-tensors-backend-pipeline"]
DEALLOCATE = ["--ownership-based-buffer-deallocation", "--buffer-deallocation-simplification",
              "--bufferization-lower-deallocations", "--canonicalize"]
BUFFERIZED = {
    # One-shot bufferization as it comes: fully dynamic strided memref arguments, `memref.alloc() alignment
    # = 64`, memref.global/get_global for constants, linalg.map for every tensor.pad, memref.cast leftovers.
    "memref": ["--one-shot-bufferize=bufferize-function-boundaries"],
    # Tensor arguments and results kept: bufferization.to_buffer/to_tensor at the edges.
    "edges": ["--one-shot-bufferize"],
    # Upstream's deallocation pipeline, then linalg lowered to scf.for loops of memref.load/store.
    "loops": ["--one-shot-bufferize=bufferize-function-boundaries", *DEALLOCATE, "--convert-linalg-to-loops",
              "--canonicalize"],
    # The same to affine.for loops of affine.load/store (canonicalized: index arithmetic folded into their maps).
    "affine": ["--one-shot-bufferize=bufferize-function-boundaries", *DEALLOCATE, "--convert-linalg-to-affine-loops",
               "--canonicalize"],
}
"""Upstream `iree-opt` passes applied to `<model>.mlir` to make `<model>.<variant>.mlir`."""


def _tensor(name, shape, elem=None):
    from onnx import TensorProto, helper

    return helper.make_tensor_value_info(name, elem or TensorProto.FLOAT, shape)


def _model(name, nodes, inputs, outputs, initializers=()):
    import onnx
    from onnx import helper

    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def small_cnn():
    """Conv (padded, bias) → Relu → MaxPool (padded) → AveragePool (padded, pads not counted) →
    GlobalAveragePool → Flatten → Gemm → Softmax: upstream writes tensor.pad, linalg.broadcast,
    pooling_nchw_max/sum, a generic with linalg.index and a two-result (max, argmax) generic."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = {"w": rng.standard_normal((4, 3, 3, 3)) * 0.3, "b": rng.standard_normal(4) * 0.1,
               "fw": rng.standard_normal((5, 4)), "fb": rng.standard_normal(5)}
    return _model("small_cnn", [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["m"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("AveragePool", ["m"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=0),
        helper.make_node("GlobalAveragePool", ["a"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y0"], transB=1),
        helper.make_node("Softmax", ["y0"], ["y"], axis=1),
    ], [_tensor("x", [1, 3, 8, 8])], [_tensor("y", [1, 5])],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()])


def argmax():
    """ArgMax: upstream writes one generic with two results, the running max and its index."""
    from onnx import TensorProto, helper

    return _model("argmax", [helper.make_node("ArgMax", ["x"], ["i"], axis=1, keepdims=0)],
                  [_tensor("x", [2, 5])], [_tensor("i", [2], TensorProto.INT64)])


def avgpool_include():
    """AveragePool counting the padding: upstream writes pooling_nchw_sum and a divide by a constant."""
    from onnx import helper

    return _model("avgpool_include", [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2],
                                                       strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)],
                  [_tensor("x", [1, 2, 5, 5])], [_tensor("y", [1, 2, 3, 3])])


def separable_concat():
    """Depthwise Conv (group = channels) → Clip (ReLU6) → pointwise Conv, beside a MaxPool of the input,
    Concat on channels → LRN: upstream writes depthwise_conv_2d_nchw_chw, tensor.concat and, for the LRN,
    pooling_ndhwc_sum, with scalar casts (arith.truncf) outside the linalg bodies."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(3)
    weights = {"dw": rng.standard_normal((4, 1, 3, 3)) * 0.5, "db": rng.standard_normal(4) * 0.1,
               "pw": rng.standard_normal((4, 4, 1, 1)) * 0.5, "six": np.array(6.0), "zero": np.array(0.0)}
    return _model("separable_concat", [
        helper.make_node("Conv", ["x", "dw", "db"], ["d"], pads=[1, 1, 1, 1], group=4),
        helper.make_node("Clip", ["d", "zero", "six"], ["r"]),
        helper.make_node("Conv", ["r", "pw"], ["p"]),
        helper.make_node("MaxPool", ["x"], ["m"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Concat", ["p", "m"], ["c"], axis=1),
        helper.make_node("LRN", ["c"], ["y"], size=3, alpha=0.001, beta=0.75, bias=1.0),
    ], [_tensor("x", [1, 4, 6, 6])], [_tensor("y", [1, 8, 6, 6])],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()])


MODELS = {"small_cnn": small_cnn, "argmax": argmax, "avgpool_include": avgpool_include,
          "separable_concat": separable_concat}


def import_onnx(model, workdir: Path) -> str:
    """Upstream's linalg on tensors for an ONNX model: `iree-import-onnx`, then `iree-opt` with
    torch-mlir's ONNX and linalg pipelines (the tools of the `iree` extra, beside this Python)."""
    import onnx

    bin_dir = Path(sys.executable).parent
    onnx_path, torch_path = workdir / "model.onnx", workdir / "model.torch.mlir"
    onnx.save(model, onnx_path)
    subprocess.run([str(bin_dir / "iree-import-onnx"), str(onnx_path), "-o", str(torch_path)], check=True)
    done = subprocess.run([str(bin_dir / "iree-opt"), *PIPELINE, str(torch_path)], check=True,
                          capture_output=True, text=True)
    return done.stdout


def iree_opt(passes: list[str], path: Path) -> str:
    """`iree-opt <passes> <path>`'s output (the `iree` extra's upstream-MLIR opt, beside this Python)."""
    done = subprocess.run([str(Path(sys.executable).parent / "iree-opt"), *passes, str(path)], check=True,
                          capture_output=True, text=True)
    return done.stdout


def main() -> None:
    import tempfile

    DATA.mkdir(parents=True, exist_ok=True)
    for name, build in MODELS.items():
        with tempfile.TemporaryDirectory() as tmp:
            text = import_onnx(build(), Path(tmp))
        header = (f"// Upstream linalg on tensors for tests/upstream_models.py:{name}(), made by IREE 3.13:\n"
                  f"//   iree-import-onnx {name}.onnx -o {name}.torch.mlir\n"
                  f"//   iree-opt {' '.join(PIPELINE)} {name}.torch.mlir\n")
        (DATA / f"{name}.mlir").write_text(header + text)
        for variant, passes in BUFFERIZED.items():
            header = (f"// Upstream bufferization of {name}.mlir (tests/upstream_models.py), made by IREE 3.13:\n"
                      f"//   iree-opt {' '.join(passes)} {name}.mlir\n")
            (DATA / f"{name}.{variant}.mlir").write_text(header + iree_opt(passes, DATA / f"{name}.mlir"))


if __name__ == "__main__":
    main()
