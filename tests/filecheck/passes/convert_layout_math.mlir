// RUN: xrelay-opt %s --opt-level 3 -p 'convert-layout{desired-layouts="nn.conv2d=NHWC:HWIO"}' | filecheck %s

// clip (required attributes, kept as they are) and prelu (its axis renumbered) follow the
// converted conv; one transform back to NCHW at the end.
func.func @clip_prelu(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %a: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %c = nn.conv2d(%x, %w) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %k = nn.clip(%c) {a_min = 0.0 : f64, a_max = 6.0 : f64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = nn.prelu(%k, %a) : (tensor<1x2x4x4xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %p : tensor<1x2x4x4xf32>
}
// CHECK-LABEL: func.func @clip_prelu
// CHECK:         %c = nn.conv2d(%0, %1) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %k = nn.clip(%c) {a_min = 0.000000e+00 : f64, a_max = 6.000000e+00 : f64} : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %p = nn.prelu(%k, %a) {axis = 3 : i64} : (tensor<1x4x4x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %2 = nn.layout_transform(%p) {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    func.return %2 : tensor<1x2x4x4xf32>
