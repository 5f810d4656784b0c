// RUN: xrelay-opt %s --disable-verify -p infer-type -o %t.out.mlir
// RUN: filecheck %s --input-file %t.out.mlir
// RUN: xrelay-opt < %t.out.mlir | filecheck %s

// The conv's stored result type is wrong (6 rows where padding 1 keeps 8); InferType recomputes it
// from the operands and attributes, and the relu that consumes it follows.

func.func @main(%data: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %0 = nn.conv2d(%data, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x8xf32>
  %1 = nn.relu(%0) : (tensor<1x4x6x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %1 : tensor<1x4x8x8xf32>
}

// CHECK:      func.func @main(%data: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
// CHECK-NEXT:   %0 = nn.conv2d(%data, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:   %1 = nn.relu(%0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:   func.return %1 : tensor<1x4x8x8xf32>
