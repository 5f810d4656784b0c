// RUN: xrelay-opt %s --opt-level 3 -p concat-first | filecheck %s

// Two branches' biases (a bias_add and an add of a per-channel constant) and ReLUs join after the
// concatenation as one add of the concatenated biases and one ReLU.
func.func @fire(%a: tensor<1x1x2x2xf32>, %b: tensor<1x2x2x2xf32>) -> tensor<1x3x2x2xf32> {
  %ba = nn.constant dense<[1.0]> : tensor<1xf32>
  %bb = nn.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
  %ya = nn.bias_add(%a, %ba) : (tensor<1x1x2x2xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  %ra = nn.relu(%ya) : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %yb = nn.add(%b, %bb) : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %rb = nn.relu(%yb) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c = nn.concatenate(%ra, %rb) {axis = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x3x2x2xf32>
  func.return %c : tensor<1x3x2x2xf32>
}

// CHECK-LABEL: func.func @fire(%a: tensor<1x1x2x2xf32>, %b: tensor<1x2x2x2xf32>) -> tensor<1x3x2x2xf32> {
// CHECK-NEXT:    %c = nn.concatenate(%a, %b) {axis = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NEXT:    %[[B:.*]] = nn.constant dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]], {{\[\[}}3.000000e+00]]]]> : tensor<1x3x1x1xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.add(%c, %[[B]]) : (tensor<1x3x2x2xf32>, tensor<1x3x1x1xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NEXT:    %[[R:.*]] = nn.relu(%[[Y]]) : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<1x3x2x2xf32>
// CHECK-NEXT:  }
