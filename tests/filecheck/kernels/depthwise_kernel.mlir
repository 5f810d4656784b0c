// RUN: xrelay-opt %s -p 'convert-nn-to-linalg,split-elementwise-bodies,form-kernels,choose-conv-algorithm,split-kernels{threads=2}' | filecheck %s
// RUN: xrelay-opt %s -p 'convert-nn-to-linalg,split-elementwise-bodies,form-kernels,choose-conv-algorithm,split-kernels{threads=2 min_depthwise_macs=0}' -o %t.mlir
// RUN: filecheck %s --check-prefix=SPLIT --input-file %t.mlir
// RUN: python -c "import numpy as np; np.save('%t.x.npy', np.random.default_rng(3).standard_normal((1, 8, 8, 5)).astype(np.float32))"
// RUN: xrelay-run %t.mlir --input x=%t.x.npy -o %t.kernel.npy
// RUN: env XRELAY_NATIVE=0 xrelay-run %t.mlir --input x=%t.x.npy -o %t.numpy.npy
// RUN: python -c "import numpy as np; x = np.pad(np.load('%t.x.npy').astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0))); w = (np.arange(45).reshape(3, 3, 5) - 22) / 16; v = sum(x[:, i:i + 8, j:j + 8] * w[i, j] for i in range(3) for j in range(3)) + np.arange(5) / 4; e = np.clip(v, 0, 6); e = np.pad(e, ((0, 0), (1, 1), (1, 1), (0, 0))); [np.testing.assert_allclose(np.load(f), e, rtol=1e-5, atol=1e-6) for f in ('%t.kernel.npy', '%t.numpy.npy')]"

// A 3x3 depthwise convolution (NHWC, groups = channels), its bias, ReLU6 and the next convolution's
// pad: one kernel whose root is the depthwise generic (algorithm "depthwise":
// the executor's compiled depthwise kernel applies the bias and clip to each value and stores it
// into the pad's interior).
// 8*8*5*9 = 2,880 multiply-adds: below the default `min_depthwise_macs`, one part; at 0, two.
func.func @main(%x: tensor<1x8x8x5xf32>) -> tensor<1x10x10x5xf32> {
  %w = nn.constant dense<[[[[-1.375, -1.3125, -1.25, -1.1875, -1.125]], [[-1.0625, -1.0, -0.9375, -0.875, -0.8125]], [[-0.75, -0.6875, -0.625, -0.5625, -0.5]]], [[[-0.4375, -0.375, -0.3125, -0.25, -0.1875]], [[-0.125, -0.0625, 0.0, 0.0625, 0.125]], [[0.1875, 0.25, 0.3125, 0.375, 0.4375]]], [[[0.5, 0.5625, 0.625, 0.6875, 0.75]], [[0.8125, 0.875, 0.9375, 1.0, 1.0625]], [[1.125, 1.1875, 1.25, 1.3125, 1.375]]]]> : tensor<3x3x1x5xf32>
  %b = nn.constant dense<[0.0, 0.25, 0.5, 0.75, 1.0]> : tensor<5xf32>
  %c = nn.conv2d(%x, %w) {groups = 5 : i64, padding = array<i64: 1, 1, 1, 1>, data_layout = "NHWC", kernel_layout = "HWIO"} : (tensor<1x8x8x5xf32>, tensor<3x3x1x5xf32>) -> tensor<1x8x8x5xf32>
  %a = nn.bias_add(%c, %b) {axis = 3 : i64} : (tensor<1x8x8x5xf32>, tensor<5xf32>) -> tensor<1x8x8x5xf32>
  %r = nn.clip(%a) {a_min = 0.0 : f64, a_max = 6.0 : f64} : (tensor<1x8x8x5xf32>) -> tensor<1x8x8x5xf32>
  %p = nn.pad(%r) {pad_width = array<i64: 0, 0, 1, 1, 1, 1, 0, 0>} : (tensor<1x8x8x5xf32>) -> tensor<1x10x10x5xf32>
  func.return %p : tensor<1x10x10x5xf32>
}

// CHECK:      kernel.dispatch {root = "conv", algorithm = "depthwise", split = array<i64: 1, 1>} -> (tensor<1x10x10x5xf32>) {
// CHECK:        linalg.fill
// CHECK-NEXT:   linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, (d2 + d4), (d3 + d5), d1)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5, 0, d1)>
// CHECK:          arith.addf
// CHECK:          arith.maximumf
// CHECK:          arith.minimumf
// CHECK:        tensor.pad
// CHECK:        kernel.yield
// CHECK-NOT:  linalg.generic

// SPLIT:      kernel.dispatch {root = "conv", algorithm = "depthwise", split = array<i64: 1, 2>}
