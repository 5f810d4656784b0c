"""The linalg form of the data-movement ops, nn.batch_matmul and nn.global_max_pool2d is upstream
MLIR: IREE compiles it (llvm-cpu) and every case of tests/test_ops_data.py gives numpy's answer."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, StringAttr

from test_ops_data import CASES, single_op_module
from xrelay.lowering import lower

ireec = pytest.importorskip("iree.compiler")
ireert = pytest.importorskip("iree.runtime")


def test_iree_compiles_every_case_and_agrees_with_numpy():
    functions = []
    for case_id, op_name, arrays, attrs, _ in CASES:
        (function,) = lower(single_op_module(op_name, arrays, attrs), to="linalg").body.block.ops
        function.detach()
        function.sym_name = StringAttr(case_id)
        functions.append(function)
    text = str(ModuleOp(functions))
    assert "tensor.extract " in text and "tensor.insert_slice" in text and "tensor.pad" in text
    vmfb = ireec.compile_str(text, target_backends=["llvm-cpu"], extra_args=["--iree-llvmcpu-target-cpu=host"])
    context = ireert.SystemContext(config=ireert.Config("local-task"))
    context.add_vm_module(ireert.VmModule.copy_buffer(context.instance, vmfb))
    for case_id, _, arrays, _, expected in CASES:
        got = context.modules.module[case_id](*arrays)
        got = list(got) if isinstance(got, list | tuple) else [got]
        assert len(got) == len(expected), case_id
        for g, e in zip(got, expected):
            g = np.asarray(g.to_host() if hasattr(g, "to_host") else g)
            assert g.shape == np.shape(e), case_id
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5, err_msg=case_id)
