// RUN: xrelay-opt %s -p 'fold-constant' --pass-memory -o %t.mlir 2>&1 | filecheck %s --match-full-lines --strict-whitespace

// Per-pass peak memory (tracemalloc): one line per pass run in start order, one tab per depth.

func.func @main(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %c = nn.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %d = nn.add(%c, %c) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y = nn.add(%x, %d) : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  func.return %y : tensor<1x3xf32>
}

// CHECK:sequential: peak {{[0-9]+\.[0-9][0-9]}} MiB, retained {{[-+][0-9]+\.[0-9][0-9]}} MiB
// CHECK-NEXT:	FoldConstant: peak {{[0-9]+\.[0-9][0-9]}} MiB, retained {{[-+][0-9]+\.[0-9][0-9]}} MiB
// CHECK-NEXT:		InferType: peak {{[0-9]+\.[0-9][0-9]}} MiB, retained {{[-+][0-9]+\.[0-9][0-9]}} MiB
// CHECK-NOT:{{.}}
