// RUN: xrelay-opt %s -p convert-nn-to-linalg | filecheck %s

// nn.conv2d_transpose: the input inserted at every 2nd row and column of a zero tensor framed by the
// kernel's reach less one (1), the weight gathered flipped as OIHW, nn.conv2d's named conv, the padding
// (bottom, right: 1) cropped.
func.func @conv_transpose(%x: tensor<1x2x3x3xf32>, %w: tensor<2x3x2x2xf32>) -> tensor<1x3x5x5xf32> {
  %0 = nn.conv2d_transpose(%x, %w) {strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>} : (tensor<1x2x3x3xf32>, tensor<2x3x2x2xf32>) -> tensor<1x3x5x5xf32>
  func.return %0 : tensor<1x3x5x5xf32>
}
// CHECK-LABEL: func.func @conv_transpose
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x7x7xf32>)
// CHECK-NEXT:    %[[S:.*]] = tensor.insert_slice %x into %[[Z]][0, 0, 1, 1] [1, 2, 3, 3] [1, 1, 2, 2] : tensor<1x2x3x3xf32> into tensor<1x2x7x7xf32>
// CHECK:         %[[K:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[KH:.*]] = arith.subi %[[K]], %{{.*}} : index
// CHECK:         tensor.extract %w[%{{.*}}, %{{.*}}, %[[KH]], %{{.*}}] : tensor<2x3x2x2xf32>
// CHECK:         %[[C:.*]] = linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%[[S]], %{{.*}} : tensor<1x2x7x7xf32>, tensor<3x2x2x2xf32>) outs(%{{.*}} : tensor<1x3x6x6xf32>)
// CHECK-NEXT:    %[[R:.*]] = tensor.extract_slice %[[C]][0, 0, 0, 0] [1, 3, 5, 5] [1, 1, 1, 1] : tensor<1x3x6x6xf32> to tensor<1x3x5x5xf32>
// CHECK-NEXT:    func.return %[[R]]

// nn.resize2d nearest (half_pixel, round_prefer_floor: rows 0, 0, 1, 1): a gather at constant index tables.
func.func @resize_nearest(%x: tensor<1x1x2x3xf32>) -> tensor<1x1x4x3xf32> {
  %0 = nn.resize2d(%x) {size = array<i64: 4, 3>} : (tensor<1x1x2x3xf32>) -> tensor<1x1x4x3xf32>
  func.return %0 : tensor<1x1x4x3xf32>
}
// CHECK-LABEL: func.func @resize_nearest
// CHECK-NEXT:    %[[ROWS:.*]] = arith.constant dense<[0, 0, 1, 1]> : tensor<4xi64>
// CHECK-NEXT:    %[[COLS:.*]] = arith.constant dense<[0, 1, 2]> : tensor<3xi64>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK:         tensor.extract %x[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x1x2x3xf32>

// nn.resize2d linear (align_corners, rows at 0, 1/3, 2/3, 1): two contractions with interpolation matrices.
func.func @resize_linear(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x2xf32> {
  %0 = nn.resize2d(%x) {size = array<i64: 4, 2>, method = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x2xf32>
  func.return %0 : tensor<1x1x4x2xf32>
}
// CHECK-LABEL: func.func @resize_linear
// CHECK-NEXT:    arith.constant dense<[[1.000000e+00, 0.000000e+00], [0.666666687, 0.333333343], [0.333333343, 0.666666687], [0.000000e+00, 1.000000e+00]]> : tensor<4x2xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK:         arith.constant dense<[[1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>]
