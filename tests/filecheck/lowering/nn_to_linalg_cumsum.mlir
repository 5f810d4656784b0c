// RUN: xrelay-opt %s -p convert-nn-to-linalg | filecheck %s

// nn.cumsum: one generic over the result's loops plus a reduction loop k along the axis, adding
// x[k] where k <= i (k > i for exclusive and reverse), from a zero-filled init.

func.func @cumsum(%x: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) {
  %0 = nn.cumsum(%x) {axis = 1 : i64} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %1 = nn.cumsum(%x) {axis = 0 : i64, exclusive = true, reverse = true} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %0, %1 : tensor<2x5xf32>, tensor<2x5xf32>
}
// CHECK-LABEL: func.func @cumsum
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x5xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[K:.*]] = linalg.index 2 : index
// CHECK-NEXT:      %[[I:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[TAKEN:.*]] = arith.cmpi sle, %[[K]], %[[I]] : index
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[V:.*]] = arith.select %[[TAKEN]], %[[X]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC]], %[[V]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
// CHECK:           arith.cmpi sgt
