// RUN: xrelay-opt %s -p simplify-inference,fold-constant --print-ir-diff -o %t.mlir 2>&1 | filecheck %s --match-full-lines
// RUN: xrelay-opt %s -p fold-constant --print-ir-diff -o %t.mlir 2>&1 | filecheck %s --check-prefix=NONE --allow-empty

// IRDiff: a unified diff for every pass that changed the IR (SimplifyInference, and the Sequential
// around it); passes that changed nothing (InferType, FoldConstant here) print nothing.

func.func @main(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %g = nn.constant dense<[1.5, 0.5]> : tensor<2xf32>
  %b = nn.constant dense<[0.25, -1.0]> : tensor<2xf32>
  %m = nn.constant dense<[0.1, 0.2]> : tensor<2xf32>
  %v = nn.constant dense<[0.9, 1.7]> : tensor<2xf32>
  %bn:3 = nn.batch_norm(%x, %g, %b, %m, %v) : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>)
  %r = nn.relu(%bn#0) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %r : tensor<1x2x2x2xf32>
}

// CHECK:      // -----// IR Diff SimplifyInference (depth 1) //----- //
// CHECK-NEXT: --- before SimplifyInference
// CHECK-NEXT: +++ after SimplifyInference
// CHECK-NEXT: @@ -1,10 +1,9 @@
// CHECK-NEXT:  builtin.module {
// CHECK-NEXT:    func.func @main(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
// CHECK-NEXT: -    %g = nn.constant dense<[1.500000e+00, 5.000000e-01]> : tensor<2xf32>
// CHECK-NEXT: -    %b = nn.constant dense<[2.500000e-01, -1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT: -    %m = nn.constant dense<[1.000000e-01, 2.000000e-01]> : tensor<2xf32>
// CHECK-NEXT: -    %v = nn.constant dense<[9.000000e-01, 1.700000e+00]> : tensor<2xf32>
// CHECK-NEXT: -    %bn, %bn_1, %bn_2 = nn.batch_norm(%x, %g, %b, %m, %v) : {{.*}}
// CHECK-NEXT: +    %0 = nn.constant {{.*}} : tensor<2x1x1xf32>
// CHECK-NEXT: +    %1 = nn.constant {{.*}} : tensor<2x1x1xf32>
// CHECK-NEXT: +    %2 = nn.multiply(%x, %0) : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT: +    %bn = nn.add(%2, %1) : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:      %r = nn.relu(%bn) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:      func.return %r : tensor<1x2x2x2xf32>
// CHECK-NEXT:    }
// CHECK-EMPTY:
// CHECK-NEXT: // -----// IR Diff sequential (depth 0) //----- //
// CHECK-NEXT: --- before sequential
// CHECK-NEXT: +++ after sequential
// CHECK-NOT:  IR Diff

// NONE-NOT: IR Diff
