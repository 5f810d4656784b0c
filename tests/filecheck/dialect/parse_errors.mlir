// RUN: xrelay-opt %s --parsing-diagnostics --split-input-file | filecheck %s

// Malformed custom forms fail at parse time with an error naming the attribute or the types.

func.func @attr_kind(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = nn.conv2d(%x, %w) {strides = [2, 2]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>
  func.return
}
// CHECK: nn.conv2d: attribute 'strides' must be array<i64: ...>, got [2 : i64, 2 : i64]

// -----

func.func @missing(%x: tensor<2x3xf32>) {
  %0 = nn.layout_transform(%x) {src_layout = "NC"} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return
}
// CHECK: nn.layout_transform: required attribute 'dst_layout' is missing

// -----

func.func @type_count(%x: tensor<2x3xf32>) {
  %0 = nn.relu(%x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}
// CHECK: nn.relu: expected 1 operand type(s) and 1 result type(s), got (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>

// -----

func.func @bool_kind(%x: tensor<1x1x4x4xf32>) {
  %0 = nn.max_pool2d(%x) {ceil_mode = 1 : i64} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return
}
// CHECK: nn.max_pool2d: attribute 'ceil_mode' must be true/false, got 1 : i64

// -----

func.func @hex_length() {
  %c = nn.constant dense<"0x0000C03F0000"> : tensor<2xf32>
  func.return
}
// CHECK: nn.constant: hex payload holds 1 elements, tensor<2xf32> needs 2
