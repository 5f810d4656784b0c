// RUN: xrelay-opt %s --opt-level 3 -p build -o %t.mlir
// RUN: filecheck %s --input-file %t.mlir
// RUN: xrelay-opt %s --opt-level 3 -p 'build,choose-conv-algorithm{direct_reduction=72}' -o %t.wide.mlir
// RUN: filecheck %s --input-file %t.wide.mlir --check-prefix=WIDE
// RUN: xrelay-run %t.mlir --input data=%S/Inputs/direct_data.npy --input w1=%S/Inputs/direct_w1.npy --input w3=%S/Inputs/direct_w3.npy -o %t.built.npy
// RUN: xrelay-run %t.wide.mlir --input data=%S/Inputs/direct_data.npy --input w1=%S/Inputs/direct_w1.npy --input w3=%S/Inputs/direct_w3.npy -o %t.wide.npy
// RUN: xrelay-run %s --level nn --input data=%S/Inputs/direct_data.npy --input w1=%S/Inputs/direct_w1.npy --input w3=%S/Inputs/direct_w3.npy -o %t.nn.npy
// RUN: python -c "import numpy as np; n = np.load('%t.nn.npy'); [np.testing.assert_allclose(np.load(f), n, rtol=1e-4, atol=1e-4) for f in ('%t.built.npy', '%t.wide.npy')]"

// choose-conv-algorithm makes a convolution "direct" when its reduction (KH * KW * C) is at most
// `direct_reduction` (32 by default) and im2col would copy its patches: the 3x3 stride-2 stem over
// three channels (27), not the 1x1 stride-1 one over 24 (its data is its patch matrix), nor the 3x3
// over 8 channels (72) unless the option allows it. All equal the nn level.
func.func @main(%data: tensor<1x3x17x17xf32>, %w1: tensor<24x3x3x3xf32>, %w3: tensor<5x8x3x3xf32>) -> tensor<1x5x5x5xf32> {
  %w2 = nn.constant dense<0.0625> : tensor<8x24x1x1xf32>
  %c1 = nn.conv2d(%data, %w1) {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, channels = 24, kernel_size = array<i64: 3, 3>} : (tensor<1x3x17x17xf32>, tensor<24x3x3x3xf32>) -> tensor<1x24x9x9xf32>
  %r1 = nn.relu(%c1) : (tensor<1x24x9x9xf32>) -> tensor<1x24x9x9xf32>
  %c2 = nn.conv2d(%r1, %w2) {channels = 8, kernel_size = array<i64: 1, 1>} : (tensor<1x24x9x9xf32>, tensor<8x24x1x1xf32>) -> tensor<1x8x9x9xf32>
  %c3 = nn.conv2d(%c2, %w3) {strides = array<i64: 2, 2>, channels = 5, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x8x9x9xf32>, tensor<5x8x3x3xf32>) -> tensor<1x5x5x5xf32>
  func.return %c3 : tensor<1x5x5x5xf32>
}

// CHECK:      kernel.dispatch {root = "conv", algorithm = "direct"
// CHECK:      kernel.dispatch {root = "conv", algorithm = "im2col"
// CHECK:      kernel.dispatch {root = "conv", algorithm = "im2col"

// WIDE:       kernel.dispatch {root = "conv", algorithm = "direct"
// WIDE:       kernel.dispatch {root = "conv", algorithm = "im2col"
// WIDE:       kernel.dispatch {root = "conv", algorithm = "direct"
