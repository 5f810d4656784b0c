// RUN: xrelay-opt %s --opt-level 3 -p preactivation-shift --split-input-file | filecheck %s

// A pre-activation (per-channel add, ReLU) in front of a 1x1 conv with a bias: the ReLU of the add
// becomes a maximum with the negated shift, and the shift w.b joins the conv's bias: here
// w = [[1, 2], [3, -1]] (OIHW), b = [1, -2]: w.b = [-3, 5], bias [0.5, 0.5] + [-3, 5] = [-2.5, 5.5].
func.func @dense_layer(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %b = nn.constant dense<[[[1.0]], [[-2.0]]]> : tensor<2x1x1xf32>
  %y = nn.add(%x, %b) : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %r = nn.relu(%y) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %w = nn.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[-1.0]]]]> : tensor<2x2x1x1xf32>
  %c = nn.conv2d(%r, %w) {channels = 2 : i64, kernel_size = array<i64: 1, 1>} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %bias = nn.constant dense<[[[0.5]], [[0.5]]]> : tensor<2x1x1xf32>
  %o = nn.add(%c, %bias) : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  func.return %o : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @dense_layer(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
// CHECK-NEXT:    %[[NEG:.*]] = nn.constant dense<{{\[\[\[}}-1.000000e+00]], {{\[\[}}2.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[M:.*]] = nn.maximum(%x, %[[NEG]]) : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %w = nn.constant
// CHECK-NEXT:    %c = nn.conv2d(%[[M]], %w)
// CHECK-NEXT:    %[[BIAS:.*]] = nn.constant dense<{{\[\[\[\[}}-2.500000e+00]], {{\[\[}}5.500000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK-NEXT:    %o = nn.add(%c, %[[BIAS]]) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %o : tensor<1x2x3x3xf32>
// CHECK-NEXT:  }

// -----

// Before a padded 3x3 conv the shift cannot move through (the padding would see it): left alone.
func.func @padded(%x: tensor<1x2x3x3xf32>) -> tensor<1x1x3x3xf32> {
  %b = nn.constant dense<[[[1.0]], [[-2.0]]]> : tensor<2x1x1xf32>
  %y = nn.add(%x, %b) : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %r = nn.relu(%y) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %w = nn.constant dense<1.0> : tensor<1x2x3x3xf32>
  %c = nn.conv2d(%r, %w) {padding = array<i64: 1, 1, 1, 1>, channels = 1 : i64, kernel_size = array<i64: 3, 3>} : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x3x3xf32>
  func.return %c : tensor<1x1x3x3xf32>
}

// CHECK-LABEL: func.func @padded
// CHECK-NEXT:    %b = nn.constant
// CHECK-NEXT:    %y = nn.add(%x, %b)
// CHECK-NEXT:    %r = nn.relu(%y)
// CHECK-NEXT:    %w = nn.constant
// CHECK-NEXT:    %c = nn.conv2d(%r, %w)
// CHECK-NEXT:    func.return %c
// CHECK-NEXT:  }
