"""nn.constant: construction from numpy, zero-copy read-back, printing forms."""

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f16, f32, f64, i32, i64
from xdsl.utils.exceptions import VerifyException

from xrelay.dialects import nn


@pytest.mark.parametrize(
    "dtype, element", [(np.float32, f32), (np.float16, f16), (np.float64, f64), (np.int32, i32), (np.int64, i64)]
)
def test_dtypes_round_trip(dtype, element):
    array = (np.arange(24) - 7).astype(dtype).reshape(2, 3, 4)
    op = nn.ConstantOp(array)
    assert op.results[0].type == TensorType(element, (2, 3, 4))
    out = op.numpy()
    assert out.dtype == dtype and out.shape == (2, 3, 4)
    np.testing.assert_array_equal(out, array)
    op.verify()


def test_numpy_is_a_read_only_view_of_the_attribute_bytes():
    op = nn.ConstantOp(np.arange(12, dtype=np.float32).reshape(3, 4))
    view = op.numpy()
    assert not view.flags.writeable
    raw = np.frombuffer(op.value.data.data, dtype=np.float32)
    assert np.shares_memory(view, raw)
    assert np.shares_memory(op.numpy(), view)
    with pytest.raises(ValueError):
        view[0, 0] = 1.0


def test_constant_copies_its_input():
    array = np.ones((4,), np.float32)
    op = nn.ConstantOp(array)
    array[0] = 5.0
    assert op.numpy()[0] == 1.0


def test_non_contiguous_and_big_endian_inputs():
    array = np.arange(12, dtype=np.float32).reshape(3, 4).T
    np.testing.assert_array_equal(nn.ConstantOp(array).numpy(), array)
    big = np.arange(5, dtype=">i4")
    out = nn.ConstantOp(big).numpy()
    np.testing.assert_array_equal(out, [0, 1, 2, 3, 4])
    assert out.dtype == np.dtype("<i4")


def test_rank_zero_constant():
    op = nn.ConstantOp(np.float32(2.5))
    assert op.results[0].type == TensorType(f32, ())
    assert op.numpy().shape == () and float(op.numpy()) == 2.5


def test_unsupported_dtype_is_rejected():
    with pytest.raises(TypeError, match="unsupported dtype"):
        nn.ConstantOp(np.zeros(3, np.uint8))


def test_attrs_and_infer():
    array = np.array([1.0, 2.0], np.float32)
    op = nn.ConstantOp(array)
    np.testing.assert_array_equal(op.attrs()["value"], array)
    assert op.infer_result_types() == [TensorType(f32, (2,))]


def test_wrong_result_type_fails_verification():
    value = nn.ConstantOp(np.zeros((2, 2), np.float32)).value
    op = nn.ConstantOp.create(result_types=[TensorType(f32, (4,))], attributes={"value": value})
    with pytest.raises(VerifyException, match="nn.constant: result type tensor<4xf32> differs"):
        op.verify()


def test_large_constants_print_as_hex():
    array = np.arange(17, dtype=np.float32)
    text = str(nn.ConstantOp(array))
    hex_payload = array.astype("<f4").tobytes().hex().upper()
    assert text.endswith(f'nn.constant dense<"0x{hex_payload}"> : tensor<17xf32>')


def test_small_constants_print_as_decimal():
    text = str(nn.ConstantOp(np.array([[1.0, 2.0], [0.5, -3.0]], np.float32)))
    assert text.endswith("nn.constant dense<[[1.000000e+00, 2.000000e+00], [5.000000e-01, -3.000000e+00]]> : tensor<2x2xf32>")


def test_splat_prints_one_value():
    text = str(nn.ConstantOp(np.zeros((64, 3, 7, 7), np.float32)))
    assert text.endswith("nn.constant dense<0.000000e+00> : tensor<64x3x7x7xf32>")
