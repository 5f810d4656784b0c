// RUN: xrelay-opt %s --opt-level 3 -p scale-into-conv-weight | filecheck %s

// A squeeze-excitation gate %g (one value per channel, computed at run time) scaling the data of a
// 1x1 convolution: the gate scales the weight's input channels instead, reshaped along its I axis.
func.func @gate(%x: tensor<1x3x3x4xf32>, %g: tensor<1x1x1x4xf32>) -> tensor<1x3x3x2xf32> {
  %w = nn.constant dense<1.0> : tensor<1x1x4x2xf32>
  %s = nn.multiply(%g, %x) : (tensor<1x1x1x4xf32>, tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  %c = nn.conv2d(%s, %w) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x3x3x4xf32>, tensor<1x1x4x2xf32>) -> tensor<1x3x3x2xf32>
  func.return %c : tensor<1x3x3x2xf32>
}

// CHECK-LABEL: func.func @gate(%x: tensor<1x3x3x4xf32>, %g: tensor<1x1x1x4xf32>) -> tensor<1x3x3x2xf32> {
// CHECK-NEXT:    %w = nn.constant dense<1.000000e+00> : tensor<1x1x4x2xf32>
// CHECK-NEXT:    %0 = nn.reshape(%g) {newshape = array<i64: 1, 1, 4, 1>} : (tensor<1x1x1x4xf32>) -> tensor<1x1x4x1xf32>
// CHECK-NEXT:    %1 = nn.multiply(%w, %0) : (tensor<1x1x4x2xf32>, tensor<1x1x4x1xf32>) -> tensor<1x1x4x2xf32>
// CHECK-NEXT:    %c = nn.conv2d(%x, %1) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x3x3x4xf32>, tensor<1x1x4x2xf32>) -> tensor<1x3x3x2xf32>
// CHECK-NEXT:    func.return %c : tensor<1x3x3x2xf32>
// CHECK-NEXT:  }

// Left alone: a weight with more elements than the data (the default ratio 1), a grouped
// convolution, a scale varying along H, and a product with another reader.
func.func @kept(%x: tensor<1x4x2x2xf32>, %g: tensor<1x4x1x1xf32>, %h: tensor<1x1x2x1xf32>)
    -> (tensor<1x8x2x2xf32>, tensor<1x4x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x4x2x2xf32>) {
  %wide = nn.constant dense<1.0> : tensor<8x4x1x1xf32>
  %a = nn.multiply(%x, %g) : (tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x2x2xf32>
  %ca = nn.conv2d(%a, %wide) : (tensor<1x4x2x2xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x2x2xf32>
  %grouped = nn.constant dense<1.0> : tensor<4x1x1x1xf32>
  %b = nn.multiply(%x, %g) : (tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x2x2xf32>
  %cb = nn.conv2d(%b, %grouped) {groups = 4 : i64} : (tensor<1x4x2x2xf32>, tensor<4x1x1x1xf32>) -> tensor<1x4x2x2xf32>
  %small = nn.constant dense<1.0> : tensor<2x4x1x1xf32>
  %c = nn.multiply(%x, %h) : (tensor<1x4x2x2xf32>, tensor<1x1x2x1xf32>) -> tensor<1x4x2x2xf32>
  %cc = nn.conv2d(%c, %small) : (tensor<1x4x2x2xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x2x2xf32>
  %d = nn.multiply(%x, %g) : (tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x2x2xf32>
  %cd = nn.conv2d(%d, %small) : (tensor<1x4x2x2xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x2x2xf32>
  %sum = nn.add(%cd, %cc) : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %ca, %cb, %sum, %d : tensor<1x8x2x2xf32>, tensor<1x4x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x4x2x2xf32>
}

// CHECK-LABEL: func.func @kept(
// CHECK:         %ca = nn.conv2d(%a, %wide)
// CHECK:         %cb = nn.conv2d(%b, %grouped)
// CHECK:         %cc = nn.conv2d(%c, %small)
// CHECK:         %cd = nn.conv2d(%d, %small)
// CHECK-NOT:     nn.reshape
