// RUN: not xrelay-opt %s --disable-verify 2>&1 | filecheck %s

// Unverified IR xDSL's printer fails on (a static pad equal to xDSL's dynamic-index marker, so the
// op claims a dynamic operand it lacks): the verifier's error at the op, not an internal error.
func.func @main(%x: tensor<2xf32>) -> tensor<3xf32> {
  %p = "tensor.pad"(%x) <{static_low = array<i64: -9223372036854775808>, static_high = array<i64: 1>, operandSegmentSizes = array<i32: 1, 0, 0>}> ({
  ^bb0(%i: index):
    %c = arith.constant 0.0 : f32
    tensor.yield %c : f32
  }) : (tensor<2xf32>) -> tensor<3xf32>
  func.return %p : tensor<3xf32>
}
// CHECK:      unprintable-output.mlir:6:3: error: 'tensor.pad' op number of dynamic sizes (1) must equal number of unknown dimensions in result tensor (0) (so the output cannot be printed)
// CHECK-NEXT:   %p = "tensor.pad"(%x)
// CHECK-NEXT:   ^
// CHECK-NOT:  {{.}}
