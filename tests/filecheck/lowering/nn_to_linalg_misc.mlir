// RUN: xrelay-opt %s -p convert-nn-to-linalg | filecheck %s

func.func @bn(%x: tensor<1x2x2x2xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>) -> (tensor<1x2x2x2xf32>, tensor<2xf32>) {
  %0, %1, %2 = nn.batch_norm(%x, %g, %b, %m, %v) {epsilon = 1.0e-3 : f64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>)
  func.return %0, %1 : tensor<1x2x2x2xf32>, tensor<2xf32>
}
// batch_norm: one generic, per-channel operands read along axis 1; results 2 and 3 are the
// moving mean and variance themselves, as in Relay.
// CHECK-LABEL: func.func @bn
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<1x2x2x2xf32>
// CHECK-NEXT:    %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %m, %v, %g, %b : {{.*}}) outs(%[[E]] : tensor<1x2x2x2xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[M:.*]]: f32, %[[V:.*]]: f32, %[[G:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[X]], %[[M]] : f32
// CHECK-NEXT:      %[[EPS:.*]] = arith.constant 1.000000e-03 : f32
// CHECK-NEXT:      %[[VE:.*]] = arith.addf %[[V]], %[[EPS]] : f32
// CHECK-NEXT:      %[[S:.*]] = math.sqrt %[[VE]] : f32
// CHECK-NEXT:      %[[N:.*]] = arith.divf %[[D]], %[[S]] : f32
// CHECK-NEXT:      %[[NG:.*]] = arith.mulf %[[N]], %[[G]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.addf %[[NG]], %[[B]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:         func.return %[[Y]], %m

func.func @dense_bias_softmax(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = nn.dense(%x, %w) : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %1 = nn.bias_add(%0, %b) {axis = -1 : i64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = nn.softmax(%1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %2 : tensor<2x4xf32>
}
// dense: upstream's linalg.matmul of x and w transposed (its indexing_maps, as upstream prints
// them) from a zero init; bias_add along the last axis; softmax as max-reduce (from -inf),
// exp(x - max), sum-reduce, divide.
// CHECK-LABEL: func.func @dense_bias_softmax
// CHECK:         %[[ZERO:.*]] = linalg.fill
// CHECK-NEXT:    linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%x, %w : tensor<2x3xf32>, tensor<4x3xf32>) outs(%[[ZERO]] : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK:         affine_map<(d0, d1) -> (d1)>{{.*}} ins(%{{.*}}, %b : tensor<2x4xf32>, tensor<4xf32>)
// CHECK:         arith.constant 0xff800000 : f32
// CHECK:         iterator_types = ["parallel", "reduction"]
// CHECK:           arith.maximumf
// CHECK:           arith.subf
// CHECK-NEXT:      math.exp
// CHECK:         iterator_types = ["parallel", "reduction"]
// CHECK:           arith.addf
// CHECK:           arith.divf

func.func @elementwise(%x: tensor<2x3x4xf32>, %y: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %0 = nn.add(%x, %y) : (tensor<2x3x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  %1 = nn.relu(%0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %2 = nn.negative(%1) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %2 : tensor<2x3x4xf32>
}
// Broadcasting reads size-1 axes at index 0 (trailing-aligned); relu is max(x, 0).
// CHECK-LABEL: func.func @elementwise
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK:           arith.addf
// CHECK:           %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      arith.maximumf %{{.*}}, %[[Z]] : f32
// CHECK:           arith.negf

func.func @shapes(%x: tensor<1x2x3x4xf32>) -> (tensor<4x3x2x1xf32>, tensor<1x24xf32>, tensor<1x4x2x3xf32>, tensor<1x2x1x3x4xf32>) {
  %0 = nn.transpose(%x) : (tensor<1x2x3x4xf32>) -> tensor<4x3x2x1xf32>
  %1 = nn.batch_flatten(%x) : (tensor<1x2x3x4xf32>) -> tensor<1x24xf32>
  %2 = nn.reshape(%x) {newshape = array<i64: 0, 4, 2, -1>} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %3 = nn.expand_dims(%x) {axis = 2 : i64} : (tensor<1x2x3x4xf32>) -> tensor<1x2x1x3x4xf32>
  func.return %0, %1, %2, %3 : tensor<4x3x2x1xf32>, tensor<1x24xf32>, tensor<1x4x2x3xf32>, tensor<1x2x1x3x4xf32>
}
// transpose → linalg.transpose; reshapes → collapse to 1-D, expand to the target.
// CHECK-LABEL: func.func @shapes
// CHECK:         linalg.transpose ins(%x:tensor<1x2x3x4xf32>) outs(%{{.*}}:tensor<4x3x2x1xf32>) permutation = [3, 2, 1, 0]
// CHECK:         tensor.expand_shape %{{.*}} output_shape [1, 24] : tensor<24xf32> into tensor<1x24xf32>
// CHECK:         tensor.expand_shape %{{.*}} output_shape [1, 4, 2, 3] : tensor<24xf32> into tensor<1x4x2x3xf32>
// CHECK:         tensor.expand_shape %{{.*}} output_shape [1, 2, 1, 3, 4] : tensor<24xf32> into tensor<1x2x1x3x4xf32>

func.func @layout(%x: tensor<1x2x3x4xf32>) -> tensor<1x3x4x2xf32> {
  %c = nn.constant dense<1.5> : tensor<1x2x3x4xf32>
  %0 = nn.multiply(%x, %c) : (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32>
  %1 = nn.layout_transform(%0) {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x2x3x4xf32>) -> tensor<1x3x4x2xf32>
  func.return %1 : tensor<1x3x4x2xf32>
}
// Constants become arith.constant with the same dense value; layout_transform is a transpose.
// CHECK-LABEL: func.func @layout
// CHECK-NEXT:    %c = arith.constant dense<1.500000e+00> : tensor<1x2x3x4xf32>
// CHECK:         ins(%x, %c : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>)
// CHECK:         linalg.transpose ins(%{{.*}}:tensor<1x2x3x4xf32>) outs(%{{.*}}:tensor<1x3x4x2xf32>) permutation = [0, 2, 3, 1]
// CHECK-NOT:     nn.


// sigmoid is 1 / (1 + exp(-x)) in one elementwise generic.
func.func @sigmoid(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.sigmoid(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK-LABEL: func.func @sigmoid
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK-NEXT:    ^{{.*}}(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %[[X]] : f32
// CHECK-NEXT:      %[[EXP:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT:      %[[DEN:.*]] = arith.addf %[[ONE]], %[[EXP]] : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.divf %[[ONE]], %[[DEN]] : f32
// CHECK-NEXT:      linalg.yield %[[Y]] : f32
