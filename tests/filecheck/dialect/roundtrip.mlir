// RUN: xrelay-opt %s -o %t.out.mlir
// RUN: filecheck %s --input-file %t.out.mlir
// RUN: xrelay-opt < %t.out.mlir | filecheck %s

// Every nn op in the custom form; attributes equal to Relay's defaults are absent and stay absent.

// CHECK-LABEL: func.func @main(%data: tensor<1x3x224x224xf32>, %conv0_weight: tensor<64x3x7x7xf32>, %bn_gamma: tensor<64xf32>) -> tensor<1x10xf32>
func.func @main(%data: tensor<1x3x224x224xf32>, %conv0_weight: tensor<64x3x7x7xf32>, %bn_gamma: tensor<64xf32>) -> tensor<1x10xf32> {
  // CHECK-NEXT: %0 = nn.conv2d(%data, %conv0_weight) {strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>, channels = 64 : i64, kernel_size = array<i64: 7, 7>} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x112x112xf32>
  %0 = nn.conv2d(%data, %conv0_weight) {strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>, channels = 64 : i64, kernel_size = array<i64: 7, 7>} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x112x112xf32>
  // CHECK-NEXT: %1, %2, %3 = nn.batch_norm(%0, %bn_gamma, %bn_gamma, %bn_gamma, %bn_gamma) {epsilon = 2.000000e-05 : f64, scale = false} : (tensor<1x64x112x112xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<1x64x112x112xf32>, tensor<64xf32>, tensor<64xf32>)
  %1, %2, %3 = nn.batch_norm(%0, %bn_gamma, %bn_gamma, %bn_gamma, %bn_gamma) {epsilon = 2.000000e-05 : f64, scale = false} : (tensor<1x64x112x112xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<1x64x112x112xf32>, tensor<64xf32>, tensor<64xf32>)
  // CHECK-NEXT: %4 = nn.relu(%1) : (tensor<1x64x112x112xf32>) -> tensor<1x64x112x112xf32>
  %4 = nn.relu(%1) : (tensor<1x64x112x112xf32>) -> tensor<1x64x112x112xf32>
  // CHECK-NEXT: %5 = nn.max_pool2d(%4) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  %5 = nn.max_pool2d(%4) {pool_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  // CHECK-NEXT: %6 = nn.avg_pool2d(%5) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true, count_include_pad = true} : (tensor<1x64x56x56xf32>) -> tensor<1x64x28x28xf32>
  %6 = nn.avg_pool2d(%5) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true, count_include_pad = true} : (tensor<1x64x56x56xf32>) -> tensor<1x64x28x28xf32>
  // CHECK-NEXT: %7 = nn.global_avg_pool2d(%6) : (tensor<1x64x28x28xf32>) -> tensor<1x64x1x1xf32>
  %7 = nn.global_avg_pool2d(%6) : (tensor<1x64x28x28xf32>) -> tensor<1x64x1x1xf32>
  // CHECK-NEXT: %8 = nn.batch_flatten(%7) : (tensor<1x64x1x1xf32>) -> tensor<1x64xf32>
  %8 = nn.batch_flatten(%7) : (tensor<1x64x1x1xf32>) -> tensor<1x64xf32>
  // CHECK-NEXT: %w = nn.constant dense<1.000000e+00> : tensor<10x64xf32>
  %w = nn.constant dense<1.0> : tensor<10x64xf32>
  // CHECK-NEXT: %9 = nn.dense(%8, %w) {units = 10 : i64} : (tensor<1x64xf32>, tensor<10x64xf32>) -> tensor<1x10xf32>
  %9 = nn.dense(%8, %w) {units = 10 : i64} : (tensor<1x64xf32>, tensor<10x64xf32>) -> tensor<1x10xf32>
  // CHECK-NEXT: %b = nn.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00, 9.000000e+00, 1.000000e+01]> : tensor<10xf32>
  %b = nn.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]> : tensor<10xf32>
  // CHECK-NEXT: %10 = nn.bias_add(%9, %b) {axis = -1 : i64} : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  %10 = nn.bias_add(%9, %b) {axis = -1 : i64} : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  // CHECK-NEXT: %11 = nn.softmax(%10) : (tensor<1x10xf32>) -> tensor<1x10xf32>
  %11 = nn.softmax(%10) : (tensor<1x10xf32>) -> tensor<1x10xf32>
  // CHECK-NEXT: %12 = nn.add(%11, %b) : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  %12 = nn.add(%11, %b) : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  // CHECK-NEXT: %13 = nn.subtract(%12, %11) : (tensor<1x10xf32>, tensor<1x10xf32>) -> tensor<1x10xf32>
  %13 = nn.subtract(%12, %11) : (tensor<1x10xf32>, tensor<1x10xf32>) -> tensor<1x10xf32>
  // CHECK-NEXT: %14 = nn.multiply(%13, %b) : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  %14 = nn.multiply(%13, %b) : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  // CHECK-NEXT: %15 = nn.divide(%14, %b) : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  %15 = nn.divide(%14, %b) : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  // CHECK-NEXT: %16 = nn.sqrt(%15) : (tensor<1x10xf32>) -> tensor<1x10xf32>
  %16 = nn.sqrt(%15) : (tensor<1x10xf32>) -> tensor<1x10xf32>
  // CHECK-NEXT: %17 = nn.negative(%16) : (tensor<1x10xf32>) -> tensor<1x10xf32>
  %17 = nn.negative(%16) : (tensor<1x10xf32>) -> tensor<1x10xf32>
  // CHECK-NEXT: %18 = nn.expand_dims(%bn_gamma) {axis = 1 : i64, num_newaxis = 2 : i64} : (tensor<64xf32>) -> tensor<64x1x1xf32>
  %18 = nn.expand_dims(%bn_gamma) {axis = 1 : i64, num_newaxis = 2 : i64} : (tensor<64xf32>) -> tensor<64x1x1xf32>
  // CHECK-NEXT: %19 = nn.reshape(%5) {newshape = array<i64: 0, -1>} : (tensor<1x64x56x56xf32>) -> tensor<1x200704xf32>
  %19 = nn.reshape(%5) {newshape = array<i64: 0, -1>} : (tensor<1x64x56x56xf32>) -> tensor<1x200704xf32>
  // CHECK-NEXT: %20 = nn.transpose(%5) {axes = array<i64: 0, 2, 3, 1>} : (tensor<1x64x56x56xf32>) -> tensor<1x56x56x64xf32>
  %20 = nn.transpose(%5) {axes = array<i64: 0, 2, 3, 1>} : (tensor<1x64x56x56xf32>) -> tensor<1x56x56x64xf32>
  // CHECK-NEXT: %21 = nn.layout_transform(%conv0_weight) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<64x3x7x7xf32>) -> tensor<7x7x3x64xf32>
  %21 = nn.layout_transform(%conv0_weight) {src_layout = "OIHW", dst_layout = "HWIO"} : (tensor<64x3x7x7xf32>) -> tensor<7x7x3x64xf32>
  // CHECK-NEXT: %22 = nn.layout_transform(%data) {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x3x224x224xf32>) -> tensor<1x224x224x3xf32>
  %22 = nn.layout_transform(%data) {src_layout = "NCHW", dst_layout = "NHWC"} : (tensor<1x3x224x224xf32>) -> tensor<1x224x224x3xf32>
  // CHECK-NEXT: %23 = nn.conv2d(%22, %21) {strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>, data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x224x224x3xf32>, tensor<7x7x3x64xf32>) -> tensor<1x112x112x64xf32>
  %23 = nn.conv2d(%22, %21) {strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>, data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x224x224x3xf32>, tensor<7x7x3x64xf32>) -> tensor<1x112x112x64xf32>
  // CHECK-NEXT: func.return %17 : tensor<1x10xf32>
  func.return %17 : tensor<1x10xf32>
}
