// RUN: xrelay-opt %s -p 'fold-constant,dead-code-elimination' --opt-level 2 --pass-statistics -o %t.mlir 2>&1 | filecheck %s --match-full-lines
// RUN: xrelay-opt %s -p 'fold-constant,dead-code-elimination' --opt-level 2 --pass-statistics --pass-statistics-display=list -o %t.mlir 2>&1 | filecheck %s --check-prefix=LIST --match-full-lines

// Pass statistics as MLIR prints them: the tree of pass runs with each run's counters, or (list) one
// entry per pass with counters. The negate of a constant folds (1); its operand, then nothing else, is
// left unused (1 erased); the dead relu is erased by dead-code-elimination (1).

func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %n = nn.negative(%c) : (tensor<2xf32>) -> tensor<2xf32>
  %dead = nn.relu(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %y = nn.add(%x, %n) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}

// CHECK:      ===-------------------------------------------------------------------------===
// CHECK-NEXT:                          ... Pass statistics report ...
// CHECK-NEXT: ===-------------------------------------------------------------------------===
// CHECK-NEXT: sequential
// CHECK-NEXT:   FoldConstant
// CHECK-NEXT:     (S) 1 num-constants-erased - Number of unused constants erased
// CHECK-NEXT:     (S) 1 num-folded           - Number of ops evaluated into constants
// CHECK-NEXT:     (S) 1 num-rewrites         - Number of ops a rewrite pattern changed
// CHECK-NEXT:     InferType
// CHECK-NEXT:   DeadCodeElimination
// CHECK-NEXT:     (S) 1 num-erased - Number of dead ops erased
// CHECK-NEXT:     InferType

// LIST:      ===-------------------------------------------------------------------------===
// LIST-NEXT:                          ... Pass statistics report ...
// LIST-NEXT: ===-------------------------------------------------------------------------===
// LIST-NEXT:   DeadCodeElimination
// LIST-NEXT:     (S) 1 num-erased - Number of dead ops erased
// LIST-NEXT:   FoldConstant
// LIST-NEXT:     (S) 1 num-constants-erased - Number of unused constants erased
// LIST-NEXT:     (S) 1 num-folded           - Number of ops evaluated into constants
// LIST-NEXT:     (S) 1 num-rewrites         - Number of ops a rewrite pattern changed
