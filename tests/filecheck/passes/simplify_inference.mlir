// RUN: xrelay-opt %s -p simplify-inference --split-input-file | filecheck %s

// Constant parameters: scale = gamma / sqrt(var + eps) = [4/2, 3/3] = [2, 1],
// shift = beta - mean * scale = [0.5 - 2, 0 - 2] = [-1.5, -2], stored as (C, 1, 1) for NCHW.
func.func @nchw(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %g = nn.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %b = nn.constant dense<[0.5, 0.0]> : tensor<2xf32>
  %m = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %v = nn.constant dense<[3.0, 8.0]> : tensor<2xf32>
  %y, %mean, %var = nn.batch_norm(%x, %g, %b, %m, %v) {epsilon = 1.0 : f64} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>)
  func.return %y : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @nchw(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
// CHECK-NEXT:    %[[S:.*]] = nn.constant dense<{{\[\[\[}}2.000000e+00]], {{\[\[}}1.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = nn.constant dense<{{\[\[\[}}-1.500000e+00]], {{\[\[}}-2.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %[[M:.*]] = nn.multiply(%x, %[[S]]) : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %y = nn.add(%[[M]], %[[B]]) : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %y : tensor<1x2x3x3xf32>
// CHECK-NEXT:  }

// -----

// Last axis: the vectors stay 1-D. Without scale/center: scale = 1/sqrt(3 + 1) = 0.5 and
// shift = -mean * scale = [-1, 1]. Uses of the mean/var results read the moving statistics.
func.func @last_axis(%x: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %g = nn.constant dense<[7.0, 7.0]> : tensor<2xf32>
  %b = nn.constant dense<[7.0, 7.0]> : tensor<2xf32>
  %m = nn.constant dense<[2.0, -2.0]> : tensor<2xf32>
  %v = nn.constant dense<[3.0, 3.0]> : tensor<2xf32>
  %y, %mean, %var = nn.batch_norm(%x, %g, %b, %m, %v) {axis = -1 : i64, epsilon = 1.0 : f64, center = false, scale = false} : (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>)
  func.return %y, %mean, %var : tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>
}

// CHECK-LABEL: func.func @last_axis(%x: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>) {
// CHECK-NEXT:    %m = nn.constant dense<[2.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %v = nn.constant dense<3.000000e+00> : tensor<2xf32>
// CHECK-NEXT:    %[[S:.*]] = nn.constant dense<5.000000e-01> : tensor<2xf32>
// CHECK-NEXT:    %[[B:.*]] = nn.constant dense<[-1.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[M:.*]] = nn.multiply(%x, %[[S]]) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    %y = nn.add(%[[M]], %[[B]]) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
// CHECK-NEXT:    func.return %y, %m, %v : tensor<4x2xf32>, tensor<2xf32>, tensor<2xf32>
// CHECK-NEXT:  }

// -----

// Parameters that are not constants: Relay's op chain on them, then expand_dims to (C, 1, 1).
func.func @unbound(%x: tensor<1x2x3x3xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %y, %mean, %var = nn.batch_norm(%x, %g, %b, %m, %v) {epsilon = 2.0e-05 : f64} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>)
  func.return %y : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @unbound(
// CHECK-NEXT:    %[[EPS:.*]] = nn.constant dense<2.000000e-05> : tensor<f32>
// CHECK-NEXT:    %[[VE:.*]] = nn.add(%v, %[[EPS]]) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT:    %[[STD:.*]] = nn.sqrt(%[[VE]])
// CHECK-NEXT:    %[[S:.*]] = nn.divide(%g, %[[STD]])
// CHECK-NEXT:    %[[NM:.*]] = nn.negative(%m)
// CHECK-NEXT:    %[[SH:.*]] = nn.multiply(%[[NM]], %[[S]])
// CHECK-NEXT:    %[[B:.*]] = nn.add(%[[SH]], %b)
// CHECK-NEXT:    %[[S3:.*]] = nn.expand_dims(%[[S]]) {axis = 1 : i64, num_newaxis = 2 : i64} : (tensor<2xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[B3:.*]] = nn.expand_dims(%[[B]]) {axis = 1 : i64, num_newaxis = 2 : i64} : (tensor<2xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT:    %[[X:.*]] = nn.multiply(%x, %[[S3]]) : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %y = nn.add(%[[X]], %[[B3]])
// CHECK-NEXT:    func.return %y
