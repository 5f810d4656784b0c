// RUN: xrelay-opt %s --opt-level 3 -p 'convert-layout{desired-layouts="nn.conv2d=NHWC:HWIO"}' | filecheck %s --check-prefix=NHWC
// RUN: xrelay-opt %s --opt-level 3 -p 'convert-layout{desired-layouts="nn.conv2d=NHWC:HWIO"},convert-layout{desired-layouts="nn.conv2d=NHWC:HWIO"}' | filecheck %s --check-prefix=NHWC
// RUN: xrelay-opt %s --opt-level 3 -p 'convert-layout{desired-layouts="nn.conv2d=NHWC:HWIO"},convert-layout{desired-layouts="nn.conv2d=NCHW:OIHW"}' | filecheck %s --check-prefix=BACK

// ShuffleNet's channel shuffle between two convs: reshape (N, g, C/g, H, W), swap g and C/g,
// reshape back. In NHWC it stays there: reshape (N, H, W, g, C/g), swap the last two axes,
// reshape back; the only transforms are the input's, the weights' and the result's. A second run
// adds nothing; converting back to NCHW gives the input program.
func.func @shuffle(%x: tensor<1x6x4x4xf32>, %w1: tensor<6x6x1x1xf32>, %w2: tensor<6x6x1x1xf32>) -> tensor<1x6x4x4xf32> {
  %c1 = nn.conv2d(%x, %w1) : (tensor<1x6x4x4xf32>, tensor<6x6x1x1xf32>) -> tensor<1x6x4x4xf32>
  %a = nn.reshape(%c1) {newshape = array<i64: 1, 2, 3, 4, 4>} : (tensor<1x6x4x4xf32>) -> tensor<1x2x3x4x4xf32>
  %t = nn.transpose(%a) {axes = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x2x3x4x4xf32>) -> tensor<1x3x2x4x4xf32>
  %b = nn.reshape(%t) {newshape = array<i64: 1, 6, 4, 4>} : (tensor<1x3x2x4x4xf32>) -> tensor<1x6x4x4xf32>
  %c2 = nn.conv2d(%b, %w2) : (tensor<1x6x4x4xf32>, tensor<6x6x1x1xf32>) -> tensor<1x6x4x4xf32>
  func.return %c2 : tensor<1x6x4x4xf32>
}

// NHWC-LABEL: func.func @shuffle(%x: tensor<1x6x4x4xf32>, %w1: tensor<6x6x1x1xf32>, %w2: tensor<6x6x1x1xf32>) -> tensor<1x6x4x4xf32> {
// NHWC-NEXT:    %0 = nn.layout_transform(%x) {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x6x4x4xf32>) -> tensor<1x4x4x6xf32>
// NHWC-NEXT:    %1 = nn.layout_transform(%w1) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<6x6x1x1xf32>) -> tensor<1x1x6x6xf32>
// NHWC-NEXT:    %c1 = nn.conv2d(%0, %1) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x4x4x6xf32>
// NHWC-NEXT:    %a = nn.reshape(%c1) {newshape = array<i64: 1, 4, 4, 2, 3>} : (tensor<1x4x4x6xf32>) -> tensor<1x4x4x2x3xf32>
// NHWC-NEXT:    %t = nn.transpose(%a) {axes = array<i64: 0, 1, 2, 4, 3>} : (tensor<1x4x4x2x3xf32>) -> tensor<1x4x4x3x2xf32>
// NHWC-NEXT:    %b = nn.reshape(%t) {newshape = array<i64: 1, 4, 4, 6>} : (tensor<1x4x4x3x2xf32>) -> tensor<1x4x4x6xf32>
// NHWC-NEXT:    %2 = nn.layout_transform(%w2) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<6x6x1x1xf32>) -> tensor<1x1x6x6xf32>
// NHWC-NEXT:    %c2 = nn.conv2d(%b, %2) {data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x4x4x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x4x4x6xf32>
// NHWC-NEXT:    %3 = nn.layout_transform(%c2) {src_layout = "NHWC", dst_layout = "NCHW"} : (tensor<1x4x4x6xf32>) -> tensor<1x6x4x4xf32>
// NHWC-NEXT:    func.return %3 : tensor<1x6x4x4xf32>
// NHWC-NEXT:  }

// BACK-LABEL: func.func @shuffle(%x: tensor<1x6x4x4xf32>, %w1: tensor<6x6x1x1xf32>, %w2: tensor<6x6x1x1xf32>) -> tensor<1x6x4x4xf32> {
// BACK-NEXT:    %c1 = nn.conv2d(%x, %w1) : (tensor<1x6x4x4xf32>, tensor<6x6x1x1xf32>) -> tensor<1x6x4x4xf32>
// BACK-NEXT:    %a = nn.reshape(%c1) {newshape = array<i64: 1, 2, 3, 4, 4>} : (tensor<1x6x4x4xf32>) -> tensor<1x2x3x4x4xf32>
// BACK-NEXT:    %t = nn.transpose(%a) {axes = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x2x3x4x4xf32>) -> tensor<1x3x2x4x4xf32>
// BACK-NEXT:    %b = nn.reshape(%t) {newshape = array<i64: 1, 6, 4, 4>} : (tensor<1x3x2x4x4xf32>) -> tensor<1x6x4x4xf32>
// BACK-NEXT:    %c2 = nn.conv2d(%b, %w2) : (tensor<1x6x4x4xf32>, tensor<6x6x1x1xf32>) -> tensor<1x6x4x4xf32>
// BACK-NEXT:    func.return %c2 : tensor<1x6x4x4xf32>
// BACK-NEXT:  }
