// RUN: xrelay-opt %s -o %t.out.mlir
// RUN: filecheck %s --input-file %t.out.mlir
// RUN: xrelay-opt < %t.out.mlir | filecheck %s

// Reductions and the normalisation ops in the custom form, printed as parsed and parsed back.

func.func @reduce(%x: tensor<2x3x4xf32>, %i: tensor<2x3xi32>) -> (tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<f32>, tensor<2xi32>) {
  %0 = nn.sum(%x) {axis = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %1 = nn.mean(%x) {axis = array<i64: 1>, keepdims = true, exclude = true} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  %2 = nn.max(%x) : (tensor<2x3x4xf32>) -> tensor<f32>
  %3 = nn.max(%i) {axis = array<i64: -1>} : (tensor<2x3xi32>) -> tensor<2xi32>
  func.return %0, %1, %2, %3 : tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<f32>, tensor<2xi32>
}
func.func @norm(%x: tensor<2x5xf32>, %g: tensor<5xf32>, %b: tensor<5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) {
  %0 = nn.log_softmax(%x) : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %1 = nn.layer_norm(%x, %g, %b) {epsilon = 1.0e-6 : f64} : (tensor<2x5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  func.return %0, %1 : tensor<2x5xf32>, tensor<2x5xf32>
}
func.func @lrn(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %0 = nn.lrn(%x) {size = 3 : i64, bias = 1.0 : f64, alpha = 0.5 : f64} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  func.return %0 : tensor<1x4x2x2xf32>
}
// CHECK-LABEL: func.func @reduce(%x: tensor<2x3x4xf32>, %i: tensor<2x3xi32>) -> (tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<f32>, tensor<2xi32>) {
// CHECK-NEXT:    %0 = nn.sum(%x) {axis = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %1 = nn.mean(%x) {axis = array<i64: 1>, keepdims = true, exclude = true} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
// CHECK-NEXT:    %2 = nn.max(%x) : (tensor<2x3x4xf32>) -> tensor<f32>
// CHECK-NEXT:    %3 = nn.max(%i) {axis = array<i64: -1>} : (tensor<2x3xi32>) -> tensor<2xi32>
// CHECK-LABEL: func.func @norm
// CHECK-NEXT:    %0 = nn.log_softmax(%x) : (tensor<2x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    %1 = nn.layer_norm(%x, %g, %b) {epsilon = 1.000000e-06 : f64} : (tensor<2x5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
// CHECK-LABEL: func.func @lrn
// CHECK-NEXT:    %0 = nn.lrn(%x) {size = 3 : i64, bias = 1.000000e+00 : f64, alpha = 5.000000e-01 : f64} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
