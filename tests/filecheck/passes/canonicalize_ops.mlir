// RUN: xrelay-opt %s -p canonicalize-ops --opt-level 3 --split-input-file | filecheck %s

// bias_add on the last axis (a dense output) is a plain add: numpy broadcasting does the rest.
func.func @dense_bias(%x: tensor<1x3xf32>, %b: tensor<3xf32>) -> tensor<1x3xf32> {
  %y = nn.bias_add(%x, %b) {axis = -1 : i64} : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  func.return %y : tensor<1x3xf32>
}

// CHECK-LABEL: func.func @dense_bias(%x: tensor<1x3xf32>, %b: tensor<3xf32>) -> tensor<1x3xf32> {
// CHECK-NEXT:    %y = nn.add(%x, %b) : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:    func.return %y : tensor<1x3xf32>
// CHECK-NEXT:  }

// -----

// A constant bias on axis 1 of NCHW is stored reshaped to (C, 1, 1).
func.func @const_bias(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %b = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = nn.bias_add(%x, %b) : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func @const_bias(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
// CHECK-NEXT:    %[[B:.*]] = nn.constant dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %y = nn.add(%x, %[[B]]) : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    func.return %y : tensor<1x2x4x4xf32>
// CHECK-NEXT:  }

// -----

// Any other bias goes through expand_dims, as in Relay (axis 1 of 3-D data: one new axis).
func.func @arg_bias(%x: tensor<1x2x4xf32>, %b: tensor<2xf32>) -> tensor<1x2x4xf32> {
  %y = nn.bias_add(%x, %b) {axis = 1 : i64} : (tensor<1x2x4xf32>, tensor<2xf32>) -> tensor<1x2x4xf32>
  func.return %y : tensor<1x2x4xf32>
}

// CHECK-LABEL: func.func @arg_bias(
// CHECK-NEXT:    %[[B:.*]] = nn.expand_dims(%b) {axis = 1 : i64} : (tensor<2xf32>) -> tensor<2x1xf32>
// CHECK-NEXT:    %y = nn.add(%x, %[[B]]) : (tensor<1x2x4xf32>, tensor<2x1xf32>) -> tensor<1x2x4xf32>
// CHECK-NEXT:    func.return %y : tensor<1x2x4xf32>
