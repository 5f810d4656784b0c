// Upstream's contraction syntax: linalg.matmul and linalg.batch_matmul with and without
// `indexing_maps` (xDSL 0.75 drops matmul's maps when printing and has no batch_matmul;
// dialects/upstream_contractions.py). xrelay-opt reads and prints them as upstream does (default
// maps left out), and IREE's iree-opt (upstream's verifiers) takes the printed text back.
// RUN: xrelay-opt %s -o %t.out.mlir
// RUN: filecheck %s --input-file %t.out.mlir
// RUN: iree-opt < %t.out.mlir | filecheck %s --check-prefix=IREE

func.func @main(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>, %p: tensor<3x4xf32>, %c: tensor<2x4xf32>,
                %x: tensor<5x2x3xf32>, %y: tensor<5x3x4xf32>, %yt: tensor<5x4x3xf32>, %z: tensor<5x2x4xf32>)
    -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>, tensor<5x2x4xf32>) {
  %0 = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %b : tensor<2x3xf32>, tensor<4x3xf32>) outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = linalg.matmul ins(%a, %p : tensor<2x3xf32>, tensor<3x4xf32>) outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = linalg.batch_matmul ins(%x, %y : tensor<5x2x3xf32>, tensor<5x3x4xf32>) outs(%z : tensor<5x2x4xf32>) -> tensor<5x2x4xf32>
  %3 = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%x, %yt : tensor<5x2x3xf32>, tensor<5x4x3xf32>) outs(%z : tensor<5x2x4xf32>) -> tensor<5x2x4xf32>
  func.return %0, %1, %2, %3 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<5x2x4xf32>, tensor<5x2x4xf32>
}
// CHECK:      linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>] ins(%a, %b : tensor<2x3xf32>, tensor<4x3xf32>) outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: linalg.matmul ins(%a, %p : tensor<2x3xf32>, tensor<3x4xf32>) outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: linalg.batch_matmul ins(%x, %y : tensor<5x2x3xf32>, tensor<5x3x4xf32>) outs(%z : tensor<5x2x4xf32>) -> tensor<5x2x4xf32>
// CHECK-NEXT: linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>] ins(%x, %yt

// IREE:      #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// IREE:      linalg.matmul indexing_maps = [#[[A]], {{.*}}] ins(%arg0, %arg1
// IREE-NEXT: linalg.matmul ins(%arg0, %arg2
// IREE-NEXT: linalg.batch_matmul ins(%arg4, %arg5
// IREE-NEXT: linalg.batch_matmul indexing_maps = [{{.*}}] ins(%arg4, %arg6
