// RUN: xrelay-opt %s --opt-level 3 -p 'convert-layout{desired-layouts="nn.conv2d=NHWC:HWIO"}' | filecheck %s

// Data movement after NHWC convolutions follows them, its attributes renumbered (Relay's
// ConcatenateLayout, SplitInferCorrectLayout, PadInferCorrectLayout, StridedSliceInferCorrectLayout);
// global_max_pool2d renames its layout; take is layout-sensitive and gets its input back in NCHW.
func.func @main(%x: tensor<1x2x4x4xf32>, %w1: tensor<3x2x1x1xf32>, %w2: tensor<2x2x1x1xf32>, %i: tensor<2xi64>) -> (tensor<1x5x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x5x5x7xf32>, tensor<1x2x4x4xf32>, tensor<1x5x1x1xf32>, tensor<1x2x4x4xf32>) {
  %a = nn.conv2d(%x, %w1) : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %b = nn.conv2d(%x, %w2) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %c = nn.concatenate(%a, %b) {axis = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x5x4x4xf32>
  %s:2 = nn.split(%c) {indices_or_sections = array<i64: 2>, axis = -3 : i64} : (tensor<1x5x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>)
  %p = nn.pad(%c) {pad_width = array<i64: 0, 0, 0, 0, 1, 0, 1, 2>} : (tensor<1x5x4x4xf32>) -> tensor<1x5x5x7xf32>
  %t = nn.strided_slice(%c) {begin = array<i64: 0, 1>, end = array<i64: 1, 3>} : (tensor<1x5x4x4xf32>) -> tensor<1x2x4x4xf32>
  %g = nn.global_max_pool2d(%c) : (tensor<1x5x4x4xf32>) -> tensor<1x5x1x1xf32>
  %k = nn.take(%c, %i) {axis = 1 : i64} : (tensor<1x5x4x4xf32>, tensor<2xi64>) -> tensor<1x2x4x4xf32>
  func.return %c, %s#0, %s#1, %p, %t, %g, %k : tensor<1x5x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x5x5x7xf32>, tensor<1x2x4x4xf32>, tensor<1x5x1x1xf32>, tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %0 = nn.layout_transform(%x) {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %1 = nn.layout_transform(%w1) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<3x2x1x1xf32>) -> tensor<1x1x2x3xf32>
// CHECK-NEXT:    %a = nn.conv2d(%0, %1) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xf32>, tensor<1x1x2x3xf32>) -> tensor<1x4x4x3xf32>
// CHECK-NEXT:    %2 = nn.layout_transform(%w2) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<2x2x1x1xf32>) -> tensor<1x1x2x2xf32>
// CHECK-NEXT:    %b = nn.conv2d(%0, %2) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %c = nn.concatenate(%a, %b) {axis = 3 : i64} : (tensor<1x4x4x3xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x5xf32>
// CHECK-NEXT:    %s, %s_1 = nn.split(%c) {indices_or_sections = array<i64: 2>, axis = 3 : i64} : (tensor<1x4x4x5xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x3xf32>)
// CHECK-NEXT:    %p = nn.pad(%c) {pad_width = array<i64: 0, 0, 1, 0, 1, 2, 0, 0>} : (tensor<1x4x4x5xf32>) -> tensor<1x5x7x5xf32>
// CHECK-NEXT:    %t = nn.strided_slice(%c) {begin = array<i64: 0, 1>, end = array<i64: 1, 3>, axes = array<i64: 0, 3>} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %g = nn.global_max_pool2d(%c) {layout = "NHWC"} : (tensor<1x4x4x5xf32>) -> tensor<1x1x1x5xf32>
// CHECK-NEXT:    %3 = nn.layout_transform(%c) {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x4x4x5xf32>) -> tensor<1x5x4x4xf32>
// CHECK-NEXT:    %k = nn.take(%3, %i) {axis = 1 : i64} : (tensor<1x5x4x4xf32>, tensor<2xi64>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %4 = nn.layout_transform(%s) {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %5 = nn.layout_transform(%s_1) {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x4x4x3xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:    %6 = nn.layout_transform(%p) {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x5x7x5xf32>) -> tensor<1x5x5x7xf32>
// CHECK-NEXT:    %7 = nn.layout_transform(%t) {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %8 = nn.layout_transform(%g) {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x1x1x5xf32>) -> tensor<1x5x1x1xf32>
// CHECK-NEXT:    func.return %3, %4, %5, %6, %7, %8, %k : tensor<1x5x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x5x5x7xf32>, tensor<1x2x4x4xf32>, tensor<1x5x1x1xf32>, tensor<1x2x4x4xf32>
// CHECK-NEXT:  }
