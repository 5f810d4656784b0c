// RUN: xrelay-opt %s -p convert-nn-to-linalg | filecheck %s

// nn.scatter_nd (update): a reduction generic over the result's loops and the updates' positions j
// keeps the last j whose coordinates are this element's, then an elementwise generic reads that
// update (tensor.extract) or the data.

func.func @scatter(%data: tensor<4x2xf32>, %indices: tensor<1x3xi64>, %updates: tensor<3x2xf32>) -> tensor<4x2xf32> {
  %0 = nn.scatter_nd(%data, %indices, %updates) : (tensor<4x2xf32>, tensor<1x3xi64>, tensor<3x2xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}
// CHECK-LABEL: func.func @scatter
// CHECK:         %[[LAST:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%updates : tensor<3x2xf32>) outs(%{{.*}} : tensor<4x2xi64>)
// CHECK:           %[[RAW:.*]] = tensor.extract %indices[%{{.*}}, %{{.*}}] : tensor<1x3xi64>
// CHECK:           arith.cmpi slt, %[[RAW]]
// CHECK:           %[[J:.*]] = linalg.index 2 : index
// CHECK:           arith.maxsi
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%data, %[[LAST]] : tensor<4x2xf32>, tensor<4x2xi64>)
// CHECK:           tensor.extract %updates[%{{.*}}, %{{.*}}] : tensor<3x2xf32>
// CHECK:           arith.select
