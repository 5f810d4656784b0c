// RUN: xrelay-opt %s --verify-diagnostics --split-input-file | filecheck %s

// Each verifier error names the op, the operand and the shapes.

func.func @wrong_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = nn.conv2d(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x7x8xf32>
  func.return
}
// CHECK: nn.conv2d: result types (tensor<1x4x7x8xf32>) differ from the inferred (tensor<1x4x8x8xf32>) for operand types (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>)

// -----

func.func @channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  %0 = nn.conv2d(%x, %w) : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}
// CHECK: nn.conv2d: 'weight' [4, 2, 3, 3] (OIHW) has 2 input channels per group, but 'data' [1, 3, 8, 8] (NCHW) has 3 channels in 1 group(s)

// -----

func.func @nhwc_hwio(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x2x4xf32>) {
  %0 = nn.conv2d(%x, %w) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x8x8x3xf32>, tensor<3x3x2x4xf32>) -> tensor<1x6x6x4xf32>
  func.return
}
// CHECK: nn.conv2d: 'weight' [3, 3, 2, 4] (HWIO) has 2 input channels per group, but 'data' [1, 8, 8, 3] (NHWC) has 3 channels in 1 group(s)

// -----

func.func @broadcast(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  %0 = nn.add(%a, %b) : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return
}
// CHECK: nn.add: 'lhs' [2, 3] and 'rhs' [4, 3] do not broadcast

// -----

func.func @dense(%a: tensor<1x512xf32>, %w: tensor<1000x256xf32>) {
  %0 = nn.dense(%a, %w) : (tensor<1x512xf32>, tensor<1000x256xf32>) -> tensor<1x1000xf32>
  func.return
}
// CHECK: nn.dense: last dim of 'data' [1, 512] must equal dim 1 of 'weight' [1000, 256]

// -----

func.func @batch_norm(%x: tensor<1x4x2x2xf32>, %g: tensor<4xf32>, %v: tensor<3xf32>) {
  %0, %1, %2 = nn.batch_norm(%x, %g, %g, %g, %v) : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>) -> (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return
}
// CHECK: nn.batch_norm: 'moving_var' [3] must be 1-D of size 4 (axis 1 of 'data' [1, 4, 2, 2])

// -----

func.func @reshape(%x: tensor<2x3xf32>) {
  %0 = nn.reshape(%x) {newshape = array<i64: 4, -1>} : (tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return
}
// CHECK: nn.reshape: cannot reshape 'data' [2, 3] to newshape (4, -1)

// -----

func.func @layout(%x: tensor<1x2x3x4xf32>) {
  %0 = nn.layout_transform(%x) {src_layout = "NCHW", dst_layout = "NHWD"} : (tensor<1x2x3x4xf32>) -> tensor<1x3x4x2xf32>
  func.return
}
// CHECK: nn.layout_transform: dst_layout 'NHWD' is not a permutation of 'NCHW'

// -----

func.func @element_types(%a: tensor<2xf32>, %b: tensor<2xf16>) {
  %0 = nn.multiply(%a, %b) : (tensor<2xf32>, tensor<2xf16>) -> tensor<2xf32>
  func.return
}
// CHECK: nn.multiply: operand 'rhs' element type f16 differs from 'lhs' element type f32

// -----

func.func @constant() {
  %0 = "nn.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<3xf32>
  func.return
}
// CHECK: nn.constant: result type tensor<3xf32> differs from value type tensor<2xf32>

// -----

func.func @constant_element_type() {
  %0 = "nn.constant"() {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
  func.return
}
// CHECK: nn.constant: unsupported element type i1 (use f32, f16, f64, i32, i64)

// -----

// Like Relay, softmax, batch_norm and the average pools are defined on float tensors only.
func.func @softmax_of_integers(%x: tensor<2x4xi32>) {
  %0 = nn.softmax(%x) : (tensor<2x4xi32>) -> tensor<2x4xi32>
  func.return
}
// CHECK: nn.softmax: operand 'data' must have a float element type, got i32
