// RUN: xrelay-opt %s --print-op-generic -o %t.out.mlir
// RUN: filecheck %s --check-prefix=GENERIC --input-file %t.out.mlir
// RUN: xrelay-opt < %t.out.mlir | filecheck %s

// The generic form carries the same attribute dictionary and parses back to the custom form.

func.func @main(%x: tensor<1x8x16x16xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %0 = nn.conv2d(%x, %w) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, groups = 8 : i64} : (tensor<1x8x16x16xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32>
  %c = nn.constant dense<[2.5]> : tensor<1xf32>
  %1 = nn.multiply(%0, %c) : (tensor<1x8x8x8xf32>, tensor<1xf32>) -> tensor<1x8x8x8xf32>
  func.return %1 : tensor<1x8x8x8xf32>
}

// GENERIC:      ^bb0(%x: tensor<1x8x16x16xf32>, %w: tensor<8x1x3x3xf32>):
// GENERIC-NEXT:   %0 = "nn.conv2d"(%x, %w) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, groups = 8 : i64} : (tensor<1x8x16x16xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32>
// GENERIC-NEXT:   %c = "nn.constant"() {value = dense<2.500000e+00> : tensor<1xf32>} : () -> tensor<1xf32>
// GENERIC-NEXT:   %1 = "nn.multiply"(%0, %c) : (tensor<1x8x8x8xf32>, tensor<1xf32>) -> tensor<1x8x8x8xf32>

// CHECK:      func.func @main(%x: tensor<1x8x16x16xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32> {
// CHECK-NEXT:   %0 = nn.conv2d(%x, %w) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, groups = 8 : i64} : (tensor<1x8x16x16xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x8x8xf32>
// CHECK-NEXT:   %c = nn.constant dense<2.500000e+00> : tensor<1xf32>
// CHECK-NEXT:   %1 = nn.multiply(%0, %c) : (tensor<1x8x8x8xf32>, tensor<1xf32>) -> tensor<1x8x8x8xf32>
