// RUN: xrelay-opt %s -p convert-nn-to-linalg,conv-to-matmul -o %t.out.mlir
// RUN: filecheck %s --input-file %t.out.mlir
// RUN: iree-opt < %t.out.mlir | filecheck %s --check-prefix=IREE
// RUN: xrelay-opt %s -p convert-nn-to-linalg,conv-to-matmul{im2col_channels=2} | filecheck %s --check-prefix=TWO

// A strided 1x1 convolution: the strided rows of the input (extract_slice), collapsed to
// (N*OH*OW, C), times the weight collapsed to (C, F), expanded back to NHWC.
func.func @conv_1x1_stride2(%x: tensor<1x5x5x8xf32>, %w: tensor<1x1x8x16xf32>) -> tensor<1x3x3x16xf32> {
  %0 = nn.conv2d(%x, %w) {data_layout = "NHWC", kernel_layout = "HWIO", strides = array<i64: 2, 2>} : (tensor<1x5x5x8xf32>, tensor<1x1x8x16xf32>) -> tensor<1x3x3x16xf32>
  func.return %0 : tensor<1x3x3x16xf32>
}
// CHECK-LABEL: func.func @conv_1x1_stride2
// CHECK:         %[[INIT:.*]] = linalg.fill
// CHECK-NEXT:    %[[S:.*]] = tensor.extract_slice %x[0, 0, 0, 0] [1, 3, 3, 8] [1, 2, 2, 1] : tensor<1x5x5x8xf32> to tensor<1x3x3x8xf32>
// CHECK-NEXT:    %[[A:.*]] = tensor.collapse_shape %[[S]] {{\[\[}}0 : i64, 1 : i64, 2 : i64], [3 : i64]] : tensor<1x3x3x8xf32> into tensor<9x8xf32>
// CHECK-NEXT:    %[[B:.*]] = tensor.collapse_shape %w {{\[\[}}0 : i64, 1 : i64, 2 : i64], [3 : i64]] : tensor<1x1x8x16xf32> into tensor<8x16xf32>
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %[[INIT]] {{\[\[}}0 : i64, 1 : i64, 2 : i64], [3 : i64]] : tensor<1x3x3x16xf32> into tensor<9x16xf32>
// CHECK-NEXT:    %[[M:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<9x8xf32>, tensor<8x16xf32>) outs(%[[C]] : tensor<9x16xf32>) -> tensor<9x16xf32>
// CHECK-NEXT:    %[[R:.*]] = tensor.expand_shape %[[M]] {{\[\[}}0 : i64, 1 : i64, 2 : i64], [3 : i64]] output_shape [1, 3, 3, 16] : tensor<9x16xf32> into tensor<1x3x3x16xf32>
// CHECK-NEXT:    func.return %[[R]]
// IREE-LABEL:  func.func @conv_1x1_stride2
// IREE:          tensor.extract_slice
// IREE:          linalg.matmul
// IREE:          tensor.expand_shape

// Three input channels (an RGB stem): im2col, a generic gathering each window (stride 2, dilation 2
// in the map), collapsed to (N*OH*OW, KH*KW*C), times the weight collapsed to (KH*KW*C, F).
func.func @conv_rgb(%x: tensor<1x9x9x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x3x3x4xf32> {
  %0 = nn.conv2d(%x, %w) {data_layout = "NHWC", kernel_layout = "HWIO", strides = array<i64: 2, 2>, dilation = array<i64: 2, 2>} : (tensor<1x9x9x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  func.return %0 : tensor<1x3x3x4xf32>
}
// CHECK-LABEL: func.func @conv_rgb
// CHECK:         %[[INIT:.*]] = linalg.fill
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<1x3x3x3x3x3xf32>
// CHECK-NEXT:    %[[COLS:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, ((d1 * 2) + (d3 * 2)), ((d2 * 2) + (d4 * 2)), d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x9x9x3xf32>) outs(%[[E]] : tensor<1x3x3x3x3x3xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]] : f32
// CHECK-NEXT:    } -> tensor<1x3x3x3x3x3xf32>
// CHECK-NEXT:    %[[A:.*]] = tensor.collapse_shape %[[COLS]] {{\[\[}}0 : i64, 1 : i64, 2 : i64], [3 : i64, 4 : i64, 5 : i64]] : tensor<1x3x3x3x3x3xf32> into tensor<9x27xf32>
// CHECK-NEXT:    %[[B:.*]] = tensor.collapse_shape %w {{\[\[}}0 : i64, 1 : i64, 2 : i64], [3 : i64]] : tensor<3x3x3x4xf32> into tensor<27x4xf32>
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %[[INIT]]
// CHECK-NEXT:    %[[M:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<9x27xf32>, tensor<27x4xf32>) outs(%[[C]] : tensor<9x4xf32>)
// CHECK-NEXT:    tensor.expand_shape %[[M]]
// IREE-LABEL:  func.func @conv_rgb
// IREE:          linalg.generic
// IREE:          linalg.matmul
// With im2col_channels=2, three channels are enough for the convolution to stay.
// TWO-LABEL:   func.func @conv_rgb
// TWO-NOT:       linalg.matmul
// TWO:           linalg.conv_2d_nhwc_hwcf

// A 3x3 convolution over 8 channels stays a convolution (IREE packs it as one).
func.func @conv_3x3(%x: tensor<1x4x4x8xf32>, %w: tensor<3x3x8x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = nn.conv2d(%x, %w) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x8xf32>, tensor<3x3x8x4xf32>) -> tensor<1x2x2x4xf32>
  func.return %0 : tensor<1x2x2x4xf32>
}
// CHECK-LABEL: func.func @conv_3x3
// CHECK-NOT:     linalg.matmul
// CHECK:         linalg.conv_2d_nhwc_hwcf {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%x, %w
// CHECK-NOT:     linalg.matmul
// CHECK:         func.return
