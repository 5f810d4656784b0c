// RUN: sed -n '8,13p' %s > %t.root.mlir && not xrelay-opt %t.root.mlir 2>&1 | filecheck %s --check-prefix=ROOT
// RUN: sed -n '18,23p' %s > %t.algo.mlir && not xrelay-opt %t.algo.mlir 2>&1 | filecheck %s --check-prefix=ALGO
// RUN: sed -n '28,33p' %s > %t.split.mlir && not xrelay-opt %t.split.mlir 2>&1 | filecheck %s --check-prefix=SPLIT
// RUN: sed -n '38,43p' %s > %t.none.mlir && not xrelay-opt %t.none.mlir 2>&1 | filecheck %s --check-prefix=NONE

// Malformed kernel.dispatch ops: one located diagnostic each.

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = kernel.dispatch {root = "gpu"} -> (tensor<2x3xf32>) {
    kernel.yield %x : tensor<2x3xf32>
  }
  func.return %r : tensor<2x3xf32>
}
// ROOT: root.mlir:2:3: error: 'kernel.dispatch' op root 'gpu' is not one of conv, matmul, pool, reduce, elementwise

// -----

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = kernel.dispatch {root = "conv", algorithm = "fast"} -> (tensor<2x3xf32>) {
    kernel.yield %x : tensor<2x3xf32>
  }
  func.return %r : tensor<2x3xf32>
}
// ALGO: algo.mlir:2:3: error: 'kernel.dispatch' op algorithm 'fast' is not one of winograd-f2, winograd-f4, im2col, direct, depthwise, generic

// -----

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = kernel.dispatch {root = "conv", split = array<i64: 5, 2>} -> (tensor<2x3xf32>) {
    kernel.yield %x : tensor<2x3xf32>
  }
  func.return %r : tensor<2x3xf32>
}
// SPLIT: split.mlir:2:3: error: 'kernel.dispatch' op split must be [axis, parts] with an axis of the first result and parts >= 1

// -----

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = kernel.dispatch {algorithm = "im2col"} -> (tensor<2x3xf32>) {
    kernel.yield %x : tensor<2x3xf32>
  }
  func.return %r : tensor<2x3xf32>
}
// NONE: none.mlir:2:{{[0-9]+}}: error: kernel.dispatch needs a string attribute 'root'
