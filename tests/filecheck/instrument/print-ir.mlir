// RUN: xrelay-opt %s -p canonicalize-ops --opt-level 3 --print-ir-after-all -o %t.mlir 2>&1 | filecheck %s --check-prefix=ALL
// RUN: xrelay-opt %s -p canonicalize-ops --opt-level 3 --print-ir-before=canonicalize-ops --print-ir-after='Infer.*' -o %t.mlir 2>&1 | filecheck %s --check-prefix=SELECT
// RUN: xrelay-opt %s -p canonicalize-ops --opt-level 3 --print-ir-after-change -o %t.mlir 2>&1 | filecheck %s --check-prefix=CHANGE
// RUN: xrelay-opt %s -p canonicalize-ops --opt-level 3 --print-ir-before-all -o %t.mlir 2>&1 | filecheck %s --check-prefix=BEFORE
// RUN: not xrelay-opt %s -p canonicalize-ops --print-ir-after='Fold(' 2>&1 | filecheck %s --check-prefix=BADREGEX

// PrintIR: MLIR-style dumps on stderr, naming the pass and its nesting depth (the pipeline's
// Sequential is depth 0; CanonicalizeOps' required InferType runs before it as a sibling, and its
// final InferType runs nested inside it).

func.func @main(%x: tensor<1x3xf32>, %b: tensor<3xf32>) -> tensor<1x3xf32> {
  %y = nn.bias_add(%x, %b) {axis = -1 : i64} : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  func.return %y : tensor<1x3xf32>
}

// ALL:      // -----// IR Dump After InferType (depth 1) //----- //
// ALL-NEXT: builtin.module {
// ALL:        %y = nn.bias_add(%x, %b) {axis = -1 : i64}
// ALL:      // -----// IR Dump After InferType (depth 2) //----- //
// ALL:        %y = nn.add(%x, %b)
// ALL:      // -----// IR Dump After CanonicalizeOps (depth 1) //----- //
// ALL:        %y = nn.add(%x, %b)
// ALL:      // -----// IR Dump After sequential (depth 0) //----- //
// ALL:        %y = nn.add(%x, %b)
// ALL-NOT:  IR Dump

// SELECT:      // -----// IR Dump After InferType (depth 1) //----- //
// SELECT:        %y = nn.bias_add
// SELECT:      // -----// IR Dump Before CanonicalizeOps (depth 1) //----- //
// SELECT-NEXT: builtin.module {
// SELECT-NEXT:   func.func @main(%x: tensor<1x3xf32>, %b: tensor<3xf32>) -> tensor<1x3xf32> {
// SELECT-NEXT:     %y = nn.bias_add(%x, %b) {axis = -1 : i64} : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
// SELECT-NEXT:     func.return %y : tensor<1x3xf32>
// SELECT-NEXT:   }
// SELECT-NEXT: }
// SELECT:      // -----// IR Dump After InferType (depth 2) //----- //
// SELECT:        %y = nn.add(%x, %b)
// SELECT-NOT:  IR Dump

// Only CanonicalizeOps (and the Sequential around it) changed the IR; the InferType runs did not.
// CHANGE-NOT:  InferType
// CHANGE:      // -----// IR Dump After CanonicalizeOps (depth 1) //----- //
// CHANGE-NEXT: builtin.module {
// CHANGE-NEXT:   func.func @main(%x: tensor<1x3xf32>, %b: tensor<3xf32>) -> tensor<1x3xf32> {
// CHANGE-NEXT:     %y = nn.add(%x, %b) : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
// CHANGE-NEXT:     func.return %y : tensor<1x3xf32>
// CHANGE-NEXT:   }
// CHANGE-NEXT: }
// CHANGE:      // -----// IR Dump After sequential (depth 0) //----- //
// CHANGE-NOT:  IR Dump

// BEFORE:      // -----// IR Dump Before sequential (depth 0) //----- //
// BEFORE:      // -----// IR Dump Before InferType (depth 1) //----- //
// BEFORE:      // -----// IR Dump Before CanonicalizeOps (depth 1) //----- //
// BEFORE:      // -----// IR Dump Before InferType (depth 2) //----- //
// BEFORE-NOT:  IR Dump

// BADREGEX: xrelay-opt: error: PrintIR after: 'Fold(' is not a valid pass name or regex: missing ), unterminated subpattern at position 4
