// RUN: xrelay-opt %s --opt-level 3 -p 'convert-layout{desired-layouts="nn.conv2d=NHWC"}' | filecheck %s --check-prefix=NHWC
// RUN: xrelay-opt %s --opt-level 3 -p 'convert-layout{desired-layouts="nn.conv2d=NHWC:HWIO"},convert-layout{desired-layouts="nn.conv2d=NHWC:HWIO"}' | filecheck %s --check-prefix=NHWC
// RUN: xrelay-opt %s --opt-level 3 -p 'convert-layout{desired-layouts="nn.conv2d=NHWC:HWIO"},convert-layout{desired-layouts="nn.conv2d=NCHW:default"}' | filecheck %s --check-prefix=BACK

// conv -> relu -> conv. The kernel layout "default" of NHWC is HWIO; a second run adds nothing;
// converting back composes every transform with its inverse, leaving the input program.
func.func @conv_relu_conv(%x: tensor<1x2x4x4xf32>, %w1: tensor<3x2x3x3xf32>, %w2: tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %c1 = nn.conv2d(%x, %w1) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32>
  %r = nn.relu(%c1) : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %c2 = nn.conv2d(%r, %w2) : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %c2 : tensor<1x2x4x4xf32>
}

// NHWC-LABEL: func.func @conv_relu_conv(%x: tensor<1x2x4x4xf32>, %w1: tensor<3x2x3x3xf32>, %w2: tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32> {
// NHWC-NEXT:    %0 = nn.layout_transform(%x) {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
// NHWC-NEXT:    %1 = nn.layout_transform(%w1) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<3x2x3x3xf32>) -> tensor<3x3x2x3xf32>
// NHWC-NEXT:    %c1 = nn.conv2d(%0, %1) {padding = array<i64: 1, 1, 1, 1>, data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x2xf32>, tensor<3x3x2x3xf32>) -> tensor<1x4x4x3xf32>
// NHWC-NEXT:    %r = nn.relu(%c1) : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
// NHWC-NEXT:    %2 = nn.layout_transform(%w2) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<2x3x1x1xf32>) -> tensor<1x1x3x2xf32>
// NHWC-NEXT:    %c2 = nn.conv2d(%r, %2) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x3xf32>, tensor<1x1x3x2xf32>) -> tensor<1x4x4x2xf32>
// NHWC-NEXT:    %3 = nn.layout_transform(%c2) {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
// NHWC-NEXT:    func.return %3 : tensor<1x2x4x4xf32>
// NHWC-NEXT:  }

// BACK-LABEL: func.func @conv_relu_conv(%x: tensor<1x2x4x4xf32>, %w1: tensor<3x2x3x3xf32>, %w2: tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32> {
// BACK-NEXT:    %c1 = nn.conv2d(%x, %w1) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32>
// BACK-NEXT:    %r = nn.relu(%c1) : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
// BACK-NEXT:    %c2 = nn.conv2d(%r, %w2) : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>
// BACK-NEXT:    func.return %c2 : tensor<1x2x4x4xf32>
// BACK-NEXT:  }
