// RUN: xrelay-opt %s -p matmul-weights-k-major -o %t.mlir
// RUN: filecheck %s --input-file %t.mlir
// RUN: xrelay-opt %s -p 'matmul-weights-k-major{min_rows=1}' | filecheck %s --check-prefix=ONE-ROW
// RUN: xrelay-run %t.mlir --input x=%S/Inputs/k_major_x.npy --input v=%S/Inputs/k_major_v.npy -o %t.after.npz
// RUN: python -c "import numpy as np; x, v = np.load('%S/Inputs/k_major_x.npy'), np.load('%S/Inputs/k_major_v.npy'); w = np.array([[1, 2, 3, 4], [-1, 0.5, 0.25, 2]], np.float32); r = np.load('%t.after.npz'); got = [r[k] for k in sorted(r)]; assert np.allclose(got[0], x @ w.T) and np.allclose(got[1], v @ w.T), got"

// nn.dense's x * w^T with a constant w: the three-row product reads a (k, n) copy of the weight with
// untransposed maps; the one-row product (below min_rows) keeps w, which stays for it.
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @main(%x: tensor<3x4xf32>, %v: tensor<1x4xf32>) -> (tensor<3x2xf32>, tensor<1x2xf32>) {
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 0.25, 2.0]]> : tensor<2x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
  %y = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%x, %w : tensor<3x4xf32>, tensor<2x4xf32>) outs(%init : tensor<3x2xf32>) -> tensor<3x2xf32>
  %e1 = tensor.empty() : tensor<1x2xf32>
  %init1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x2xf32>) -> tensor<1x2xf32>
  %row = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%v, %w : tensor<1x4xf32>, tensor<2x4xf32>) outs(%init1 : tensor<1x2xf32>) -> tensor<1x2xf32>
  func.return %y, %row : tensor<3x2xf32>, tensor<1x2xf32>
}

// CHECK:      %w = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [-1.000000e+00, 5.000000e-01, 2.500000e-01, 2.000000e+00]]> : tensor<2x4xf32>
// CHECK-NEXT: %[[KN:.*]] = arith.constant dense<{{\[}}[1.000000e+00, -1.000000e+00], [2.000000e+00, 5.000000e-01], [3.000000e+00, 2.500000e-01], [4.000000e+00, 2.000000e+00]]> : tensor<4x2xf32>
// CHECK:      %y = linalg.matmul ins(%x, %[[KN]] : tensor<3x4xf32>, tensor<4x2xf32>) outs(%init : tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK:      %row = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%v, %w : tensor<1x4xf32>, tensor<2x4xf32>)

// With min_rows=1 both read one copy and the (n, k) constant goes.
// ONE-ROW-NOT: tensor<2x4xf32>
// ONE-ROW:     %[[KN:.*]] = arith.constant {{.*}} : tensor<4x2xf32>
// ONE-ROW-NOT: arith.constant {{.*}} : tensor<4x2xf32>
// ONE-ROW:     linalg.matmul ins(%x, %[[KN]] : tensor<3x4xf32>, tensor<4x2xf32>)
// ONE-ROW:     linalg.matmul ins(%v, %[[KN]] : tensor<1x4xf32>, tensor<4x2xf32>)
