// QA regressions: one diagnostic naming the place, exit status 1, for input found by hostile testing.

// RUN: not xrelay-opt %s --disable-verify -p fold-constant 2>&1 | filecheck %s --check-prefix=FOLD
// RUN: printf '// only a comment\n' > %t.empty.mlir
// RUN: not xrelay-opt %t.empty.mlir 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: not xrelay-opt %s -p fold-constant --print-ir-after=fold-constnt 2>&1 | filecheck %s --check-prefix=SELECTOR
// RUN: not xrelay-opt %s -p fold-constant --numerical-bisect --numerical-bisect-rtol nan 2>&1 | filecheck %s --check-prefix=RTOL

// The stored type of %b is wrong (only possible with --disable-verify): folding %a through nn.relu
// gives 1x4, the op claims 1x5.
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x5xf32> {
  %a = nn.constant dense<1.0> : tensor<1x4xf32>
  %b = nn.relu(%a) : (tensor<1x4xf32>) -> tensor<1x5xf32>
  %c = nn.relu(%b) : (tensor<1x5xf32>) -> tensor<1x5xf32>
  func.return %c : tensor<1x5xf32>
}

// FOLD:      qa-errors.mlir:13:3: error: pass 'FoldConstant' failed on 'nn.relu': ValueError: FoldConstant: nn.relu kernel returned shape (1, 4), the op's type is tensor<1x5xf32>
// FOLD-NEXT:   %b = nn.relu(%a) : (tensor<1x4xf32>) -> tensor<1x5xf32>
// FOLD-NEXT:   ^
// FOLD-NOT:  {{.}}

// EMPTY: empty.mlir: error: no operation in the input (the file is empty or holds only comments)

// SELECTOR: xrelay-opt: error: unknown pass 'fold-constnt' in --print-ir-after (did you mean 'fold-constant'?)

// RTOL: xrelay-opt: error: argument --numerical-bisect-rtol: must be a finite number >= 0, got 'nan'
