// RUN: xrelay-opt %s --split-input-file --verify-diagnostics | filecheck %s

// xdsl-opt's --verify-diagnostics: each chunk's verifier error is printed on stdout the way xdsl-opt
// prints it (the message, then the module with the op marked) and the exit status is 0.

func.func @good(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.relu(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK: func.func @good
// CHECK: {{//}} -----

// -----

func.func @broken(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %0 = nn.relu(%x) : (tensor<2x3xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// CHECK:      nn.relu: result types (tensor<2x4xf32>) differ from the inferred (tensor<2x3xf32>)
// CHECK:      "nn.relu"(%x) : (tensor<2x3xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: ^^^^^^^^^

// CHECK: {{//}} -----

// -----

func.func @broken_pool(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %0 = nn.max_pool2d(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %0 : tensor<1x4x8x8xf32>
}

// CHECK: nn.max_pool2d: result types (tensor<1x4x8x8xf32>) differ from the inferred (tensor<1x4x4x4xf32>)
