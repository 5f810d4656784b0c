// RUN: xrelay-opt %s -p convert-nn-to-linalg | filecheck %s

// nn.argmax / nn.argmin: a reduction generic for the extreme, then a second one over the same loops
// for the first position holding it (a NaN counts: `cmpf une x, x`), min over `linalg.index`.

func.func @argmax(%x: tensor<2x5xf32>) -> (tensor<2xi64>, tensor<1x5xi64>) {
  %0 = nn.argmax(%x) {axis = array<i64: 1>} : (tensor<2x5xf32>) -> tensor<2xi64>
  %1 = nn.argmin(%x) {axis = array<i64: 0>, keepdims = true, select_last_index = true} : (tensor<2x5xf32>) -> tensor<1x5xi64>
  func.return %0, %1 : tensor<2xi64>, tensor<1x5xi64>
}
// CHECK-LABEL: func.func @argmax
// CHECK:         %[[LOW:.*]] = arith.constant 0xff800000 : f32
// CHECK:         %[[MAX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x5xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[FIVE:.*]] = arith.constant 5 : i64
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %[[MAX]] : tensor<2x5xf32>, tensor<2xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[M:.*]]: f32, %[[ACC:.*]]: i64):
// CHECK-NEXT:      %[[EQ:.*]] = arith.cmpf oeq, %[[X]], %[[M]] : f32
// CHECK-NEXT:      %[[NAN:.*]] = arith.cmpf une, %[[X]], %[[X]] : f32
// CHECK-NEXT:      %[[HIT:.*]] = arith.ori %[[EQ]], %[[NAN]] : i1
// CHECK-NEXT:      %[[I:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[POS:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT:      %[[NONE:.*]] = arith.constant 5 : i64
// CHECK-NEXT:      %[[CAND:.*]] = arith.select %[[HIT]], %[[POS]], %[[NONE]] : i64
// CHECK-NEXT:      %[[R:.*]] = arith.minsi %[[ACC]], %[[CAND]] : i64
// CHECK-NEXT:      linalg.yield %[[R]] : i64
// The last position of the minimum along axis 0, the result back to rank 2.
// CHECK:         arith.minimumf
// CHECK:         %{{.*}} = arith.constant -1 : i64
// CHECK:         arith.maxsi
// CHECK:         tensor.expand_shape
