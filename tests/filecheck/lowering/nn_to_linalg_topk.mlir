// RUN: xrelay-opt %s -p convert-nn-to-linalg | filecheck %s

// nn.topk: each element's rank along the axis (a reduction over j counting the larger elements and
// the equal ones at smaller positions), then the values and the positions whose rank is each r.

func.func @topk(%x: tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>) {
  %0, %1 = nn.topk(%x) {k = 3 : i64} : (tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  func.return %0, %1 : tensor<2x3xf32>, tensor<2x3xi64>
}
// CHECK-LABEL: func.func @topk
// CHECK:         %[[RANKS:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %x : tensor<2x5xf32>, tensor<2x5xf32>) outs(%{{.*}} : tensor<2x5xi64>)
// CHECK-NEXT:    ^bb0(%[[XI:.*]]: f32, %[[XJ:.*]]: f32, %{{.*}}: i64):
// CHECK-NEXT:      %{{.*}} = arith.cmpf ogt, %[[XJ]], %[[XI]] : f32
// CHECK-NEXT:      %{{.*}} = arith.cmpf oeq, %[[XJ]], %[[XI]] : f32
// CHECK:           arith.cmpi slt
// CHECK:         %[[VALUES:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[RANKS]], %x : tensor<2x5xi64>, tensor<2x5xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK:           arith.cmpi eq
// CHECK:           arith.addf
// CHECK:         linalg.generic {{.*}} ins(%[[RANKS]], %x : tensor<2x5xi64>, tensor<2x5xf32>) outs(%{{.*}} : tensor<2x3xi64>)
// CHECK:           arith.addi
