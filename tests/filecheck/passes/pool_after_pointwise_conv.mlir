// RUN: xrelay-opt %s --opt-level 3 -p pool-after-pointwise-conv --split-input-file | filecheck %s

// An average pool in front of a 1x1 convolution from 4 to 2 channels moves behind it: it pools 2
// channels instead of 4.
func.func @projection(%x: tensor<1x4x6x6xf32>) -> tensor<1x2x6x6xf32> {
  %w = nn.constant dense<1.0> : tensor<2x4x1x1xf32>
  %p = nn.avg_pool2d(%x) {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %y = nn.conv2d(%p, %w) {channels = 2 : i64, kernel_size = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x6x6xf32>
  func.return %y : tensor<1x2x6x6xf32>
}

// CHECK-LABEL: func.func @projection(%x: tensor<1x4x6x6xf32>) -> tensor<1x2x6x6xf32> {
// CHECK-NEXT:    %w = nn.constant dense<1.000000e+00> : tensor<2x4x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = nn.conv2d(%x, %w) {channels = 2 : i64, kernel_size = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x6x6xf32>
// CHECK-NEXT:    %[[P:.*]] = nn.avg_pool2d(%[[C]]) {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
// CHECK-NEXT:    func.return %[[P]] : tensor<1x2x6x6xf32>
// CHECK-NEXT:  }

// -----

// A 1x1 convolution to more channels than the pool's keeps the pool in front.
func.func @widening(%x: tensor<1x2x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %w = nn.constant dense<1.0> : tensor<4x2x1x1xf32>
  %p = nn.avg_pool2d(%x) {pool_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %y = nn.conv2d(%p, %w) {channels = 4 : i64, kernel_size = array<i64: 1, 1>} : (tensor<1x2x6x6xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}

// CHECK-LABEL: func.func @widening
// CHECK-NEXT:    %w = nn.constant
// CHECK-NEXT:    %p = nn.avg_pool2d(%x)
// CHECK-NEXT:    %y = nn.conv2d(%p, %w)
// CHECK-NEXT:    func.return %y

// -----

// A 2x2/2 average pool after a 1x1 convolution from 4 to 2 channels (DenseNet's transition layers)
// moves in front of it: the convolution then multiplies over a quarter of the pixels.
func.func @transition(%x: tensor<1x4x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %w = nn.constant dense<1.0> : tensor<2x4x1x1xf32>
  %y = nn.conv2d(%x, %w) {channels = 2 : i64, kernel_size = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x6x6xf32>
  %p = nn.avg_pool2d(%y) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  func.return %p : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @transition(%x: tensor<1x4x6x6xf32>) -> tensor<1x2x3x3xf32> {
// CHECK-NEXT:    %w = nn.constant dense<1.000000e+00> : tensor<2x4x1x1xf32>
// CHECK-NEXT:    %[[P:.*]] = nn.avg_pool2d(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:    %[[C:.*]] = nn.conv2d(%[[P]], %w) {channels = 2 : i64, kernel_size = array<i64: 1, 1>} : (tensor<1x4x3x3xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %[[C]] : tensor<1x2x3x3xf32>
// CHECK-NEXT:  }

// -----

// A max pool does not move: it is not linear.
func.func @max_pool(%x: tensor<1x4x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %w = nn.constant dense<1.0> : tensor<2x4x1x1xf32>
  %y = nn.conv2d(%x, %w) {channels = 2 : i64, kernel_size = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x6x6xf32>
  %p = nn.max_pool2d(%y) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  func.return %p : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @max_pool
// CHECK-NEXT:    %w = nn.constant
// CHECK-NEXT:    %y = nn.conv2d(%x, %w)
// CHECK-NEXT:    %p = nn.max_pool2d(%y)
// CHECK-NEXT:    func.return %p
