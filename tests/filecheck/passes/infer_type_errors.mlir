// RUN: not xrelay-opt %s --disable-verify -p infer-type 2>&1 | filecheck %s

// A function whose declared result type disagrees with what its body computes is an error.
func.func @wrong_result(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %p = nn.max_pool2d(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %p : tensor<1x2x4x4xf32>
}

// CHECK: error:
// CHECK-SAME: nn.max_pool2d
// CHECK-SAME: tensor<1x2x2x2xf32>
