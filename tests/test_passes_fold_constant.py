"""FoldConstant: evaluates all-constant nn ops, removes the constants it leaves dead, keeps outputs."""

import numpy as np
import pytest

from tool_passes import PassNames

from xrelay import passes, transform
from xrelay.dialects import nn
from xrelay.frontend import bind_params_by_name, tiny
from xrelay.runtime import run
from module_builder import make_module




def op_names(mod):
    return [op.name for op in mod.walk() if op.name.startswith("nn.")]


def test_chain_folds_and_dead_constants_go():
    def body(args, emit):
        c = emit(nn.ConstantOp(np.array([1.0, 4.0], np.float32)))
        neg = emit(nn.NegativeOp(emit(nn.SqrtOp(c))))
        return [emit(nn.AddOp(args[0], neg))]

    mod = make_module([(2,)], body)
    names = PassNames()
    with transform.PassContext(instruments=[names]):
        out = passes.FoldConstant()(mod)
    assert names.events == ["FoldConstant", "InferType"]  # Relay's nested InferType
    assert passes.FoldConstant().info == transform.PassInfo("FoldConstant", 2, ())
    assert op_names(out) == ["nn.constant", "nn.add"]
    const = next(op for op in out.walk() if isinstance(op, nn.ConstantOp))
    np.testing.assert_array_equal(const.numpy(), [-1.0, -2.0])
    assert op_names(mod) == ["nn.constant", "nn.sqrt", "nn.negative", "nn.add"]  # input untouched


def test_batch_norm_of_constants_matches_numpy():
    rng = np.random.RandomState(3)
    x, gamma, beta, mean = (rng.randn(*s).astype(np.float32) for s in [(2, 3, 4), (3,), (3,), (3,)])
    var = rng.uniform(0.5, 2.0, 3).astype(np.float32)

    def body(args, emit):
        consts = [emit(nn.ConstantOp(a)) for a in (x, gamma, beta, mean, var)]
        out, _, var_out = emit(nn.BatchNormOp(*consts, axis=1, epsilon=1e-3))
        return [out, var_out]

    out_mod = passes.FoldConstant()(make_module([], body))
    assert op_names(out_mod) == ["nn.constant", "nn.constant"]
    y, v = run(out_mod, {})
    expected = (x - mean[:, None]) / np.sqrt(var[:, None] + 1e-3) * gamma[:, None] + beta[:, None]
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(v, var)


# Random graphs over one argument x of shape (2, 3): a few constant leaves of shape (2, 3), (3,)
# or (1,), then random unary/binary ops on earlier values, so some subgraphs are all-constant
# and fold while others depend on x. The expected outputs are computed with numpy alongside.
SHAPE = (2, 3)
UNARY = [(nn.ReluOp, lambda a: np.maximum(a, 0)), (nn.NegativeOp, np.negative)]
BINARY = [(nn.AddOp, np.add), (nn.SubtractOp, np.subtract), (nn.MultiplyOp, np.multiply)]


def random_graph(rng):
    x = rng.randn(*SHAPE).astype(np.float32)
    expected = []

    def body(args, emit):
        args[0].name_hint = "x"
        pool = [(args[0], x)]
        for _ in range(rng.randint(1, 4)):
            c = rng.randn(*[SHAPE, (3,), (1,)][rng.randint(3)]).astype(np.float32)
            pool.append((emit(nn.ConstantOp(c)), c))
        for _ in range(rng.randint(3, 9)):
            kind = rng.randint(3)
            if kind == 0:
                (value, ref), (cls, fn) = pool[rng.randint(len(pool))], UNARY[rng.randint(2)]
                pool.append((emit(cls(value)), fn(ref)))
            elif kind == 1:
                (a, ra), (b, rb) = pool[rng.randint(len(pool))], pool[rng.randint(len(pool))]
                cls, fn = BINARY[rng.randint(3)]
                pool.append((emit(cls(a, b)), fn(ra, rb)))
            else:  # sqrt(v * v + 1), always defined
                value, ref = pool[rng.randint(len(pool))]
                one = emit(nn.ConstantOp(np.ones((1,), np.float32)))
                square_plus_one = emit(nn.AddOp(emit(nn.MultiplyOp(value, value)), one))
                pool.append((emit(nn.SqrtOp(square_plus_one)), np.sqrt(ref * ref + 1)))
        # Return the last value and the value before it, so folded and unfolded parts stay live.
        results = pool[-2:]
        expected.extend(ref for _, ref in results)
        return [value for value, _ in results]

    return make_module([SHAPE], body), x, expected


def depends_on_argument(value, memo):
    owner = value.owner
    if not isinstance(owner, nn.NNOp) and not isinstance(owner, nn.ConstantOp):
        return True  # a block argument
    if owner not in memo:
        memo[owner] = any(depends_on_argument(v, memo) for v in owner.operands)
    return memo[owner]


@pytest.mark.parametrize("seed", range(30))
def test_random_graphs(seed):
    mod, x, expected = random_graph(np.random.RandomState(seed))
    folded = passes.FoldConstant()(mod)
    folded.verify()
    outputs = run(folded, {"x": x})
    for got, want in zip(outputs, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    memo = {}
    for op in folded.body.block.first_op.body.block.ops:
        if isinstance(op, nn.ConstantOp):
            assert op.results[0].uses, "dead constant left behind"
        elif isinstance(op, nn.NNOp):
            assert depends_on_argument(op.results[0], memo), f"{op.name} has only constant operands"


def test_bound_tiny_model_outputs_preserved():
    mod, params = tiny.get_workload(batch_size=2)
    rng = np.random.RandomState(0)
    data = rng.randn(2, 3, 8, 8).astype(np.float32)
    bound = bind_params_by_name(mod, params)
    expected = run(mod, {"data": data}, params)
    folded = passes.FoldConstant()(bound)
    np.testing.assert_allclose(run(folded, {"data": data}), expected, rtol=1e-5)
