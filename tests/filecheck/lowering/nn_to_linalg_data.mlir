// RUN: xrelay-opt %s -p convert-nn-to-linalg | filecheck %s

// The data-movement ops, nn.batch_matmul and nn.global_max_pool2d in the linalg forms upstream
// frontends write (see lowering/to_linalg/shape.py).

func.func @concat_split(%x: tensor<2x3xf32>, %y: tensor<2x5xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x4xf32>) {
  %c = nn.concatenate(%x, %y) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %s:2 = nn.split(%y) {indices_or_sections = array<i64: 1>, axis = -1 : i64} : (tensor<2x5xf32>) -> (tensor<2x1xf32>, tensor<2x4xf32>)
  func.return %c, %s#0, %s#1 : tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x4xf32>
}
func.func @slices(%x: tensor<4x6xf32>) -> (tensor<2x3xf32>, tensor<4x2xf32>) {
  %a = nn.strided_slice(%x) {begin = array<i64: 1, 0>, end = array<i64: 100, -1>, strides = array<i64: 2, 2>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
  %b = nn.strided_slice(%x) {begin = array<i64: -1>, end = array<i64: 2>, strides = array<i64: -2>, axes = array<i64: 1>} : (tensor<4x6xf32>) -> tensor<4x2xf32>
  func.return %a, %b : tensor<2x3xf32>, tensor<4x2xf32>
}
func.func @take(%x: tensor<4x6xf32>, %i: tensor<3xi64>) -> tensor<4x3xf32> {
  %t = nn.take(%x, %i) {axis = 1 : i64} : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  func.return %t : tensor<4x3xf32>
}
func.func @pads(%x: tensor<2x3xf32>) -> (tensor<2x6xf32>, tensor<4x3xf32>) {
  %p = nn.pad(%x) {pad_width = array<i64: 0, 0, 1, 2>, pad_value = 5.0e-01 : f64} : (tensor<2x3xf32>) -> tensor<2x6xf32>
  %q = nn.pad(%x) {pad_width = array<i64: 1, 1, 0, 0>, pad_mode = "reflect"} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %p, %q : tensor<2x6xf32>, tensor<4x3xf32>
}
func.func @broadcast_squeeze(%x: tensor<1x3x1xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>) {
  %b = nn.broadcast_to(%x) {shape = array<i64: 2, 3, 4>} : (tensor<1x3x1xf32>) -> tensor<2x3x4xf32>
  %s = nn.squeeze(%x) : (tensor<1x3x1xf32>) -> tensor<3xf32>
  func.return %b, %s : tensor<2x3x4xf32>, tensor<3xf32>
}
func.func @batch_matmul(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>, %t: tensor<2x4x3xf32>, %u: tensor<2x4x5xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>) {
  %m = nn.batch_matmul(%x, %y) : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
  %n = nn.batch_matmul(%t, %u) {transpose_a = true, transpose_b = false} : (tensor<2x4x3xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %m, %n : tensor<2x3x5xf32>, tensor<2x3x5xf32>
}
func.func @matmul_pool(%x: tensor<1x3x4xf32>, %y: tensor<2x5x4xf32>, %z: tensor<1x2x3x3xf32>) -> (tensor<2x3x5xf32>, tensor<1x2x1x1xf32>) {
  %m = nn.batch_matmul(%x, %y) : (tensor<1x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
  %g = nn.global_max_pool2d(%z) : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32>
  func.return %m, %g : tensor<2x3x5xf32>, tensor<1x2x1x1xf32>
}

// concatenate: insert_slices into an empty tensor at running offsets; split: extract_slices.
// CHECK-LABEL: func.func @concat_split
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<2x8xf32>
// CHECK-NEXT:    %[[C1:.*]] = tensor.insert_slice %x into %[[E]][0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x8xf32>
// CHECK-NEXT:    %[[C2:.*]] = tensor.insert_slice %y into %[[C1]][0, 3] [2, 5] [1, 1] : tensor<2x5xf32> into tensor<2x8xf32>
// CHECK-NEXT:    %[[S0:.*]] = tensor.extract_slice %y[0, 0] [2, 1] [1, 1] : tensor<2x5xf32> to tensor<2x1xf32>
// CHECK-NEXT:    %[[S1:.*]] = tensor.extract_slice %y[0, 1] [2, 4] [1, 1] : tensor<2x5xf32> to tensor<2x4xf32>
// CHECK-NEXT:    func.return %[[C2]], %[[S0]], %[[S1]]

// strided_slice: positive strides are an extract_slice (end clamped); a negative stride a gather
// reading start + i * stride.
// CHECK-LABEL: func.func @slices
// CHECK-NEXT:    %[[A:.*]] = tensor.extract_slice %x[1, 0] [2, 3] [2, 2] : tensor<4x6xf32> to tensor<2x3xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4x2xf32>
// CHECK-NEXT:    %[[B:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%[[E]] : tensor<4x2xf32>) {
// CHECK:           %[[I0:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[I1:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[STEP:.*]] = arith.constant -2 : index
// CHECK-NEXT:      %[[M:.*]] = arith.muli %[[I1]], %[[STEP]] : index
// CHECK-NEXT:      %[[START:.*]] = arith.constant 5 : index
// CHECK-NEXT:      %[[J:.*]] = arith.addi %[[M]], %[[START]] : index
// CHECK-NEXT:      %[[V:.*]] = tensor.extract %x[%[[I0]], %[[J]]] : tensor<4x6xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32

// take: the indices are an input read along the result's axis; clip clamps into [0, 5].
// CHECK-LABEL: func.func @take
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%i : tensor<3xi64>) outs(%{{.*}} : tensor<4x3xf32>) {
// CHECK-NEXT:    ^bb0(%[[IDX:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT:      %[[I0:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %{{.*}} = linalg.index 1 : index
// CHECK-NEXT:      %[[I:.*]] = arith.index_cast %[[IDX]] : i64 to index
// CHECK-NEXT:      %[[HI:.*]] = arith.constant 5 : index
// CHECK-NEXT:      %[[LO:.*]] = arith.minsi %[[I]], %[[HI]] : index
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[K:.*]] = arith.maxsi %[[LO]], %[[ZERO]] : index
// CHECK-NEXT:      %[[V:.*]] = tensor.extract %x[%[[I0]], %[[K]]] : tensor<4x6xf32>
// CHECK-NEXT:      linalg.yield %[[V]] : f32

// pad: constant mode is a tensor.pad yielding the value; reflect a gather at (n-1) - |(n-1) - |i - before||.
// CHECK-LABEL: func.func @pads
// CHECK-NEXT:    %[[P:.*]] = tensor.pad %x low[0, 1] high[0, 2] {
// CHECK-NEXT:    ^bb0(%{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT:      %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      tensor.yield %[[HALF]] : f32
// CHECK-NEXT:    } : tensor<2x3xf32> to tensor<2x6xf32>
// CHECK:           %[[I0:.*]] = linalg.index 0 : index
// CHECK-NEXT:      %[[I1:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[BEFORE:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[I:.*]] = arith.subi %[[I0]], %[[BEFORE]] : index
// CHECK-NEXT:      %[[LAST:.*]] = arith.constant 1 : index
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[NEG:.*]] = arith.subi %[[ZERO]], %[[I]] : index
// CHECK-NEXT:      %[[ABS:.*]] = arith.maxsi %[[I]], %[[NEG]] : index
// CHECK-NEXT:      %[[D:.*]] = arith.subi %[[LAST]], %[[ABS]] : index
// CHECK-NEXT:      %[[ND:.*]] = arith.subi %[[ZERO]], %[[D]] : index
// CHECK-NEXT:      %[[ABSD:.*]] = arith.maxsi %[[D]], %[[ND]] : index
// CHECK-NEXT:      %[[R:.*]] = arith.subi %[[LAST]], %[[ABSD]] : index
// CHECK-NEXT:      %[[V:.*]] = tensor.extract %x[%[[R]], %[[I1]]] : tensor<2x3xf32>

// broadcast_to: a copy generic reading the broadcast axes at 0; squeeze: one collapse_shape.
// CHECK-LABEL: func.func @broadcast_squeeze
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<1x3x1xf32>)
// CHECK:         tensor.collapse_shape %x {{\[\[}}0 : i64, 1 : i64, 2 : i64]] : tensor<1x3x1xf32> into tensor<3xf32>

// batch_matmul with equal batches: upstream's linalg.batch_matmul from zeros, a transposed operand
// through its indexing_maps (y as [B, N, K] by default; x as [B, K, M] with transpose_a).
// CHECK-LABEL: func.func @batch_matmul
// CHECK:         linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%x, %y : tensor<2x3x4xf32>, tensor<2x5x4xf32>) outs(%{{.*}} : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
// CHECK:         linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%t, %u
// CHECK-NOT:     linalg.generic

// batch_matmul broadcasting a batch of 1 (upstream's batch_matmul cannot read index 0): a
// contraction generic over (b, m, n, k) from zeros, x's batch of 1 read at 0, y as [B, N, K];
// global_max_pool2d: a max over H and W from -inf.
// CHECK-LABEL: func.func @matmul_pool
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %y : tensor<1x3x4xf32>, tensor<2x5x4xf32>)
// CHECK:         %[[NEGINF:.*]] = arith.constant 0xff800000 : f32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%z : tensor<1x2x3x3xf32>)
// CHECK:           arith.maximumf
