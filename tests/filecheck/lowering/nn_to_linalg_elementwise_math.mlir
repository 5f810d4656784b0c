// RUN: xrelay-opt %s -p convert-nn-to-linalg | filecheck %s
// RUN: xrelay-opt %s -p convert-nn-to-linalg,linalg-bufferize,linalg-to-loops | filecheck %s --check-prefix=LOOPS

// The elementwise math ops lower to one linalg.generic each, with arith/math bodies (math.erf,
// math.powf, arith.maximumf/minimumf, arith.cmpf + arith.select); those bodies go unchanged
// into the scf loops.

func.func @unary(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.erf(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK-LABEL: func.func @unary
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK-NEXT:    %{{.*}} = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xf32>) outs(%[[E]] : tensor<2x3xf32>) {
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[Y:.*]] = math.erf %[[X]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
// LOOPS-LABEL: func.func @unary(%x: memref<2x3xf32>) -> memref<2x3xf32>
// LOOPS:         scf.for
// LOOPS-NEXT:      scf.for
// LOOPS-NEXT:        %[[X:.*]] = memref.load %x
// LOOPS-NEXT:        %[[Y:.*]] = math.erf %[[X]] : f32
// LOOPS-NEXT:        memref.store %[[Y]]

func.func @clip(%x: tensor<2x3xf32>, %i: tensor<4xi32>) -> (tensor<2x3xf32>, tensor<4xi32>) {
  %0 = nn.clip(%x) {a_min = 0.0 : f64, a_max = 6.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = nn.clip(%i) {a_min = -1.5 : f64, a_max = 1.0e10 : f64} : (tensor<4xi32>) -> tensor<4xi32>
  func.return %0, %1 : tensor<2x3xf32>, tensor<4xi32>
}
// Float clip is min(max(x, a_min), a_max); on i32 the bounds are the integers inside
// [-1.5, 1e10]: -1 and the largest i32.
// CHECK-LABEL: func.func @clip
// CHECK:           %[[LO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %{{.*}}, %[[LO]] : f32
// CHECK-NEXT:      %[[HI:.*]] = arith.constant 6.000000e+00 : f32
// CHECK-NEXT:      %[[R:.*]] = arith.minimumf %[[M]], %[[HI]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:           %[[ILO:.*]] = arith.constant -1 : i32
// CHECK-NEXT:      %[[IM:.*]] = arith.maxsi %{{.*}}, %[[ILO]] : i32
// CHECK-NEXT:      %[[IHI:.*]] = arith.constant 2147483647 : i32
// CHECK-NEXT:      %[[IR:.*]] = arith.minsi %[[IM]], %[[IHI]] : i32
// CHECK-NEXT:      linalg.yield %[[IR]] : i32

func.func @relus(%x: tensor<1x3x2xf32>, %a: tensor<3xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>) {
  %0 = nn.leaky_relu(%x) {alpha = 0.25 : f64} : (tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  %1 = nn.prelu(%x, %a) : (tensor<1x3x2xf32>, tensor<3xf32>) -> tensor<1x3x2xf32>
  func.return %0, %1 : tensor<1x3x2xf32>, tensor<1x3x2xf32>
}
// leaky_relu and prelu: x > 0 ? x : alpha * x, prelu's alpha read along axis 1.
// CHECK-LABEL: func.func @relus
// CHECK:         ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[A:.*]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT:      %[[AX:.*]] = arith.mulf %[[X]], %[[A]] : f32
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[C:.*]] = arith.cmpf ogt, %[[X]], %[[Z]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[C]], %[[X]], %[[AX]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %a : tensor<1x3x2xf32>, tensor<3xf32>)
// CHECK-NEXT:    ^bb0(%[[X2:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[SX:.*]] = arith.mulf %[[X2]], %[[S]] : f32
// CHECK-NEXT:      %[[Z2:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[C2:.*]] = arith.cmpf ogt, %[[X2]], %[[Z2]] : f32
// CHECK-NEXT:      arith.select %[[C2]], %[[X2]], %[[SX]] : f32
// LOOPS-LABEL: func.func @relus
// LOOPS:           arith.cmpf ogt
// LOOPS-NEXT:      arith.select

func.func @binary(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %i: tensor<3xi32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xi32>) {
  %0 = nn.power(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = nn.maximum(%0, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = nn.minimum(%i, %i) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xi32>
}
// Broadcasting binary ops. power is math.powf of |x|, the sign and NaN of a negative base (or
// -0.0) written out: compilers may expand math.powf as exp(y * log(x)), NaN for any x < 0.
// maximum is arith.maximumf, integer minimum arith.minsi.
// CHECK-LABEL: func.func @binary
// CHECK:         affine_map<(d0, d1) -> (d1)>{{.*}} ins(%x, %y : tensor<2x3xf32>, tensor<3xf32>)
// CHECK-NEXT:    ^bb0(%[[B:.*]]: f32, %[[P:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ABS:.*]] = math.absf %[[B]] : f32
// CHECK-NEXT:      %[[POW:.*]] = math.powf %[[ABS]], %[[P]] : f32
// CHECK-NEXT:      %[[FL:.*]] = math.floor %[[P]] : f32
// CHECK-NEXT:      %[[INTEGRAL:.*]] = arith.cmpf oeq, %[[FL]], %[[P]] : f32
// CHECK-NEXT:      %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[H:.*]] = arith.mulf %[[P]], %[[HALF]] : f32
// CHECK-NEXT:      %[[FH:.*]] = math.floor %[[H]] : f32
// CHECK-NEXT:      %[[ODD:.*]] = arith.cmpf one, %[[FH]], %[[H]] : f32
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %[[POW]] : f32
// CHECK-NEXT:      %[[SIGNED:.*]] = arith.select %[[ODD]], %[[NEG]], %[[POW]] : f32
// CHECK-NEXT:      %[[NAN:.*]] = arith.constant 0x7fc00000 : f32
// CHECK-NEXT:      %[[ONNEG:.*]] = arith.select %[[INTEGRAL]], %[[SIGNED]], %[[NAN]] : f32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[SIGN:.*]] = math.copysign %[[ONE]], %[[B]] : f32
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[ISNEG:.*]] = arith.cmpf olt, %[[SIGN]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[ISNEG]], %[[ONNEG]], %[[POW]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:           arith.maximumf
// CHECK:           arith.minsi %{{.*}}, %{{.*}} : i32
// CHECK-NOT:     nn.
