// RUN: xrelay-opt %s --disable-verify -p infer-type | filecheck %s

// Stale stored types (the verifier is off) are recomputed from the operands, op by op:
// max_pool 2x2/2 halves H and W, relu keeps its operand's type.
func.func @refill(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %p = nn.max_pool2d(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %r = nn.relu(%p) : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  func.return %r : tensor<1x2x2x2xf32>
}

// CHECK-LABEL: func.func @refill(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
// CHECK-NEXT:    %p = nn.max_pool2d(%x) {pool_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    %r = nn.relu(%p) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    func.return %r : tensor<1x2x2x2xf32>
// CHECK-NEXT:  }
