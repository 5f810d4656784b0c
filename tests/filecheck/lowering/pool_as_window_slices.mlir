// RUN: xrelay-opt %s -p convert-nn-to-linalg,pool-as-window-slices -o %t.out.mlir
// RUN: filecheck %s --input-file %t.out.mlir
// RUN: iree-opt < %t.out.mlir | filecheck %s --check-prefix=IREE
// RUN: xrelay-opt %s -p convert-nn-to-linalg,pool-as-window-slices{max_taps=4} | filecheck %s --check-prefix=FOUR

// A 3x3 stride-2 max pool (NHWC): the -inf padding, one strided slice per tap (row i, column j),
// and an elementwise generic folding the taps into the -inf init in upstream's order, kh outer.
func.func @max_pool(%x: tensor<1x7x5x8xf32>) -> tensor<1x4x3x8xf32> {
  %0 = nn.max_pool2d(%x) {layout = "NHWC", pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x7x5x8xf32>) -> tensor<1x4x3x8xf32>
  func.return %0 : tensor<1x4x3x8xf32>
}
// CHECK-LABEL: func.func @max_pool
// CHECK:         %[[P:.*]] = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:         %[[INIT:.*]] = linalg.fill
// CHECK-NOT:     tensor.empty() : tensor<3x3xf32>
// CHECK-NEXT:    %[[T00:.*]] = tensor.extract_slice %[[P]][0, 0, 0, 0] [1, 4, 3, 8] [1, 2, 2, 1] : tensor<1x9x7x8xf32> to tensor<1x4x3x8xf32>
// CHECK-NEXT:    %[[T01:.*]] = tensor.extract_slice %[[P]][0, 0, 1, 0] [1, 4, 3, 8] [1, 2, 2, 1]
// CHECK-NEXT:    %[[T02:.*]] = tensor.extract_slice %[[P]][0, 0, 2, 0] [1, 4, 3, 8] [1, 2, 2, 1]
// CHECK-NEXT:    %[[T10:.*]] = tensor.extract_slice %[[P]][0, 1, 0, 0] [1, 4, 3, 8] [1, 2, 2, 1]
// CHECK-NEXT:    tensor.extract_slice %[[P]][0, 1, 1, 0]
// CHECK-NEXT:    tensor.extract_slice %[[P]][0, 1, 2, 0]
// CHECK-NEXT:    tensor.extract_slice %[[P]][0, 2, 0, 0]
// CHECK-NEXT:    tensor.extract_slice %[[P]][0, 2, 1, 0]
// CHECK-NEXT:    %[[T22:.*]] = tensor.extract_slice %[[P]][0, 2, 2, 0] [1, 4, 3, 8] [1, 2, 2, 1]
// CHECK-NEXT:    %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[T00]], %[[T01]], %[[T02]], %[[T10]], {{.*}}, %[[T22]] : {{.*}}) outs(%[[INIT]] : tensor<1x4x3x8xf32>)
// CHECK-NEXT:    ^bb0(%[[A0:[0-9a-z_]+]]: f32, %[[A1:[0-9a-z_]+]]: f32, %{{[0-9a-z_]+}}: f32, %{{[0-9a-z_]+}}: f32, %{{[0-9a-z_]+}}: f32, %{{[0-9a-z_]+}}: f32, %{{[0-9a-z_]+}}: f32, %{{[0-9a-z_]+}}: f32, %{{[0-9a-z_]+}}: f32, %[[OUT:[0-9a-z_]+]]: f32):
// CHECK-NEXT:      %[[M0:.*]] = arith.maximumf %[[OUT]], %[[A0]] : f32
// CHECK-NEXT:      %[[M1:.*]] = arith.maximumf %[[M0]], %[[A1]] : f32
// CHECK-COUNT-7:   arith.maximumf
// CHECK-NEXT:      linalg.yield
// CHECK:         func.return %[[R]]
// IREE-LABEL:  func.func @max_pool
// IREE-NOT:      linalg.pooling_nhwc_max
// IREE-COUNT-9:  tensor.extract_slice
// IREE:          linalg.generic
// With max_taps=4, the 9-tap window stays a named pooling op.
// FOUR-LABEL:  func.func @max_pool
// FOUR-NOT:      tensor.extract_slice
// FOUR:          linalg.pooling_nhwc_max

// An NCHW 2x2 average pool: a sum of 4 slices (strides on H and W, axes 2 and 3), then the division.
func.func @avg_pool(%x: tensor<1x3x4x6xf32>) -> tensor<1x3x2x3xf32> {
  %0 = nn.avg_pool2d(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x4x6xf32>) -> tensor<1x3x2x3xf32>
  func.return %0 : tensor<1x3x2x3xf32>
}
// CHECK-LABEL: func.func @avg_pool
// CHECK:         tensor.extract_slice %x[0, 0, 0, 0] [1, 3, 2, 3] [1, 1, 2, 2]
// CHECK-NEXT:    tensor.extract_slice %x[0, 0, 0, 1] [1, 3, 2, 3] [1, 1, 2, 2]
// CHECK-NEXT:    tensor.extract_slice %x[0, 0, 1, 0] [1, 3, 2, 3] [1, 1, 2, 2]
// CHECK-NEXT:    tensor.extract_slice %x[0, 0, 1, 1] [1, 3, 2, 3] [1, 1, 2, 2]
// CHECK-NEXT:    linalg.generic
// CHECK-COUNT-4:   arith.addf
// CHECK-NOT:     linalg.pooling
// FOUR-LABEL:  func.func @avg_pool
// FOUR-NOT:      linalg.pooling
// FOUR:          func.return
