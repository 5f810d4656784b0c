// RUN: xrelay-opt %s -p 'convert-nn-to-linalg,form-kernels,choose-conv-algorithm' | filecheck %s
// RUN: xrelay-opt %s -p 'convert-nn-to-linalg,form-kernels,choose-conv-algorithm,split-kernels{threads=2 min_conv_macs=0}' -o %t.mlir
// RUN: filecheck %s --check-prefix=SPLIT < %t.mlir
// RUN: xrelay-run %t.mlir --input data=%S/Inputs/build_data.npy -o %t.kernels.npy
// RUN: xrelay-run %s --level nn --input data=%S/Inputs/build_data.npy -o %t.nn.npy
// RUN: python -c "import numpy as np; a, b = np.load('%t.kernels.npy'), np.load('%t.nn.npy'); assert np.allclose(a, b, rtol=1e-4, atol=1e-5), abs(a - b).max()"

// Grouped convolutions (1 < groups < channels) lower to a linalg.generic with a group loop in the
// data, weight and output maps (the channel axes split by tensor.expand_shape); choose-conv-algorithm
// reads that loop and makes them im2col (one GEMM per group), never Winograd, even 3x3 at stride 1.
// Split over threads, they are cut by output rows. A depthwise convolution (one channel per group)
// is "depthwise": the compiled depthwise kernel runs it.
func.func @main(%data: tensor<1x16x16x16xf32>) -> tensor<1x16x8x8xf32> {
  %w1 = nn.constant dense<0.03125> : tensor<16x4x3x3xf32>
  %w2 = nn.constant dense<-0.0625> : tensor<16x8x1x1xf32>
  %w3 = nn.constant dense<0.25> : tensor<16x1x3x3xf32>
  %c1 = nn.conv2d(%data, %w1) {padding = array<i64: 1, 1, 1, 1>, channels = 16, kernel_size = array<i64: 3, 3>, groups = 4} : (tensor<1x16x16x16xf32>, tensor<16x4x3x3xf32>) -> tensor<1x16x16x16xf32>
  %r1 = nn.relu(%c1) : (tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %c2 = nn.conv2d(%r1, %w2) {strides = array<i64: 2, 2>, channels = 16, kernel_size = array<i64: 1, 1>, groups = 2} : (tensor<1x16x16x16xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x8x8xf32>
  %c3 = nn.conv2d(%c2, %w3) {padding = array<i64: 1, 1, 1, 1>, channels = 16, kernel_size = array<i64: 3, 3>, groups = 16} : (tensor<1x16x8x8xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x8x8xf32>
  func.return %c3 : tensor<1x16x8x8xf32>
}

// CHECK:      tensor.expand_shape {{.*}} into tensor<1x4x4x18x18xf32>
// CHECK:      kernel.dispatch {root = "conv", algorithm = "im2col"}
// CHECK:        linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, (d3 + d6), (d4 + d7))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>]
// CHECK:      kernel.dispatch {root = "conv", algorithm = "im2col"}
// CHECK:        linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, ((d3 * 2) + d6), ((d4 * 2) + d7))>
// CHECK:      kernel.dispatch {root = "conv", algorithm = "depthwise"}

// SPLIT:      kernel.dispatch {root = "conv", algorithm = "im2col", split = array<i64: 3, 2>} -> (tensor<1x4x4x16x16xf32>)
// SPLIT:      kernel.dispatch {root = "conv", algorithm = "im2col", split = array<i64: 3, 2>} -> (tensor<1x2x8x8x8xf32>)
