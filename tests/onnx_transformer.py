"""A Vision Transformer (ViT) as an ONNX graph built with `onnx.helper`, random weights: the
transformer family in tests and benchmarks without torch.

`vision_transformer()` defaults to ViT-Tiny's sizes (Dosovitskiy et al.; 12 blocks of width 192,
3 heads, MLP 768, 16x16 patches of a 224x224 image): a patch-embedding convolution, a class token
and position embedding, then per block LayerNormalization, multi-head self-attention (MatMul,
Softmax), and an MLP with the exact GELU `x * (1 + erf(x / sqrt 2)) / 2`, each with a residual add.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def vision_transformer(depth: int = 12, dim: int = 192, heads: int = 3, mlp: int = 768, image: int = 224,
                       patch: int = 16, classes: int = 1000, seed: int = 0) -> onnx.ModelProto:
    """The ONNX model (opset 17) of a ViT; its input `input` is 1x3x`image`x`image`."""
    rng = np.random.default_rng(seed)
    nodes, initializers = [], []
    tokens, head = (image // patch) ** 2 + 1, dim // heads

    def constant(name: str, value) -> str:
        initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(name: str, shape: tuple[int, ...], scale: float = 0.02) -> str:
        return constant(name, (rng.standard_normal(shape) * scale).astype(np.float32))

    def node(op: str, inputs: list[str], output: str, **attributes) -> str:
        nodes.append(helper.make_node(op, inputs, [output], **attributes))
        return output

    def layer_norm(x: str, name: str) -> str:
        gamma = constant(name + "_gamma", (1 + 0.1 * rng.standard_normal(dim)).astype(np.float32))
        return node("LayerNormalization", [x, gamma, weight(name + "_beta", (dim,), 0.1)], name, axis=-1, epsilon=1e-6)

    def linear(x: str, name: str, inputs: int, outputs: int) -> str:
        product = node("MatMul", [x, weight(name + "_w", (inputs, outputs))], name + "_mm")
        return node("Add", [product, weight(name + "_b", (outputs,))], name)

    def shape(name: str, *sizes: int) -> str:
        return constant(name, np.array(sizes, np.int64))

    x = node("Conv", ["input", weight("patch_w", (dim, 3, patch, patch)), weight("patch_b", (dim,))], "patches",
             kernel_shape=[patch, patch], strides=[patch, patch])
    x = node("Transpose", [node("Reshape", [x, shape("patches_shape", 1, dim, tokens - 1)], "flat")], "seq", perm=[0, 2, 1])
    x = node("Concat", [weight("class_token", (1, 1, dim)), x], "tokens", axis=1)
    x = node("Add", [x, weight("position", (1, tokens, dim))], "x0")
    for i in range(depth):
        p = f"block{i}_"
        qkv = linear(layer_norm(x, p + "ln1"), p + "qkv", dim, 3 * dim)
        qkv = node("Reshape", [qkv, shape(p + "qkv_shape", 1, tokens, 3, heads, head)], p + "qkv_split")
        qkv = node("Transpose", [qkv], p + "qkv_heads", perm=[2, 0, 3, 1, 4])
        q, k, v = (node("Gather", [qkv, constant(p + f"index_{n}", np.int64(j))], p + n, axis=0)
                   for j, n in enumerate("qkv"))
        scores = node("MatMul", [q, node("Transpose", [k], p + "k_t", perm=[0, 1, 3, 2])], p + "scores")
        scores = node("Mul", [scores, constant(p + "scale", np.float32(head ** -0.5))], p + "scaled")
        attention = node("MatMul", [node("Softmax", [scores], p + "softmax", axis=-1), v], p + "attention")
        attention = node("Transpose", [attention], p + "attention_t", perm=[0, 2, 1, 3])
        attention = node("Reshape", [attention, shape(p + "merge_shape", 1, tokens, dim)], p + "merged")
        x = node("Add", [x, linear(attention, p + "proj", dim, dim)], p + "x1")
        hidden = linear(layer_norm(x, p + "ln2"), p + "fc1", dim, mlp)
        erf = node("Erf", [node("Div", [hidden, constant(p + "sqrt2", np.float32(np.sqrt(2)))], p + "h_scaled")], p + "erf")
        gelu = node("Mul", [hidden, node("Add", [erf, constant(p + "one", np.float32(1))], p + "erf1")], p + "gelu2")
        gelu = node("Mul", [gelu, constant(p + "half", np.float32(0.5))], p + "gelu")
        x = node("Add", [x, linear(gelu, p + "fc2", mlp, dim)], p + "x2")
    x = node("Gather", [layer_norm(x, "final_ln"), constant("class_index", np.int64(0))], "class_features", axis=1)
    node("Gemm", [x, weight("head_w", (classes, dim)), weight("head_b", (classes,))], "output", transB=1)
    graph = helper.make_graph(nodes, "vit", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, image, image])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, classes])], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model)
    return model
