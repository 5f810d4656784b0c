// RUN: xrelay-opt %s -p 'simplify-inference,fold-constant,canonicalize-ops' --opt-level 3 --opt-bisect-limit 1 2>&1 | filecheck %s
// RUN: xrelay-opt %s -p 'simplify-inference,fold-constant,canonicalize-ops' --opt-level 3 --opt-bisect-limit -1 -o %t.mlir 2>&1 | filecheck %s --check-prefix=ALL
// RUN: xrelay-opt %s -p 'simplify-inference,fold-constant,canonicalize-ops' --opt-level 3 --opt-bisect-limit 0 --required-pass InferType 2>&1 | filecheck %s --check-prefix=NONE

// Pass bisection like LLVM's -opt-bisect-limit: every optional pass asked should_run is numbered
// (nested ones too; the pipeline's own Sequential is not counted); only the first N run. Forced runs
// (a child's required InferType, the InferType a pass runs after itself, --required-pass) are not
// counted and always run, and their lines say why.
// With N = 1: SimplifyInference and the InferTypes around it run; FoldConstant and CanonicalizeOps are
// skipped, so batch_norm is gone but bias_add stays.

func.func @main(%x: tensor<1x2xf32>, %b: tensor<2xf32>) -> tensor<1x2xf32> {
  %g = nn.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %m = nn.constant dense<[0.1, 0.2]> : tensor<2xf32>
  %v = nn.constant dense<[0.9, 1.7]> : tensor<2xf32>
  %bn:3 = nn.batch_norm(%x, %g, %b, %m, %v) : (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>)
  %y = nn.bias_add(%bn#0, %b) {axis = -1 : i64} : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  func.return %y : tensor<1x2xf32>
}

// CHECK:      BISECT: running pass (forced: required by SimplifyInference) InferType on module
// CHECK-NEXT: BISECT: running pass (1) SimplifyInference on module
// CHECK-NEXT: BISECT: running pass (forced: InferType after SimplifyInference) InferType on module
// CHECK-NEXT: BISECT: NOT running pass (2) FoldConstant on module
// CHECK-NEXT: BISECT: running pass (forced: required by CanonicalizeOps) InferType on module
// CHECK-NEXT: BISECT: NOT running pass (3) CanonicalizeOps on module
// CHECK-NOT:  BISECT
// CHECK-NOT:  nn.batch_norm
// CHECK:      nn.bias_add

// ALL:      BISECT: running pass (forced: required by SimplifyInference) InferType on module
// ALL-NEXT: BISECT: running pass (1) SimplifyInference on module
// ALL-NEXT: BISECT: running pass (forced: InferType after SimplifyInference) InferType on module
// ALL-NEXT: BISECT: running pass (2) FoldConstant on module
// ALL-NEXT: BISECT: running pass (forced: InferType after FoldConstant) InferType on module
// ALL-NEXT: BISECT: running pass (forced: required by CanonicalizeOps) InferType on module
// ALL-NEXT: BISECT: running pass (3) CanonicalizeOps on module
// ALL-NEXT: BISECT: running pass (forced: InferType after CanonicalizeOps) InferType on module
// ALL-NOT:  BISECT

// Passes in --required-pass are never asked, counted or skipped: their lines say "(required)".
// NONE:      BISECT: running pass (required) InferType on module
// NONE-NEXT: BISECT: NOT running pass (1) SimplifyInference on module
// NONE-NEXT: BISECT: NOT running pass (2) FoldConstant on module
// NONE-NEXT: BISECT: running pass (required) InferType on module
// NONE-NEXT: BISECT: NOT running pass (3) CanonicalizeOps on module
// NONE-NOT:  BISECT
// NONE:      nn.batch_norm
