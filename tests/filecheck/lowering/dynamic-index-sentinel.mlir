// RUN: not xrelay-opt %s -p convert-nn-to-linalg 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: not xrelay-opt %s -p convert-nn-to-linalg --disable-verify 2>&1 | filecheck %s --check-prefix=LOWER

// -9223372036854775808 is xDSL's marker of a dynamic index (DYNAMIC_INDEX): as a tensor.pad's static
// low pad it made the pad claim a dynamic operand it does not have, and printing failed. The verifier
// rejects the padding; past a disabled one the lowering does, at the op.
func.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32> {
  %0 = nn.conv2d(%x, %w) {padding = array<i64: -9223372036854775808, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}
// VERIFY:      dynamic-index-sentinel.mlir:8:3: error: 'nn.conv2d' op empty output: 'data' [1, 2, 4, 4] is smaller than the dilated kernel of 'weight' [2, 2, 3, 3] after padding (-9223372036854775808, 1, 1, 1)
// VERIFY-NEXT:   %0 = nn.conv2d
// VERIFY-NEXT:   ^
// VERIFY-NOT:  {{.}}

// LOWER:      dynamic-index-sentinel.mlir:8:3: error: pass 'ConvertNNToLinalg' failed on 'nn.conv2d': ValueError: convert-nn-to-linalg: cannot lower nn.conv2d: empty output: 'data' [1, 2, 4, 4] is smaller than the dilated kernel of 'weight' [2, 2, 3, 3] after padding (-9223372036854775808, 1, 1, 1)
// LOWER-NEXT:   %0 = nn.conv2d
// LOWER-NEXT:   ^
// LOWER-NOT:  {{.}}
