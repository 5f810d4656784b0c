// RUN: xrelay-opt %s -o %t.out.mlir
// RUN: filecheck %s --input-file %t.out.mlir
// RUN: xrelay-opt < %t.out.mlir | filecheck %s

// The elementwise math ops in the custom form, printed as parsed and parsed back.

func.func @unary(%x: tensor<2x3xf32>, %i: tensor<2x3xi32>) -> (tensor<2x3xf32>, tensor<2x3xi32>) {
  %0 = nn.tanh(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = nn.erf(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = nn.exp(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = nn.log(%2) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = nn.abs(%3) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = nn.abs(%i) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %6 = nn.clip(%4) {a_min = 0.0 : f64, a_max = 6.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = nn.clip(%5) {a_min = 0xFFF0000000000000 : f64, a_max = 2.5 : f64} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %8 = nn.leaky_relu(%6) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = nn.leaky_relu(%8) {alpha = 0.01 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %10 = nn.leaky_relu(%9) {alpha = 0.2 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %10, %7 : tensor<2x3xf32>, tensor<2x3xi32>
}
// CHECK-LABEL: func.func @unary(%x: tensor<2x3xf32>, %i: tensor<2x3xi32>) -> (tensor<2x3xf32>, tensor<2x3xi32>) {
// CHECK-NEXT:    %0 = nn.tanh(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %1 = nn.erf(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %2 = nn.exp(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %3 = nn.log(%2) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %4 = nn.abs(%3) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %5 = nn.abs(%i) : (tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %6 = nn.clip(%4) {a_min = 0.000000e+00 : f64, a_max = 6.000000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %7 = nn.clip(%5) {a_min = 0xfff0000000000000 : f64, a_max = 2.500000e+00 : f64} : (tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %8 = nn.leaky_relu(%6) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// Parsing keeps what the text says, even a default written out.
// CHECK-NEXT:    %9 = nn.leaky_relu(%8) {alpha = 1.000000e-02 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %10 = nn.leaky_relu(%9) {alpha = 2.000000e-01 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %10, %7 : tensor<2x3xf32>, tensor<2x3xi32>

func.func @binary(%x: tensor<1x3x4x4xf32>, %a: tensor<3xf32>, %y: tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32> {
  %0 = nn.prelu(%x, %a) : (tensor<1x3x4x4xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %1 = nn.power(%0, %y) : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
  %2 = nn.maximum(%1, %y) : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
  %3 = nn.minimum(%y, %2) : (tensor<3x1x1xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %3 : tensor<1x3x4x4xf32>
}
// CHECK-LABEL: func.func @binary(%x: tensor<1x3x4x4xf32>, %a: tensor<3xf32>, %y: tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32> {
// CHECK-NEXT:    %0 = nn.prelu(%x, %a) : (tensor<1x3x4x4xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:    %1 = nn.power(%0, %y) : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:    %2 = nn.maximum(%1, %y) : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:    %3 = nn.minimum(%y, %2) : (tensor<3x1x1xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:    func.return %3 : tensor<1x3x4x4xf32>
