// RUN: xrelay-opt %s -p convert-nn-to-linalg,conv-space-to-depth -o %t.out.mlir
// RUN: filecheck %s --input-file %t.out.mlir
// RUN: iree-opt < %t.out.mlir | filecheck %s --check-prefix=IREE

// A 3x3 stride-2 convolution over 3 channels: the input padded to whole 2x2 phases (10x10), split
// into them (expand_shape + transpose, phases last) and collapsed to 12 channels; the weight padded
// to 4x4 and split the same way; then a 2x2 stride-1 convolution.
func.func @stem(%x: tensor<1x9x9x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = nn.conv2d(%x, %w) {data_layout = "NHWC", kernel_layout = "HWIO", strides = array<i64: 2, 2>} : (tensor<1x9x9x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %0 : tensor<1x4x4x4xf32>
}
// CHECK-LABEL: func.func @stem
// CHECK:         %[[INIT:.*]] = linalg.fill
// CHECK-NEXT:    %[[XP:.*]] = tensor.pad %x low[0, 0, 0, 0] high[0, 1, 1, 0] {
// CHECK:         } : tensor<1x9x9x3xf32> to tensor<1x10x10x3xf32>
// CHECK-NEXT:    %[[XS:.*]] = tensor.expand_shape %[[XP]] {{\[\[}}0 : i64], [1 : i64, 2 : i64], [3 : i64, 4 : i64], [5 : i64]] output_shape [1, 5, 2, 5, 2, 3] : tensor<1x10x10x3xf32> into tensor<1x5x2x5x2x3xf32>
// CHECK-NEXT:    %[[XE:.*]] = tensor.empty() : tensor<1x5x5x2x2x3xf32>
// CHECK-NEXT:    %[[XT:.*]] = linalg.transpose ins(%[[XS]]:tensor<1x5x2x5x2x3xf32>) outs(%[[XE]]:tensor<1x5x5x2x2x3xf32>) permutation = [0, 1, 3, 2, 4, 5]
// CHECK-NEXT:    %[[X12:.*]] = tensor.collapse_shape %[[XT]] {{\[\[}}0 : i64], [1 : i64], [2 : i64], [3 : i64, 4 : i64, 5 : i64]] : tensor<1x5x5x2x2x3xf32> into tensor<1x5x5x12xf32>
// CHECK-NEXT:    %[[WP:.*]] = tensor.pad %w low[0, 0, 0, 0] high[1, 1, 0, 0] {
// CHECK:         } : tensor<3x3x3x4xf32> to tensor<4x4x3x4xf32>
// CHECK-NEXT:    %[[WS:.*]] = tensor.expand_shape %[[WP]] {{\[\[}}0 : i64, 1 : i64], [2 : i64, 3 : i64], [4 : i64], [5 : i64]] output_shape [2, 2, 2, 2, 3, 4] : tensor<4x4x3x4xf32> into tensor<2x2x2x2x3x4xf32>
// CHECK-NEXT:    %[[WE:.*]] = tensor.empty() : tensor<2x2x2x2x3x4xf32>
// CHECK-NEXT:    %[[WT:.*]] = linalg.transpose ins(%[[WS]]:tensor<2x2x2x2x3x4xf32>) outs(%[[WE]]:tensor<2x2x2x2x3x4xf32>) permutation = [0, 2, 1, 3, 4, 5]
// CHECK-NEXT:    %[[W12:.*]] = tensor.collapse_shape %[[WT]] {{\[\[}}0 : i64], [1 : i64], [2 : i64, 3 : i64, 4 : i64], [5 : i64]] : tensor<2x2x2x2x3x4xf32> into tensor<2x2x12x4xf32>
// CHECK-NEXT:    %[[C:.*]] = linalg.conv_2d_nhwc_hwcf {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%[[X12]], %[[W12]] : tensor<1x5x5x12xf32>, tensor<2x2x12x4xf32>) outs(%[[INIT]] : tensor<1x4x4x4xf32>)
// CHECK-NEXT:    func.return %[[C]]
// IREE-LABEL:  func.func @stem
// IREE:          linalg.transpose
// IREE:          linalg.conv_2d_nhwc_hwcf {{.*}} ins({{.*}} : tensor<1x5x5x12xf32>, tensor<2x2x12x4xf32>)

// Stride 1 stays.
func.func @stride1(%x: tensor<1x6x6x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = nn.conv2d(%x, %w) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x6x6x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %0 : tensor<1x4x4x4xf32>
}
// CHECK-LABEL: func.func @stride1
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.conv_2d_nhwc_hwcf {{.*}} ins(%x, %w
