// RUN: xrelay-opt %s -p convert-nn-to-linalg | filecheck %s

// Max pooling: -inf padding (tensor.pad), a -inf init, a shape-only 3x3 window operand and upstream's
// linalg.pooling_nchw_max (xrelay's definition, max(acc, x); xDSL's yields max(x, window)).
func.func @max_pool(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %0 = nn.max_pool2d(%x) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  func.return %0 : tensor<1x2x2x2xf32>
}
// CHECK-LABEL: func.func @max_pool
// CHECK-NEXT:    %[[P:.*]] = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
// CHECK-NEXT:    ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT:      %[[NINF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:      tensor.yield %[[NINF]] : f32
// CHECK-NEXT:    } : tensor<1x2x4x4xf32> to tensor<1x2x6x6xf32>
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x2x2xf32>)
// CHECK-NEXT:    %[[WIN:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK-NEXT:    %[[R:.*]] = linalg.pooling_nchw_max {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%[[P]], %[[WIN]] : tensor<1x2x6x6xf32>, tensor<3x3xf32>) outs(%[[INIT]] : tensor<1x2x2x2xf32>)
// CHECK:         func.return %[[R]]

// Average pooling: a window sum, then a divide by the per-position count of data taps (a constant).
func.func @avg_pool(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  %0 = nn.avg_pool2d(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>} : (tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  func.return %0 : tensor<1x1x2x2xf32>
}
// CHECK-LABEL: func.func @avg_pool
// CHECK:         tensor.pad %x low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK:         %[[SUM:.*]] = linalg.pooling_nchw_sum {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
// CHECK:         %[[COUNT:.*]] = arith.constant dense<{{\[\[}}4.000000e+00, 2.000000e+00], [2.000000e+00, 1.000000e+00]]> : tensor<2x2xf32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]{{.*}} ins(%[[SUM]], %[[COUNT]]
// CHECK:           arith.divf

// Global average pooling in NHWC: H and W are the reductions, kept as size-1 axes; then * 1/6.
func.func @global_avg_pool(%x: tensor<1x3x2x4xf32>) -> tensor<1x1x1x4xf32> {
  %0 = nn.global_avg_pool2d(%x) {layout = "NHWC"} : (tensor<1x3x2x4xf32>) -> tensor<1x1x1x4xf32>
  func.return %0 : tensor<1x1x1x4xf32>
}
// CHECK-LABEL: func.func @global_avg_pool
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
// CHECK:           arith.addf
// CHECK:         arith.constant 0.166666672 : f32
// CHECK-NEXT:    arith.mulf
