// RUN: xrelay-opt %s -p infer-type,fold-constant --pass-timing -o %t.mlir 2>&1 | filecheck %s --strict-whitespace --match-full-lines
// RUN: xrelay-opt %s -p canonicalize-ops --required-pass CanonicalizeOps --pass-timing -o %t.mlir 2>&1 | filecheck %s --check-prefix=REQ --strict-whitespace --match-full-lines
// RUN: xrelay-opt %s --pass-timing -o %t.mlir 2>&1 | filecheck %s --check-prefix=NONE

// The TVM render: "name: total us [self us] (percent of all; percent of parent)", one tab per level.
// The pipeline's Sequential is the top-level line; FoldConstant runs InferType as a nested pass.

// CHECK:sequential: {{[0-9]+}}us [{{[0-9]+}}us] (100.00%; 100.00%)
// CHECK-NEXT:{{\t}}InferType: {{[0-9]+}}us [{{[0-9]+}}us] ({{[0-9]+\.[0-9][0-9]}}%; {{[0-9]+\.[0-9][0-9]}}%)
// CHECK-NEXT:{{\t}}FoldConstant: {{[0-9]+}}us [{{[0-9]+}}us] ({{[0-9]+\.[0-9][0-9]}}%; {{[0-9]+\.[0-9][0-9]}}%)
// CHECK-NEXT:{{\t\t}}InferType: {{[0-9]+}}us [{{[0-9]+}}us] ({{[0-9]+\.[0-9][0-9]}}%; {{[0-9]+\.[0-9][0-9]}}%)

// CanonicalizeOps (opt level 3) runs at the default level 2 because it is required; its own
// required InferType runs just before it, as a sibling.

// REQ:sequential: {{[0-9]+}}us [{{[0-9]+}}us] (100.00%; 100.00%)
// REQ-NEXT:{{\t}}InferType: {{.*}}
// REQ-NEXT:{{\t}}CanonicalizeOps: {{.*}}
// REQ-NEXT:{{\t\t}}InferType: {{.*}}

// NONE: Warning: no passes have been profiled, did you enable pass profiling?

func.func @main(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = nn.dense(%x, %w) : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %1 = nn.bias_add(%0, %b) {axis = -1 : i64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %1 : tensor<2x4xf32>
}
