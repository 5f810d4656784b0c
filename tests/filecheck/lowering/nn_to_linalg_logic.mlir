// RUN: xrelay-opt %s -p convert-nn-to-linalg | filecheck %s

// Comparisons, logic and nn.where: truth values are i64 0/1 tensors. A comparison is an ordered
// arith.cmpf (or a signed arith.cmpi) selected to 1/0; the logical ops read `x != 0`; nn.where
// selects on `condition != 0`, its three operands broadcast.

func.func @compare(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %i: tensor<3xi32>, %j: tensor<3xi32>) -> (tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x3xi64>, tensor<3xi64>) {
  %0 = nn.equal(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi64>
  %1 = nn.less(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi64>
  %2 = nn.greater_equal(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi64>
  %3 = nn.less_equal(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi64>
  %4 = nn.greater(%i, %j) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi64>
  func.return %0, %1, %2, %3, %4 : tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x3xi64>, tensor<3xi64>
}
// CHECK-LABEL: func.func @compare
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<2x3xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<2x3xi64>)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: i64):
// CHECK-NEXT:      %[[C:.*]] = arith.cmpf oeq, %[[A]], %[[B]] : f32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[C]], %[[ONE]], %[[ZERO]] : i64
// CHECK-NEXT:      linalg.yield %[[R]] : i64
// CHECK:         arith.cmpf olt
// CHECK:         arith.cmpf oge
// CHECK:         arith.cmpf ole
// CHECK:         arith.cmpi sgt, %{{.*}}, %{{.*}} : i32

func.func @logic(%a: tensor<4xi64>, %b: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) {
  %0 = nn.logical_and(%a, %b) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = nn.logical_or(%a, %b) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %2 = nn.logical_xor(%a, %b) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %3 = nn.logical_not(%a) : (tensor<4xi64>) -> tensor<4xi64>
  func.return %0, %1, %2, %3 : tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>
}
// CHECK-LABEL: func.func @logic
// CHECK:         ^bb0(%[[A:.*]]: i64, %[[B:.*]]: i64, %{{.*}}: i64):
// CHECK-NEXT:      %[[Z0:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      %[[TA:.*]] = arith.cmpi ne, %[[A]], %[[Z0]] : i64
// CHECK-NEXT:      %[[Z1:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      %[[TB:.*]] = arith.cmpi ne, %[[B]], %[[Z1]] : i64
// CHECK-NEXT:      %[[AND:.*]] = arith.andi %[[TA]], %[[TB]] : i1
// CHECK:         arith.ori %{{.*}}, %{{.*}} : i1
// CHECK:         arith.xori %{{.*}}, %{{.*}} : i1
// CHECK:         ^bb0(%[[N:.*]]: i64, %{{.*}}: i64):
// CHECK-NEXT:      %[[NZ:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      %{{.*}} = arith.cmpi eq, %[[N]], %[[NZ]] : i64

func.func @where(%c: tensor<1x3xi64>, %x: tensor<2x3xf32>, %y: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %0 = nn.where(%c, %x, %y) : (tensor<1x3xi64>, tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK-LABEL: func.func @where
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c, %x, %y : tensor<1x3xi64>, tensor<2x3xf32>, tensor<2x1xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-NEXT:    ^bb0(%[[C:.*]]: i64, %[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0 : i64
// CHECK-NEXT:      %[[T:.*]] = arith.cmpi ne, %[[C]], %[[Z]] : i64
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[T]], %[[X]], %[[Y]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
