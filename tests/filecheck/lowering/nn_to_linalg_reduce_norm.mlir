// RUN: xrelay-opt %s -p convert-nn-to-linalg | filecheck %s
// RUN: xrelay-opt %s -p convert-nn-to-linalg,linalg-bufferize,linalg-to-loops | filecheck %s --check-prefix=LOOPS

func.func @reduce(%x: tensor<2x3x4xf32>, %i: tensor<2x3xi32>) -> (tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<f32>, tensor<2xi32>) {
  %0 = nn.sum(%x) {axis = array<i64: 1>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %1 = nn.mean(%x) {axis = array<i64: 1>, keepdims = true, exclude = true} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  %2 = nn.max(%x) : (tensor<2x3x4xf32>) -> tensor<f32>
  %3 = nn.max(%i) {axis = array<i64: -1>} : (tensor<2x3xi32>) -> tensor<2xi32>
  func.return %0, %1, %2, %3 : tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<f32>, tensor<2xi32>
}
// A reduction is a linalg.generic from a filled init into the kept axes (0 for sum and mean,
// the lowest value for max); mean divides by the count; keepdims is a tensor.expand_shape.
// CHECK-LABEL: func.func @reduce
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK-NEXT:    %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : tensor<2x3x4xf32>) outs(%[[Z]] : tensor<2x4xf32>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[ACC]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// exclude = true: axes 0 and 2 are folded, axis 1 kept.
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK:           %[[N:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT:      arith.divf %{{.*}}, %[[N]] : f32
// CHECK:         %[[K:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0 : i64, 1 : i64, 2 : i64]] output_shape [1, 3, 1] : tensor<3xf32> into tensor<1x3x1xf32>
// CHECK:         arith.constant 0xff800000 : f32
// CHECK:         iterator_types = ["reduction", "reduction", "reduction"]} ins(%x : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK:           arith.maximumf
// CHECK:         arith.constant -2147483648 : i32
// CHECK:           arith.maxsi
// CHECK:         func.return %[[SUM]], %[[K]]
// LOOPS-LABEL: func.func @reduce
// LOOPS:         scf.for
// LOOPS:           memref.load %x
// LOOPS-NEXT:      memref.load
// LOOPS-NEXT:      arith.addf
// LOOPS-NEXT:      memref.store

func.func @norm(%x: tensor<2x5xf32>, %g: tensor<5xf32>, %b: tensor<5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) {
  %0 = nn.log_softmax(%x) : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %1 = nn.layer_norm(%x, %g, %b) {epsilon = 1.0e-6 : f64} : (tensor<2x5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  func.return %0, %1 : tensor<2x5xf32>, tensor<2x5xf32>
}
// log_softmax: max-reduce, sum-reduce of exp(x - max), then x - max - log(sum).
// CHECK-LABEL: func.func @norm
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x5xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%x, %[[MAX]] : tensor<2x5xf32>, tensor<2xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[M:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[X]], %[[M]] : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT:      arith.addf %[[ACC]], %[[E]] : f32
// CHECK:         linalg.generic {{.*}} ins(%x, %[[MAX]], %[[SUM]] : tensor<2x5xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT:    ^bb0(%[[X2:.*]]: f32, %[[M2:.*]]: f32, %[[S2:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[D2:.*]] = arith.subf %[[X2]], %[[M2]] : f32
// CHECK-NEXT:      %[[L:.*]] = math.log %[[S2]] : f32
// CHECK-NEXT:      arith.subf %[[D2]], %[[L]] : f32
// layer_norm: the sum; its mean per row; the sum of squared deviations from the mean; sqrt(sq / n +
// eps) per row; then one generic of one op per step: subtract, divide, gamma, beta.
// CHECK:         %[[T:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x5xf32>)
// CHECK:         %[[MEAN:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[T]] : tensor<2xf32>)
// CHECK:           arith.constant 5.000000e+00 : f32
// CHECK-NEXT:      arith.divf
// CHECK:         %[[Q:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%x, %[[MEAN]] : tensor<2x5xf32>, tensor<2xf32>)
// CHECK:           arith.mulf %[[DEV:.*]], %[[DEV]] : f32
// CHECK:         %[[SD:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[Q]] : tensor<2xf32>)
// CHECK:           arith.constant 1.000000e-06 : f32
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      math.sqrt
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %[[MEAN]], %[[SD]], %g, %b :
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.subf
// CHECK-NEXT:      arith.divf
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.addf

func.func @lrn(%x: tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  %0 = nn.lrn(%x) {size = 3 : i64, bias = 1.0 : f64, alpha = 0.5 : f64} : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  func.return %0 : tensor<1x4x2x2xf32>
}
// lrn, size 3: a tensor.pad with one zero channel on each side, a window-sum generic with a
// 3-long window operand, then x / powf(bias + alpha / size * sum, beta).
// CHECK-LABEL: func.func @lrn
// CHECK-NEXT:    %[[P:.*]] = tensor.pad %x low[0, 1, 0, 0] high[0, 1, 0, 0] {
// CHECK-NEXT:    ^bb0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      tensor.yield %[[ZERO]] : f32
// CHECK-NEXT:    } : tensor<1x4x2x2xf32> to tensor<1x6x2x2xf32>
// CHECK:         %[[W:.*]] = tensor.empty() : tensor<3xf32>
// CHECK:         %[[S:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, (d1 + d4), d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[P]], %[[W]] : tensor<1x6x2x2xf32>, tensor<3xf32>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK-NEXT:      arith.addf %[[ACC]], %[[SQ]] : f32
// CHECK:         linalg.generic {{.*}} ins(%x, %[[S]] : tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[SUM:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[BIAS:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[AS:.*]] = arith.constant 0.166666672 : f32
// CHECK-NEXT:      %[[SC:.*]] = arith.mulf %[[AS]], %[[SUM]] : f32
// CHECK-NEXT:      %[[B:.*]] = arith.addf %[[BIAS]], %[[SC]] : f32
// CHECK-NEXT:      %[[BETA:.*]] = arith.constant 7.500000e-01 : f32
// CHECK-NEXT:      %[[POW:.*]] = math.powf %[[B]], %[[BETA]] : f32
// CHECK-NEXT:      arith.divf %[[X]], %[[POW]] : f32
// CHECK-NOT:     nn.
// LOOPS-LABEL: func.func @lrn
// LOOPS:           math.powf
