// RUN: xrelay-opt %s --opt-level 3 -p shuffle-into-conv | filecheck %s

// A grouped 1x1 conv (2 groups of 1 input channel, 2 filters each), its bias and ReLU, then a
// channel shuffle of 2 groups: one dense conv whose filters come in the shuffled order (0, 2, 1, 3),
// zero where a filter's group does not read the channel, the bias permuted the same way.
func.func @unit(%x: tensor<1x2x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %w = nn.constant dense<[[[[1.0]]], [[[2.0]]], [[[3.0]]], [[[4.0]]]]> : tensor<4x1x1x1xf32>
  %b = nn.constant dense<[10.0, 20.0, 30.0, 40.0]> : tensor<4xf32>
  %c = nn.conv2d(%x, %w) {groups = 2 : i64} : (tensor<1x2x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<1x4x3x3xf32>
  %y = nn.bias_add(%c, %b) : (tensor<1x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
  %r = nn.relu(%y) : (tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %s = nn.reshape(%r) {newshape = array<i64: 1, 2, 2, 3, 3>} : (tensor<1x4x3x3xf32>) -> tensor<1x2x2x3x3xf32>
  %t = nn.transpose(%s) {axes = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x2x2x3x3xf32>) -> tensor<1x2x2x3x3xf32>
  %m = nn.reshape(%t) {newshape = array<i64: 1, 4, 3, 3>} : (tensor<1x2x2x3x3xf32>) -> tensor<1x4x3x3xf32>
  func.return %m : tensor<1x4x3x3xf32>
}

// CHECK-LABEL: func.func @unit(%x: tensor<1x2x3x3xf32>) -> tensor<1x4x3x3xf32> {
// CHECK-NEXT:    %[[W:.*]] = nn.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}0.000000e+00]]], {{\[\[\[}}0.000000e+00]], {{\[\[}}3.000000e+00]]], {{\[\[\[}}2.000000e+00]], {{\[\[}}0.000000e+00]]], {{\[\[\[}}0.000000e+00]], {{\[\[}}4.000000e+00]]]]> : tensor<4x2x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = nn.conv2d(%x, %[[W]]) : (tensor<1x2x3x3xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:    %[[B:.*]] = nn.constant dense<{{\[\[\[\[}}1.000000e+01]], {{\[\[}}3.000000e+01]], {{\[\[}}2.000000e+01]], {{\[\[}}4.000000e+01]]]]> : tensor<1x4x1x1xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.add(%[[C]], %[[B]]) : (tensor<1x4x3x3xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:    %[[R:.*]] = nn.relu(%[[Y]]) : (tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<1x4x3x3xf32>
// CHECK-NEXT:  }

// The same with groups reading 9 channels each (more than the default 8): left alone.
func.func @wide_groups(%x: tensor<1x18x1x1xf32>) -> tensor<1x4x1x1xf32> {
  %wc = nn.constant dense<1.0> : tensor<4x9x1x1xf32>
  %c = nn.conv2d(%x, %wc) {groups = 2 : i64} : (tensor<1x18x1x1xf32>, tensor<4x9x1x1xf32>) -> tensor<1x4x1x1xf32>
  %s = nn.reshape(%c) {newshape = array<i64: 1, 2, 2, 1, 1>} : (tensor<1x4x1x1xf32>) -> tensor<1x2x2x1x1xf32>
  %t = nn.transpose(%s) {axes = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x2x2x1x1xf32>) -> tensor<1x2x2x1x1xf32>
  %m = nn.reshape(%t) {newshape = array<i64: 1, 4, 1, 1>} : (tensor<1x2x2x1x1xf32>) -> tensor<1x4x1x1xf32>
  func.return %m : tensor<1x4x1x1xf32>
}

// CHECK-LABEL: func.func @wide_groups(
// CHECK:         nn.conv2d{{.*}}groups = 2
// CHECK:         nn.transpose
