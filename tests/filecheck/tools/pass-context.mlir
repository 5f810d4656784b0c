// CanonicalizeOps (bias_add -> add) has opt level 3: the PassContext's opt level, required and
// disabled passes decide whether the pipeline runs it.

// RUN: xrelay-opt %s -p canonicalize-ops | filecheck %s --check-prefix=SKIPPED
// RUN: xrelay-opt %s -p canonicalize-ops --opt-level 3 | filecheck %s --check-prefix=RAN
// RUN: xrelay-opt %s -p canonicalize-ops --opt-level 3 --disabled-pass CanonicalizeOps | filecheck %s --check-prefix=SKIPPED
// RUN: xrelay-opt %s -p canonicalize-ops --opt-level 3 --disabled-pass canonicalize-ops | filecheck %s --check-prefix=SKIPPED
// RUN: xrelay-opt %s -p canonicalize-ops --required-pass CanonicalizeOps | filecheck %s --check-prefix=RAN
// RUN: xrelay-opt %s -p canonicalize-ops --required-pass InferType,canonicalize-ops | filecheck %s --check-prefix=RAN
// RUN: not xrelay-opt %s -p canonicalize-ops --disabled-pass CanonicalizeOp 2>&1 | filecheck %s --check-prefix=TYPO

func.func @main(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = nn.dense(%x, %w) : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %1 = nn.bias_add(%0, %b) {axis = -1 : i64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %1 : tensor<2x4xf32>
}

// SKIPPED:     %1 = nn.bias_add(%0, %b) {axis = -1 : i64} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// SKIPPED-NOT: nn.add

// RAN-NOT: nn.bias_add
// RAN:     %1 = nn.add(%0, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// RAN-NOT: nn.bias_add

// TYPO: xrelay-opt: error: unknown pass 'CanonicalizeOp' in --disabled-pass (did you mean 'CanonicalizeOps'?)
