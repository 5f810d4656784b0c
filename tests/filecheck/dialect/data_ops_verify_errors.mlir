// RUN: xrelay-opt %s --verify-diagnostics --split-input-file | filecheck %s

// The data-movement ops' verifier errors name the op, the operand and the shapes.

func.func @concatenate_mismatch(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) {
  %0 = nn.concatenate(%x, %y) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<5x3xf32>
  func.return
}
// CHECK: nn.concatenate: operand 'data #1' [3, 4] does not match 'data #0' [2, 3] outside axis 0

// -----

func.func @concatenate_element_type(%x: tensor<2x3xf32>, %y: tensor<2x3xi64>) {
  %0 = nn.concatenate(%x, %y) : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<4x3xf32>
  func.return
}
// CHECK: nn.concatenate: operand 'data #1' element type i64 differs from 'data #0' element type f32

// -----

func.func @split_indices(%x: tensor<2x5xf32>) {
  %0, %1 = nn.split(%x) {indices_or_sections = array<i64: 3, 2>, axis = 1 : i64} : (tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x2xf32>)
  func.return
}
// CHECK: nn.split: indices_or_sections (3, 2) must increase strictly inside (0, 5) (axis 1 of 'data' [2, 5])

// -----

func.func @split_result_count(%x: tensor<2x5xf32>) {
  %0, %1 = nn.split(%x) {indices_or_sections = array<i64: 1, 3>, axis = 1 : i64} : (tensor<2x5xf32>) -> (tensor<2x1xf32>, tensor<2x4xf32>)
  func.return
}
// CHECK: nn.split: result types (tensor<2x1xf32>, tensor<2x4xf32>) differ from the inferred (tensor<2x1xf32>, tensor<2x2xf32>, tensor<2x2xf32>) for operand types (tensor<2x5xf32>)

// -----

func.func @strided_slice_empty(%x: tensor<2x5xf32>) {
  %0 = nn.strided_slice(%x) {begin = array<i64: 3>, end = array<i64: 1>, axes = array<i64: 1>} : (tensor<2x5xf32>) -> tensor<2x0xf32>
  func.return
}
// CHECK: nn.strided_slice: empty slice 3:1:1 of axis 1 of 'data' [2, 5]

// -----

func.func @take_float_indices(%x: tensor<2x5xf32>, %i: tensor<3xf32>) {
  %0 = nn.take(%x, %i) {axis = 1 : i64} : (tensor<2x5xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return
}
// CHECK: nn.take: operand 'indices' must have an integer element type, got f32

// -----

func.func @take_mode(%x: tensor<2x5xf32>, %i: tensor<3xi32>) {
  %0 = nn.take(%x, %i) {mode = "nan"} : (tensor<2x5xf32>, tensor<3xi32>) -> tensor<3xf32>
  func.return
}
// CHECK: nn.take: mode must be one of clip, wrap, fast, got 'nan'

// -----

func.func @pad_reflect_too_wide(%x: tensor<2x3xf32>) {
  %0 = nn.pad(%x) {pad_width = array<i64: 0, 0, 3, 0>, pad_mode = "reflect"} : (tensor<2x3xf32>) -> tensor<2x6xf32>
  func.return
}
// CHECK: nn.pad: reflect padding (3, 0) of axis 1 must be smaller than its size in 'data' [2, 3]

// -----

func.func @pad_width_count(%x: tensor<2x3xf32>) {
  %0 = nn.pad(%x) {pad_width = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return
}
// CHECK: nn.pad: pad_width has 2 values; 'data' [2, 3] needs 2 per axis (before, after)

// -----

func.func @broadcast_to(%x: tensor<2x3xf32>) {
  %0 = nn.broadcast_to(%x) {shape = array<i64: 4, 3>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return
}
// CHECK: nn.broadcast_to: 'data' [2, 3] does not broadcast to shape [4, 3]

// -----

func.func @squeeze_not_one(%x: tensor<1x3xf32>) {
  %0 = nn.squeeze(%x) {axis = array<i64: 1>} : (tensor<1x3xf32>) -> tensor<1xf32>
  func.return
}
// CHECK: nn.squeeze: axis 1 of 'data' [1, 3] has size 3, not 1

// -----

func.func @batch_matmul_k(%x: tensor<2x3x4xf32>, %y: tensor<2x5x3xf32>) {
  %0 = nn.batch_matmul(%x, %y) : (tensor<2x3x4xf32>, tensor<2x5x3xf32>) -> tensor<2x3x5xf32>
  func.return
}
// CHECK: nn.batch_matmul: 'x' [2, 3, 4] (transpose_a=False) and 'y' [2, 5, 3] (transpose_b=True) disagree on the reduced size (4 vs 3)

// -----

func.func @global_max_pool2d_rank(%x: tensor<2x3x4xf32>) {
  %0 = nn.global_max_pool2d(%x) : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  func.return
}
// CHECK: nn.global_max_pool2d: operand 'data' must have rank 4, got shape [2, 3, 4]
