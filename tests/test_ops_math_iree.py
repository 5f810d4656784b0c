"""The linalg form of the math, reduction and normalisation ops is upstream MLIR: IREE compiles it
(llvm-cpu) and gets the nn level's answers, negative bases of nn.power included (IREE expands
math.powf as exp(y * log(x)), NaN for any negative base, which the lowering accounts for)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f32
from xdsl.ir import Block, Region

from xrelay.dialects import nn
from xrelay.lowering import lower
from xrelay.runtime import run

ireec = pytest.importorskip("iree.compiler")
ireert = pytest.importorskip("iree.runtime")


def chain_module() -> ModuleOp:
    """`@main(x, base, exponent, gamma, beta)` returning eight results, one per op family member."""
    shapes = [(2, 6, 3, 3), (7,), (7,), (3,), (3,)]
    block = Block(arg_types=[TensorType(f32, s) for s in shapes])
    x, base, exponent, gamma, beta = block.args
    for arg, name in zip(block.args, ("x", "base", "exponent", "gamma", "beta")):
        arg.name_hint = name
    ops = [
        nn.make("nn.erf", [x]),
        nn.make("nn.power", [base, exponent]),
        nn.make("nn.clip", [x], a_min=-0.5, a_max=0.5),
        nn.make("nn.leaky_relu", [x], alpha=0.1),
        nn.make("nn.mean", [x], axis=(2, 3), keepdims=True),
        nn.make("nn.max", [x], axis=(1,), exclude=True),
        nn.make("nn.lrn", [x], size=3, alpha=0.5, bias=1.0),
        nn.make("nn.layer_norm", [x, gamma, beta]),
        nn.make("nn.log_softmax", [x], axis=1),
    ]
    results = [op.results[0] for op in ops]
    block.add_ops([*ops, func.ReturnOp(*results)])
    main = func.FuncOp("main", FunctionType.from_lists(block.arg_types, [r.type for r in results]), Region(block))
    return ModuleOp([main])


def test_iree_compiles_the_lowered_ops_and_agrees():
    rng = np.random.default_rng(3)
    inputs = [
        rng.standard_normal((2, 6, 3, 3)).astype(np.float32),
        np.array([-2, -2, -8, -0.0, 0, 3, -1.5], np.float32),
        np.array([3, 2, 1 / 3, -1, -1, 0.5, 2], np.float32),
        rng.standard_normal(3).astype(np.float32),
        rng.standard_normal(3).astype(np.float32),
    ]
    module = chain_module()
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = run(module, dict(zip(["x", "base", "exponent", "gamma", "beta"], inputs)))
    text = str(lower(module, to="linalg"))
    vmfb = ireec.compile_str(text, target_backends=["llvm-cpu"], extra_args=["--iree-llvmcpu-target-cpu=host"])
    context = ireert.SystemContext(config=ireert.Config("local-task"))
    context.add_vm_module(ireert.VmModule.copy_buffer(context.instance, vmfb))
    got = context.modules.module["main"](*inputs)
    # C's pow, written out: -8, 4, NaN, -inf (-0.0 ** -1), inf, sqrt(3), 2.25.
    np.testing.assert_allclose(expected[1], [-8, 4, np.nan, -np.inf, np.inf, 3 ** 0.5, 2.25], rtol=1e-6)
    assert len(got) == len(expected)
    for index, (g, e) in enumerate(zip(got, expected)):
        g = np.asarray(g)
        assert g.shape == e.shape, index
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5, err_msg=f"result {index}")
