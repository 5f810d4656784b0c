// RUN: xrelay-opt %s --opt-level 3 -p backward-fold-scale-axis,forward-fold-scale-axis --split-input-file | filecheck %s
// RUN: xrelay-opt %s --opt-level 3 -p fold-scale-axis --split-input-file | filecheck %s --check-prefix=FOLD

// Backward: a per-output-channel scale after a conv moves onto the weight's O axis.
func.func @backward(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = nn.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %s = nn.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
  %c = nn.conv2d(%x, %w) : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %y = nn.multiply(%c, %s) : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}

// CHECK-LABEL: func.func @backward(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
// CHECK-NEXT:    %w = nn.constant dense<{{\[\[\[\[}}1.000000e+00]]], {{\[\[\[}}2.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[S:.*]] = nn.constant dense<{{\[\[\[\[}}2.000000e+00]]], {{\[\[\[}}3.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[W:.*]] = nn.multiply(%w, %[[S]]) : (tensor<2x1x1x1xf32>, tensor<2x1x1x1xf32>) -> tensor<2x1x1x1xf32>
// CHECK-NEXT:    %c = nn.conv2d(%x, %[[W]]) : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    func.return %c : tensor<1x2x2x2xf32>
// CHECK-NEXT:  }

// FOLD-LABEL: func.func @backward(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
// FOLD-NEXT:    %[[W:.*]] = nn.constant dense<{{\[\[\[\[}}2.000000e+00]]], {{\[\[\[}}6.000000e+00]]]]> : tensor<2x1x1x1xf32>
// FOLD-NEXT:    %c = nn.conv2d(%x, %[[W]]) : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
// FOLD-NEXT:    func.return %c : tensor<1x2x2x2xf32>
// FOLD-NEXT:  }

// -----

// Forward through add and relu: x * s + b = (x + b / s) * s, relu commutes with s > 0, and the
// scale lands on the input-channel axis of every consuming conv's weight (b / s = [0.5, 0.25]).
func.func @forward(%x: tensor<1x2x2x2xf32>, %w1: tensor<1x2x1x1xf32>, %w2: tensor<3x2x1x1xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x3x2x2xf32>) {
  %s = nn.constant dense<[[[2.0]], [[4.0]]]> : tensor<2x1x1xf32>
  %b = nn.constant dense<[[[1.0]], [[1.0]]]> : tensor<2x1x1xf32>
  %m = nn.multiply(%x, %s) : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %a = nn.add(%m, %b) : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %r = nn.relu(%a) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y1 = nn.conv2d(%r, %w1) : (tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x2x2xf32>
  %y2 = nn.conv2d(%r, %w2) : (tensor<1x2x2x2xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x2x2xf32>
  func.return %y1, %y2 : tensor<1x1x2x2xf32>, tensor<1x3x2x2xf32>
}

// CHECK-LABEL: func.func @forward(
// CHECK-NEXT:    %[[B:.*]] = nn.constant dense<{{\[\[\[}}5.000000e-01]], {{\[\[}}2.500000e-01]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %a = nn.add(%x, %[[B]]) : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    %r = nn.relu(%a)
// CHECK-NEXT:    %[[S1:.*]] = nn.constant dense<{{\[\[\[\[}}2.000000e+00]], {{\[\[}}4.000000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK-NEXT:    %[[W1:.*]] = nn.multiply(%w1, %[[S1]]) : (tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
// CHECK-NEXT:    %y1 = nn.conv2d(%r, %[[W1]])
// CHECK-NEXT:    %[[S2:.*]] = nn.constant dense<{{\[\[\[\[}}2.000000e+00]], {{\[\[}}4.000000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK-NEXT:    %[[W2:.*]] = nn.multiply(%w2, %[[S2]]) : (tensor<3x2x1x1xf32>, tensor<1x2x1x1xf32>) -> tensor<3x2x1x1xf32>
// CHECK-NEXT:    %y2 = nn.conv2d(%r, %[[W2]])
// CHECK-NEXT:    func.return %y1, %y2

// -----

// Not folded: a negative scale before relu; a scale that varies along W; a conv output with a
// second user; a dense output scaled per unit is folded into the dense weight rows.
func.func @blocked(%x: tensor<1x2x2x2xf32>, %w: tensor<2x2x1x1xf32>, %v: tensor<3x2xf32>, %f: tensor<1x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x3xf32>) {
  %neg = nn.constant dense<[[[-1.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %m = nn.multiply(%x, %neg) : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %r = nn.relu(%m) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %y = nn.conv2d(%r, %w) : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %sw = nn.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %z = nn.multiply(%y, %sw) : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %c = nn.conv2d(%x, %w) : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %sc = nn.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
  %u = nn.multiply(%c, %sc) : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %d = nn.dense(%f, %v) : (tensor<1x2xf32>, tensor<3x2xf32>) -> tensor<1x3xf32>
  %sd = nn.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %e = nn.multiply(%d, %sd) : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  func.return %z, %u, %c, %e : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x3xf32>
}

// CHECK-LABEL: func.func @blocked(
// CHECK:         %m = nn.multiply(%x, %neg)
// CHECK:         %z = nn.multiply(%y, %sw)
// CHECK:         %u = nn.multiply(%c, %sc)
// CHECK-NEXT:    %[[S:.*]] = nn.constant dense<{{\[\[}}1.000000e+00], [2.000000e+00], [3.000000e+00]]> : tensor<3x1xf32>
// CHECK-NEXT:    %[[V:.*]] = nn.multiply(%v, %[[S]]) : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %d = nn.dense(%f, %[[V]])
// CHECK-NEXT:    func.return %z, %u, %c, %d

// -----

// Backward across constant adds: (conv(x, w) + b0) * s + b1 = conv(x, w * s) + (b0 * s + b1), one
// add after the conv (b0 * s + b1 = [1 * 2 + 0.5, 1 * 3 + 0.5]).
func.func @backward_across_adds(%x: tensor<1x2x2x1xf32>) -> tensor<1x2x2x2xf32> {
  %w = nn.constant dense<[[[[1.0, 2.0]]]]> : tensor<1x1x1x2xf32>
  %b0 = nn.constant dense<1.0> : tensor<1x1x1x2xf32>
  %s = nn.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %b1 = nn.constant dense<0.5> : tensor<2xf32>
  %c = nn.conv2d(%x, %w) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x2x2x1xf32>, tensor<1x1x1x2xf32>) -> tensor<1x2x2x2xf32>
  %a = nn.add(%c, %b0) : (tensor<1x2x2x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x2x2x2xf32>
  %m = nn.multiply(%a, %s) : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %y = nn.add(%m, %b1) : (tensor<1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}

// CHECK-LABEL: func.func @backward_across_adds(
// CHECK-NEXT:    %w = nn.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00]]]]> : tensor<1x1x1x2xf32>
// CHECK-NEXT:    %[[S:.*]] = nn.constant dense<{{\[\[\[\[}}2.000000e+00, 3.000000e+00]]]]> : tensor<1x1x1x2xf32>
// CHECK-NEXT:    %[[W:.*]] = nn.multiply(%w, %[[S]])
// CHECK-NEXT:    %c = nn.conv2d(%x, %[[W]])
// CHECK-NEXT:    %[[B:.*]] = nn.constant dense<{{\[\[\[\[}}2.500000e+00, 3.500000e+00]]]]> : tensor<1x1x1x2xf32>
// CHECK-NEXT:    %y = nn.add(%c, %[[B]])
// CHECK-NEXT:    func.return %y

// FOLD-LABEL: func.func @backward_across_adds(
// FOLD-NEXT:    %[[W:.*]] = nn.constant dense<{{\[\[\[\[}}2.000000e+00, 6.000000e+00]]]]> : tensor<1x1x1x2xf32>
// FOLD-NEXT:    %c = nn.conv2d(%x, %[[W]])
// FOLD-NEXT:    %[[B:.*]] = nn.constant dense<{{\[\[\[\[}}2.500000e+00, 3.500000e+00]]]]> : tensor<1x1x1x2xf32>
// FOLD-NEXT:    %y = nn.add(%c, %[[B]])
// FOLD-NEXT:    func.return %y
