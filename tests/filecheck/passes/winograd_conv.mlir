// RUN: xrelay-opt %s -p winograd-conv | filecheck %s
// RUN: not xrelay-opt %s -p 'winograd-conv{tile=3}' 2>&1 | filecheck %s --check-prefix=ERR
// RUN: xrelay-opt %s -p winograd-conv -o %t.mlir
// RUN: python -c "import numpy as np; np.save('%t.x.npy', (np.arange(50, dtype=np.float32).reshape(1, 2, 5, 5) - 20) / 7)"
// RUN: xrelay-run %t.mlir --level loops --input %t.x.npy -o %t.loops.npz
// RUN: xrelay-run %s --level nn --input %t.x.npy -o %t.nn.npz
// RUN: python -c "import numpy as np; n, l = np.load('%t.nn.npz'), np.load('%t.loops.npz'); assert sorted(n) == sorted(l) and len(n) == 2; [np.testing.assert_allclose(l[k], n[k], atol=1e-5 * abs(n[k]).max()) for k in n]"

// A 3x3 convolution over 5x5 (padding 1) as F(2x2, 3x3): padded to 8x8 (3 tiles of 2 and the last
// tile's window), 4x4 windows of every tile by reshape / slice / concatenate, V = B^T d B as two
// batched products with B^T, the 16 products with the transformed weight U = G g G^T (all-ones g:
// U[x][y] = r[x] * r[y], r = 1, 1.5, 0.5, 1), Y = A^T M A, and the tiles back into 5x5 NCHW.
// The stride-2 convolution is left alone.
func.func @main(%x: tensor<1x2x5x5xf32>) -> (tensor<1x1x5x5xf32>, tensor<1x1x2x2xf32>) {
  %w = nn.constant dense<1.0> : tensor<1x2x3x3xf32>
  %y = nn.conv2d(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x5x5xf32>
  %s = nn.conv2d(%x, %w) {strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x2x2xf32>
  func.return %y, %s : tensor<1x1x5x5xf32>, tensor<1x1x2x2xf32>
}

// CHECK:      %[[T:.*]] = nn.transpose(%x) {axes = array<i64: 0, 2, 3, 1>} : (tensor<1x2x5x5xf32>) -> tensor<1x5x5x2xf32>
// CHECK-NEXT: %[[P:.*]] = nn.pad(%[[T]]) {pad_width = array<i64: 0, 0, 1, 2, 1, 2, 0, 0>} : (tensor<1x5x5x2xf32>) -> tensor<1x8x8x2xf32>
// CHECK:      nn.concatenate({{.*}}) {axis = 2 : i64} : ({{.*}}) -> tensor<1x3x4x8x2xf32>
// CHECK:      nn.concatenate({{.*}}) {axis = 4 : i64} : ({{.*}}) -> tensor<1x3x4x3x4x2xf32>
// CHECK-NEXT: nn.transpose({{.*}}) {axes = array<i64: 2, 4, 0, 1, 3, 5>} : (tensor<1x3x4x3x4x2xf32>) -> tensor<4x4x1x3x3x2xf32>
// CHECK:      %[[BT:.*]] = nn.constant dense<{{\[\[\[}}1.000000e+00, 0.000000e+00, -1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00, 1.000000e+00, 0.000000e+00], [0.000000e+00, -1.000000e+00, 1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00, 0.000000e+00, -1.000000e+00]]]> : tensor<1x4x4xf32>
// CHECK:      nn.batch_matmul(%[[BT]], {{.*}}) {transpose_b = false} : (tensor<1x4x4xf32>, tensor<1x4x72xf32>) -> tensor<1x4x72xf32>
// CHECK:      nn.batch_matmul(%[[BT]], {{.*}}) {transpose_b = false} : (tensor<1x4x4xf32>, tensor<4x4x18xf32>) -> tensor<4x4x18xf32>
// CHECK-NEXT: %[[U:.*]] = nn.constant dense<"0x0000803F0000803F0000C03F0000C03F0000003F0000003F0000803F0000803F0000C03F0000C03F00001040000010400000403F0000403F0000C03F0000C03F0000003F0000003F0000403F0000403F0000803E0000803E0000003F0000003F0000803F0000803F0000C03F0000C03F0000003F0000003F0000803F0000803F"> : tensor<16x2x1xf32>
// CHECK:      nn.batch_matmul({{.*}}, %[[U]]) {transpose_b = false} : (tensor<16x9x2xf32>, tensor<16x2x1xf32>) -> tensor<16x9x1xf32>
// CHECK:      %[[AT:.*]] = nn.constant dense<{{\[\[\[}}1.000000e+00, 1.000000e+00, 1.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00, -1.000000e+00, -1.000000e+00]]]> : tensor<1x2x4xf32>
// CHECK:      nn.batch_matmul(%[[AT]], {{.*}}) {transpose_b = false} : (tensor<1x2x4xf32>, tensor<1x4x36xf32>) -> tensor<1x2x36xf32>
// CHECK:      nn.batch_matmul(%[[AT]], {{.*}}) {transpose_b = false} : (tensor<1x2x4xf32>, tensor<2x4x9xf32>) -> tensor<2x2x9xf32>
// CHECK:      nn.transpose({{.*}}) {axes = array<i64: 2, 3, 0, 4, 1, 5>} : (tensor<2x2x1x3x3x1xf32>) -> tensor<1x3x2x3x2x1xf32>
// CHECK:      nn.strided_slice({{.*}}) {begin = array<i64: 0, 0>, end = array<i64: 5, 5>, strides = array<i64: 1, 1>, axes = array<i64: 1, 2>} : (tensor<1x6x6x1xf32>) -> tensor<1x5x5x1xf32>
// CHECK-NEXT: %y = nn.transpose({{.*}}) {axes = array<i64: 0, 3, 1, 2>} : (tensor<1x5x5x1xf32>) -> tensor<1x1x5x5xf32>
// CHECK-NEXT: %s = nn.conv2d(%x, %w) {strides = array<i64: 2, 2>}
// CHECK-NEXT: func.return %y, %s

// ERR: winograd-conv: tile must be 2 or 4 and min_tiles at least 0, got 3 and 0
