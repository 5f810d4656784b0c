// RUN: xrelay-opt %s --opt-level 3 -p max-pool-first --split-input-file | filecheck %s

// A per-channel bias and a ReLU in front of a stride-2 max pool move behind it, in their order.
func.func @stem(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %b = nn.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %y = nn.bias_add(%x, %b) : (tensor<1x2x6x6xf32>, tensor<2xf32>) -> tensor<1x2x6x6xf32>
  %r = nn.relu(%y) : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %p = nn.max_pool2d(%r) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  func.return %p : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @stem(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
// CHECK-NEXT:    %b = nn.constant dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %p = nn.max_pool2d(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.bias_add(%p, %b) : (tensor<1x2x3x3xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %[[R:.*]] = nn.relu(%[[Y]]) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<1x2x3x3xf32>
// CHECK-NEXT:  }

// -----

// An add whose constant varies across the window stays in front.
func.func @varying(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32> {
  %c = nn.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %y = nn.add(%x, %c) : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %p = nn.max_pool2d(%y) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32>
  func.return %p : tensor<1x1x1x1xf32>
}

// CHECK-LABEL: func.func @varying(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32> {
// CHECK-NEXT:    %c = nn.constant
// CHECK-NEXT:    %y = nn.add(%x, %c)
// CHECK-NEXT:    %p = nn.max_pool2d(%y)
// CHECK-NEXT:    func.return %p : tensor<1x1x1x1xf32>
// CHECK-NEXT:  }
