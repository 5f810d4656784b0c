// RUN: xrelay-opt %s -p convert-nn-to-linalg | filecheck %s

// NCHW/OIHW: zero padding is a tensor.pad yielding 0 (the form upstream frontends write and IREE
// compiles), then xDSL's named conv (its maps are right; only its interpreter impl is not) from a zero init.
func.func @conv_nchw(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32> {
  %0 = nn.conv2d(%x, %w) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
  func.return %0 : tensor<1x3x2x2xf32>
}
// CHECK-LABEL: func.func @conv_nchw
// CHECK-NEXT:    %[[P:.*]] = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
// CHECK-NEXT:    ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      tensor.yield %[[Z]] : f32
// CHECK-NEXT:    } : tensor<1x2x4x4xf32> to tensor<1x2x6x6xf32>
// CHECK:         %[[O:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x3x2x2xf32>)
// CHECK-NEXT:    %[[C:.*]] = linalg.conv_2d_nchw_fchw {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%[[P]], %w : tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>) outs(%[[O]] : tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NEXT:    func.return %[[C]]

// NHWC/HWIO has a named op too; no padding, no copy.
func.func @conv_nhwc(%x: tensor<1x4x4x2xf32>, %w: tensor<3x3x2x3xf32>) -> tensor<1x2x2x3xf32> {
  %0 = nn.conv2d(%x, %w) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xf32>, tensor<3x3x2x3xf32>) -> tensor<1x2x2x3xf32>
  func.return %0 : tensor<1x2x2x3xf32>
}
// CHECK-LABEL: func.func @conv_nhwc
// CHECK-NOT:     linalg.generic
// CHECK:         linalg.conv_2d_nhwc_hwcf {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x4x2xf32>, tensor<3x3x2x3xf32>)

// Groups: channels split by expand_shape, a generic over (n, g, f, oh, ow, c, kh, kw), collapsed back.
func.func @conv_grouped(%x: tensor<1x4x3x3xf32>, %w: tensor<4x2x1x1xf32>) -> tensor<1x4x3x3xf32> {
  %0 = nn.conv2d(%x, %w) {groups = 2 : i64} : (tensor<1x4x3x3xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x3x3xf32>
  func.return %0 : tensor<1x4x3x3xf32>
}
// CHECK-LABEL: func.func @conv_grouped
// CHECK-NEXT:    %[[X:.*]] = tensor.expand_shape %x {{\[\[}}0 : i64], [1 : i64, 2 : i64], [3 : i64], [4 : i64]] output_shape [1, 2, 2, 3, 3] : tensor<1x4x3x3xf32> into tensor<1x2x2x3x3xf32>
// CHECK-NEXT:    %[[W:.*]] = tensor.expand_shape %w {{\[\[}}0 : i64, 1 : i64], [2 : i64], [3 : i64], [4 : i64]] output_shape [2, 2, 2, 1, 1] : tensor<4x2x1x1xf32> into tensor<2x2x2x1x1xf32>
// CHECK:         %[[G:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, (d3 + d6), (d4 + d7))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[X]], %[[W]] : tensor<1x2x2x3x3xf32>, tensor<2x2x2x1x1xf32>)
// CHECK-NEXT:    ^bb0(%[[XI:.*]]: f32, %[[WI:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[XI]], %[[WI]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC]], %[[M]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         tensor.collapse_shape %[[G]] {{\[\[}}0 : i64], [1 : i64, 2 : i64], [3 : i64], [4 : i64]] : tensor<1x2x2x3x3xf32> into tensor<1x4x3x3xf32>

// A padding only at the bottom/right: tensor.pad's high widths, and the named conv reads it directly.
func.func @conv_end_padding(%x: tensor<1x1x3x3xf32>, %w: tensor<1x1x2x2xf32>) -> tensor<1x1x3x3xf32> {
  %0 = nn.conv2d(%x, %w) {padding = array<i64: 0, 0, 1, 1>} : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x3x3xf32>
  func.return %0 : tensor<1x1x3x3xf32>
}
// CHECK-LABEL: func.func @conv_end_padding
// CHECK-NEXT:    %[[P:.*]] = tensor.pad %x low[0, 0, 0, 0] high[0, 0, 1, 1] {
// CHECK:         } : tensor<1x1x3x3xf32> to tensor<1x1x4x4xf32>
// CHECK:         linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%[[P]], %w : tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>)

// Depthwise (groups = channels, one input and one output channel per group): a generic over
// (n, f, oh, ow, kh, kw), the weight's input-channel axis read at 0, no reshape around it (so
// form-kernels takes its bias and activation into its kernel).
func.func @conv_depthwise(%x: tensor<1x5x5x3xf32>, %w: tensor<3x3x1x3xf32>) -> tensor<1x3x3x3xf32> {
  %0 = nn.conv2d(%x, %w) {groups = 3 : i64, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x5x5x3xf32>, tensor<3x3x1x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %0 : tensor<1x3x3x3xf32>
}
// CHECK-LABEL: func.func @conv_depthwise
// CHECK-NOT:     tensor.expand_shape
// CHECK:         %[[G:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, ((d2 * 2) + d4), ((d3 * 2) + d5), d1)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5, 0, d1)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d1)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %w : tensor<1x7x7x3xf32>, tensor<3x3x1x3xf32>)
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         func.return %[[G]] : tensor<1x3x3x3xf32>
