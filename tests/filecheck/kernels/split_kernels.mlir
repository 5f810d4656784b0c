// RUN: xrelay-opt %s -p 'convert-nn-to-linalg,form-kernels,choose-conv-algorithm,split-kernels{threads=2}' -o %t.mlir
// RUN: filecheck %s --input-file %t.mlir
// RUN: xrelay-opt %s -p 'convert-nn-to-linalg,form-kernels,choose-conv-algorithm,split-kernels{threads=2 min_conv_macs=0 min_points=0}' | filecheck %s --check-prefix=ALL
// RUN: xrelay-opt %s -p 'convert-nn-to-linalg,form-kernels,choose-conv-algorithm,split-kernels{threads=3}' | filecheck %s --check-prefix=THREE
// RUN: xrelay-run %t.mlir --input data=%S/Inputs/build_data.npy -o %t.split.npy
// RUN: xrelay-opt %s -p 'convert-nn-to-linalg' -o %t.plain.mlir
// RUN: xrelay-run %t.plain.mlir --input data=%S/Inputs/build_data.npy -o %t.plain.npy
// RUN: python -c "import numpy as np; a, b = np.load('%t.split.npy'), np.load('%t.plain.npy'); assert np.allclose(a, b, rtol=1e-4, atol=1e-5), abs(a - b).max()"

// NCHW: a convolution's output rows are axis 2. The 3x3 one runs by Winograd F(2x2) (64 tiles), which
// always splits, by rows (16 filters: fewer than 4 per tile). The 1x1 one has 16*16*16*16 = 65,536
// multiply-adds, below the default `min_conv_macs` (2^23): one part; with the threshold at 0 it
// splits by rows too (one image: its rows are the GEMM's columns). Three threads: 3 parts.
func.func @main(%data: tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32> {
  %w1 = nn.constant dense<0.03125> : tensor<16x16x3x3xf32>
  %b1 = nn.constant dense<0.5> : tensor<16xf32>
  %w2 = nn.constant dense<-0.0625> : tensor<16x16x1x1xf32>
  %c1 = nn.conv2d(%data, %w1) {padding = array<i64: 1, 1, 1, 1>, channels = 16, kernel_size = array<i64: 3, 3>} : (tensor<1x16x16x16xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x16x16xf32>
  %a1 = nn.bias_add(%c1, %b1) : (tensor<1x16x16x16xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
  %r1 = nn.relu(%a1) : (tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %c2 = nn.conv2d(%r1, %w2) {channels = 16, kernel_size = array<i64: 1, 1>} : (tensor<1x16x16x16xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x16x16xf32>
  %s = nn.add(%c2, %r1) : (tensor<1x16x16x16xf32>, tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  func.return %s : tensor<1x16x16x16xf32>
}

// CHECK:      kernel.dispatch {root = "conv", algorithm = "winograd-f2", split = array<i64: 2, 2>}
// CHECK:        linalg.conv_2d_nchw_fchw
// CHECK:      kernel.dispatch {root = "conv", algorithm = "im2col", split = array<i64: 2, 1>}
// CHECK:        linalg.conv_2d_nchw_fchw

// ALL:        kernel.dispatch {root = "conv", algorithm = "winograd-f2", split = array<i64: 2, 2>}
// ALL:        kernel.dispatch {root = "conv", algorithm = "im2col", split = array<i64: 2, 2>}

// THREE:      kernel.dispatch {root = "conv", algorithm = "winograd-f2", split = array<i64: 2, 3>}
// THREE:      kernel.dispatch {root = "conv", algorithm = "im2col", split = array<i64: 2, 1>}
