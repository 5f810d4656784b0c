"""nn.argmax / nn.argmin against numpy at every level (ties, NaN, integers, select_last_index), and
ONNX ArgMax / ArgMin against ONNX Runtime at the nn, linalg, memref and loops levels and through IREE."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_models import model, run_onnxruntime
from op_levels import LEVELS, run_lowered, run_nn
from xdsl.dialects.builtin import ModuleOp, StringAttr

from xrelay.dialects.arguments import argument_names
from xrelay.frontend import from_onnx
from xrelay.lowering import lower
from xrelay.runtime import iree_backend, run

RNG = np.random.default_rng(55)
TIES = RNG.integers(-2, 3, (3, 4, 5)).astype(np.float32)  # few values: many ties
WITH_NAN = TIES.copy()
WITH_NAN[1, 2, [1, 3]] = np.nan
INTEGERS = TIES.astype(np.int32)


def _last(fn, data, axis, keepdims=False):
    """numpy's first position from the end, counted from the start."""
    return data.shape[axis] - 1 - fn(np.flip(data, axis), axis=axis, keepdims=keepdims)


NN_CASES = [(op, fn, data, attrs, expected)
            for op, fn in (("nn.argmax", np.argmax), ("nn.argmin", np.argmin))
            for data in (TIES, WITH_NAN, INTEGERS)
            for attrs, expected in (({"axis": [1]}, fn(data, axis=1)),
                                    ({"axis": [-1], "keepdims": True}, fn(data, axis=-1, keepdims=True)),
                                    ({"axis": [2], "select_last_index": True}, _last(fn, data, 2)))]


@pytest.mark.parametrize("level", ("nn",) + LEVELS)
@pytest.mark.parametrize("case", range(len(NN_CASES)))
def test_nn_arg_reductions_match_numpy(case, level):
    op_name, _, data, attrs, expected = NN_CASES[case]
    got = run_nn(op_name, [data], attrs) if level == "nn" else run_lowered(op_name, [data], attrs, level)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, expected)


def test_more_than_one_axis_is_refused():
    with pytest.raises(Exception, match=r"nn.argmax: folds 2 axes of 'data' \[3, 4, 5\]; it takes exactly one"):
        run_nn("nn.argmax", [TIES], {"axis": [0, 1]})


CASES = {
    "argmax_default_axis": ("ArgMax", {}, TIES),
    "argmax_axis_keepdims0": ("ArgMax", {"axis": -1, "keepdims": 0}, TIES),
    "argmax_last_index": ("ArgMax", {"axis": 1, "select_last_index": 1}, TIES),
    "argmin_axis": ("ArgMin", {"axis": 2}, TIES),
    "argmin_int64_last": ("ArgMin", {"axis": 0, "select_last_index": 1}, TIES.astype(np.int64)),
}


def _case(name):
    op_type, attrs, data = CASES[name]
    proto = model([helper.make_node(op_type, ["x"], ["y"], **attrs)], {"x": data.shape}, ["y"])
    proto.graph.output[0].type.tensor_type.elem_type = TensorProto.INT64
    if data.dtype == np.int64:
        proto.graph.input[0].type.tensor_type.elem_type = TensorProto.INT64
    return proto, {"x": data}


@pytest.mark.parametrize("name", sorted(CASES))
def test_onnx_arg_reductions_match_onnxruntime_at_every_level(name):
    proto, inputs = _case(name)
    (expected,) = run_onnxruntime(proto, inputs)
    module, params = from_onnx(proto)
    for level in ("nn",) + LEVELS:
        got = run(module if level == "nn" else lower(module, to=level), inputs, params)
        assert got.dtype == np.int64 and got.shape == expected.shape, level
        np.testing.assert_array_equal(got, expected, err_msg=level)


@pytest.mark.slow  # one IREE compilation: several seconds on the shared machine
@pytest.mark.skipif(not iree_backend.available(), reason="IREE is not installed (the 'iree' extra)")
def test_onnx_arg_reductions_through_iree_match_onnxruntime():
    import iree.runtime as ireert

    functions, runs = [], []
    for name in sorted(CASES):
        proto, inputs = _case(name)
        module, params = from_onnx(proto)
        (function,) = lower(module, to="linalg").body.block.ops
        arguments = [{**inputs, **params}[n] for n in argument_names(function)]
        function.detach()
        function.sym_name = StringAttr(name)
        functions.append(function)
        runs.append((name, arguments, run_onnxruntime(proto, inputs)[0]))
    vmfb = iree_backend.compile_vmfb(str(ModuleOp(functions)))
    context = ireert.SystemContext(config=ireert.Config("local-task"))
    context.add_vm_module(ireert.VmModule.copy_buffer(context.instance, vmfb))
    for name, arguments, expected in runs:
        got = context.modules.module[name](*arguments)
        got = np.asarray(got.to_host() if hasattr(got, "to_host") else got)
        np.testing.assert_array_equal(got, expected, err_msg=name)
